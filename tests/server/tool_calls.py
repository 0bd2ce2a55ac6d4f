"""Each replica's calls as an agent makes them, for the server's bad-input tests: one
environment with every tool, and per tool how its credentials go in a request."""

from __future__ import annotations

from typing import Any

EVERY_TOOL_SCENE: dict[str, Any] = {
    "name": "bad-input",
    "world": {
        "slack": {
            "users": [{"ref": "laura", "name": "laura"}],
            "channels": [{"ref": "general", "name": "general", "members": ["laura", "slack_bot"]}],
            "messages": [{"ref": "question", "channel": "general", "from": "laura", "text": "Where is it?"},
                         {"ref": "answer", "channel": "general", "from": "laura", "text": "Found it",
                          "thread_of": "question"}],
        },
        "github": {}, "datadog": {}, "pagerduty": {}, "okta": {},
    },
}


def auth_headers(tool: str, credentials: dict[str, str]) -> dict[str, str]:
    """The headers an official SDK sends with this tool's credentials."""
    token = credentials["token"]
    if tool == "datadog":
        return {"dd-api-key": credentials["api_key"], "dd-application-key": credentials["app_key"]}
    if tool == "pagerduty":
        return {"authorization": f"Token token={token}", "from": credentials["from_email"]}
    if tool == "okta":
        return {"authorization": f"SSWS {token}"}
    if tool == "github":
        return {"authorization": f"token {token}"}
    return {"authorization": f"Bearer {token}"}


JSON_WRITES: dict[str, list[tuple[str, str]]] = {
    "slack": [("POST", "/api/chat.postMessage"), ("POST", "/api/chat.update"),
              ("POST", "/api/reactions.add"), ("POST", "/api/auth.test")],
    "github": [("POST", "/repos/acme/app/issues"), ("POST", "/graphql"), ("POST", "/user/repos")],
    "datadog": [("POST", "/api/v1/monitor"), ("POST", "/api/v2/logs/events/search"), ("POST", "/api/v1/events"),
                ("POST", "/api/v2/series")],
    "pagerduty": [("POST", "/incidents"), ("POST", "/v2/enqueue"), ("PUT", "/incidents")],
    "okta": [("POST", "/api/v1/users"), ("POST", "/api/v1/groups")],
}
"""Per tool, methods and paths that read a JSON body (the vendor's write calls)."""


def vendor_shaped(tool: str, body: Any) -> bool:
    """Whether an error body has the vendor's own shape."""
    if not isinstance(body, dict):
        return False
    if tool == "slack":
        return body.get("ok") is False and isinstance(body.get("error"), str)
    if tool == "github":
        return isinstance(body.get("message"), str) or isinstance(body.get("errors"), list)
    if tool == "datadog":
        return isinstance(body.get("errors"), list)
    if tool == "pagerduty":
        return isinstance(body.get("error"), dict) or isinstance(body.get("status"), str)
    return isinstance(body.get("errorCode"), str) and isinstance(body.get("errorSummary"), str)


SERVED_CALLS: dict[str, list[tuple[str, str]]] = {
    "slack": [("GET", "/api/conversations.history"), ("GET", "/api/conversations.replies"),
              ("GET", "/api/conversations.list"), ("GET", "/api/users.list"), ("POST", "/api/chat.postMessage"),
              ("POST", "/api/conversations.history"), ("GET", "/api/conversations.info"), ("POST", "/api/chat.update")],
    "github": [("GET", "/user"), ("GET", "/user/repos"), ("GET", "/search/issues"), ("GET", "/search/repositories"),
               ("POST", "/user/repos"), ("GET", "/repos/ancha-agent/app/issues/{id}"), ("POST", "/graphql"),
               ("GET", "/users/{id}/repos"), ("GET", "/repos/ancha-agent/app/pulls")],
    "datadog": [("GET", "/api/v1/monitor"), ("GET", "/api/v1/monitor/{id}"), ("GET", "/api/v2/logs/events"),
                ("POST", "/api/v2/logs/events/search"), ("GET", "/api/v1/events"), ("GET", "/api/v1/events/{id}"),
                ("GET", "/api/v1/query"), ("POST", "/api/v1/monitor")],
    "pagerduty": [("GET", "/incidents"), ("GET", "/incidents/{id}"), ("GET", "/services"), ("GET", "/users"),
                  ("GET", "/oncalls"), ("GET", "/log_entries"), ("POST", "/incidents"), ("POST", "/v2/enqueue")],
    "okta": [("GET", "/api/v1/users"), ("GET", "/api/v1/users/{id}"), ("GET", "/api/v1/groups"),
             ("GET", "/api/v1/logs"), ("POST", "/api/v1/users"), ("POST", "/api/v1/groups")],
}
"""Per tool, calls the replica serves, some with an id in the path (``{id}``)."""

QUERY_NAMES = ["cursor", "limit", "channel", "ts", "oldest", "latest", "inclusive", "page", "per_page", "q", "sort",
               "order", "after", "before", "since", "until", "from", "to", "query", "filter", "search", "offset",
               "total", "page[cursor]", "page[limit]", "filter[query]", "filter[from]", "start", "end",
               "monitor_tags", "group_states", "statuses[]", "include[]", "time_zone", "state", "type", "id"]
"""Query parameters the five vendors read, given to every call."""
