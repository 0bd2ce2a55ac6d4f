"""Issue events and the timeline."""

from __future__ import annotations

from typing import Any

from ancha.world.tools.github import errors
from ancha.world.tools.github.call import Call
from ancha.world.tools.github.router import route


@route("GET", "/repos/{owner}/{repo}/issues/{issue_number}/events")
def issues_list_events(call: Call) -> list[dict[str, Any]]:
    repo = call.repo()
    issue = call.issue(repo)
    return [e.to_dict(call.base) for e in call.page(issue.events)]


@route("GET", "/repos/{owner}/{repo}/issues/events")
def issues_list_events_for_repo(call: Call) -> list[dict[str, Any]]:
    repo = call.repo()
    newest = list(reversed(repo.events))
    return [e.to_dict(call.base, with_issue=True) for e in call.page(newest)]


@route("GET", "/repos/{owner}/{repo}/issues/events/{event_id}")
def issues_get_event(call: Call) -> dict[str, Any]:
    repo = call.repo()
    wanted = call.number("event_id")
    for event in repo.events:
        if event.id == wanted:
            return event.to_dict(call.base, with_issue=True)
    raise errors.NotFound()


@route("GET", "/repos/{owner}/{repo}/issues/{issue_number}/timeline",
       partial="comments and issue events only (no cross-references, commits or reviews)")
def issues_list_events_for_timeline(call: Call) -> list[dict[str, Any]]:
    repo = call.repo()
    issue = call.issue(repo)
    items: list[tuple[float, int, dict[str, Any]]] = []
    for event in issue.events:
        items.append((event.created_at, event.id, event.to_dict(call.base)))
    for comment in issue.comments:
        body = comment.to_dict(call.base)
        items.append((comment.created_at, comment.id, {"event": "commented", "actor": body["user"], **body}))
    items.sort(key=lambda item: (item[0], item[1]))
    return [body for _, _, body in call.page(items)]
