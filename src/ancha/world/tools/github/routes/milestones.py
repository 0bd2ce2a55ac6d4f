"""Milestones of a repository."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ancha.world.tools.github import errors
from ancha.world.tools.github.call import Call, Reply, created, no_content
from ancha.world.tools.github.models import Milestone, Repo
from ancha.world.tools.github.router import route


def _milestone(call: Call, repo: Repo) -> Milestone:
    milestone = repo.milestones.get(call.number("milestone_number"))
    if milestone is None:
        raise errors.NotFound()
    return milestone


def _due_on(call: Call) -> float | None:
    value = call.field_str("due_on")
    if value is None:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        raise errors.invalid_field("Milestone", "due_on", value) from None


def _state(call: Call) -> str | None:
    state = call.field_str("state", allow_none=False)
    if state is not None and state not in ("open", "closed"):
        raise errors.invalid_field("Milestone", "state", state)
    return state


@route("GET", "/repos/{owner}/{repo}/milestones")
def issues_list_milestones(call: Call) -> list[dict[str, Any]]:
    repo = call.repo()
    state = call.q_enum("state", ("open", "closed", "all"), "open")
    sort = call.q_enum("sort", ("due_on", "completeness"), "due_on")
    direction = call.q_enum("direction", ("asc", "desc"), "asc")
    found = [m for m in repo.milestones.values() if state == "all" or m.state == state]

    def key(m: Milestone) -> tuple[int, float]:
        if sort == "completeness":
            open_count, closed = m.counts()
            return (0, closed / (open_count + closed) if open_count + closed else 0.0)
        return (1 if m.due_on is None else 0, m.due_on or 0.0)

    found.sort(key=key, reverse=direction == "desc")
    return [m.to_dict(call.base) for m in call.page(found)]


@route("POST", "/repos/{owner}/{repo}/milestones")
def issues_create_milestone(call: Call) -> Reply:
    repo = call.repo(need="write")
    title = (call.field_str("title", resource="Milestone", required=True) or "").strip()
    if not title:
        raise errors.missing_field("Milestone", "title")
    if any(m.title == title for m in repo.milestones.values()):
        raise errors.already_exists("Milestone", "title")
    number = repo.next_milestone
    repo.next_milestone += 1
    milestone = Milestone(repo, call.state.ids.next("milestone"), number, title, call.user,
                          description=call.field_str("description"), state=_state(call) or "open",
                          due_on=_due_on(call), created_at=call.now())
    repo.milestones[number] = milestone
    call.replica.publish("milestone_created", repo, call.user, call.actor, milestone=number, title=title)
    body = milestone.to_dict(call.base)
    return created(body, body["url"])


@route("GET", "/repos/{owner}/{repo}/milestones/{milestone_number}")
def issues_get_milestone(call: Call) -> dict[str, Any]:
    return _milestone(call, call.repo()).to_dict(call.base)


@route("PATCH", "/repos/{owner}/{repo}/milestones/{milestone_number}")
def issues_update_milestone(call: Call) -> dict[str, Any]:
    repo = call.repo(need="write")
    milestone = _milestone(call, repo)
    title = call.field_str("title", allow_none=False)
    if title is not None and title.strip():
        milestone.title = title.strip()
    if "description" in call.body:
        milestone.description = call.field_str("description")
    if "due_on" in call.body:
        milestone.due_on = _due_on(call)
    state = _state(call)
    now = call.now()
    if state is not None and state != milestone.state:
        milestone.state = state
        milestone.closed_at = now if state == "closed" else None
    milestone.updated_at = now
    return milestone.to_dict(call.base)


@route("DELETE", "/repos/{owner}/{repo}/milestones/{milestone_number}")
def issues_delete_milestone(call: Call) -> Reply:
    repo = call.repo(need="write")
    milestone = _milestone(call, repo)
    del repo.milestones[milestone.number]
    for issue in repo.issues.values():
        if issue.milestone is milestone:
            issue.milestone = None
    return no_content()


@route("GET", "/repos/{owner}/{repo}/milestones/{milestone_number}/labels")
def issues_list_labels_for_milestone(call: Call) -> list[dict[str, Any]]:
    repo = call.repo()
    milestone = _milestone(call, repo)
    seen: dict[int, Any] = {}
    for issue in repo.issues.values():
        if issue.milestone is milestone:
            for label in issue.labels:
                seen.setdefault(label.id, label)
    return [label.to_dict(call.base) for label in call.page(list(seen.values()))]
