"""With ``agent.hostnames: real`` the agent reaches PagerDuty's replica through
``api.pagerduty.com`` (REST) and ``events.pagerduty.com`` (Events API v2): every ``self``,
``html_url`` and avatar in an answer is on ``api.pagerduty.com``, never the replica's Ancha
address, and leads back to the replica through ``real_hosts``.

These drive an ``Environment`` in-process, with the headers the server's interceptor sets."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

from pagerduty_support import build_env, routing_key

from ancha.world.environment import Environment
from ancha.world.kernel.hostnames import REAL_BASE, REAL_HOST
from ancha.world.kernel.tool import ToolRequest, ToolResponse
from ancha.world.tools.pagerduty.spec import TOOL


def _follow(env: Environment, method: str, url: str, body: Any = None) -> ToolResponse:
    """Send ``url`` (on one of PagerDuty's hosts) to the replica as the interceptor would."""
    replica: Any = env.tools["pagerduty"]
    parts = urlsplit(url)
    assert TOOL.real_hosts is not None
    route = TOOL.real_hosts(replica)[parts.hostname or ""]
    headers = {"host": parts.netloc, REAL_BASE: route.base, REAL_HOST: parts.hostname or "",
               "x-forwarded-proto": "https", "authorization": f"Token token={replica.token}",
               "from": "ancha-agent@acme.test", "content-type": "application/json"}
    raw = json.dumps(body).encode() if body is not None else b""
    return env.dispatch("pagerduty", ToolRequest(method, route.tool_path(parts.path or "/"), parts.query, headers, raw))


def _urls(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for item in value.values():
            yield from _urls(item)
    elif isinstance(value, list):
        for item in value:
            yield from _urls(item)
    elif isinstance(value, str) and value.startswith(("http://", "https://")):
        yield value


def test_real_hostnames__events_api_on_events_pagerduty_com_opens_an_incident():
    env = build_env()
    for path in ("/v2/enqueue", "/v2/change/enqueue"):
        event: dict[str, Any] = {"routing_key": routing_key(env), "payload": {
            "summary": "orders p99 over 2s", "source": "web-1", "severity": "critical"}}
        if path == "/v2/enqueue":
            event["event_action"] = "trigger"
        answer = _follow(env, "POST", f"https://events.pagerduty.com{path}", event)
        assert answer.status == 202, (path, answer.body)
    incidents = json.loads(_follow(env, "GET", "https://api.pagerduty.com/incidents?statuses%5B%5D=triggered").body)
    assert any(i["title"] == "orders p99 over 2s" for i in incidents["incidents"])


def test_real_hostnames__every_link_is_on_api_pagerduty_com_and_leads_back():
    env = build_env()
    answers = [json.loads(_follow(env, "GET", f"https://api.pagerduty.com/{path}").body)
               for path in ("incidents", "services", "users", "escalation_policies", "schedules", "users/me")]
    incident = json.loads(_follow(env, "GET", "https://api.pagerduty.com/incidents").body)["incidents"][0]
    answers.append(json.loads(_follow(env, "GET", f"https://api.pagerduty.com/incidents/{incident['id']}/log_entries").body))
    urls = {url for answer in answers for url in _urls(answer)}
    assert len(urls) > 10
    assert all(url.startswith("https://api.pagerduty.com/") and "/envs/" not in url for url in urls), sorted(urls)
    for url in urls:
        assert _follow(env, "GET", url).status == 200, url


def test_real_hostnames__ancha_address_keeps_links_below_the_replica():
    env = build_env()
    replica: Any = env.tools["pagerduty"]
    headers = {"host": "127.0.0.1:8765", "x-forwarded-proto": "https",
               "authorization": f"Token token={replica.token}"}
    answer = env.dispatch("pagerduty", ToolRequest("GET", "/services", "", headers))
    service = json.loads(answer.body)["services"][0]
    assert service["self"].startswith("https://127.0.0.1:8765/envs/env-pd/pagerduty/services/")
