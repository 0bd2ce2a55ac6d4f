"""Filtering and ordering of issue and pull-request lists as GraphQL arguments ask."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from ancha.world.tools.github.graphql.errors import InvalidArgument, NotImplementedHere
from ancha.world.tools.github.models import Issue, Pull


def parse_time(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        raise InvalidArgument(f"'{value}' is not a valid DateTime") from None


def issue_state(issue: Issue) -> str:
    return "OPEN" if issue.state == "open" else "CLOSED"


def pull_state(pull: Pull) -> str:
    if pull.merged:
        return "MERGED"
    return "OPEN" if pull.issue.state == "open" else "CLOSED"


def _has_label(issue: Issue, names: Sequence[str]) -> bool:
    wanted = {n.lower() for n in names}
    return any(label.name.lower() in wanted for label in issue.labels)


def filter_issues(issues: list[Issue], *, states: list[str] | None, labels: list[str] | None,
                  filter_by: dict[str, Any] | None) -> list[Issue]:
    """``Repository.issues``' ``states``, ``labels`` (any of) and ``filterBy`` (``IssueFilters``)."""
    out = [i for i in issues if (not states or issue_state(i) in states) and (not labels or _has_label(i, labels))]
    if not filter_by:
        return out
    if filter_by.get("viewerSubscribed"):
        raise NotImplementedHere("Argument 'filterBy.viewerSubscribed' of 'Repository.issues' is not "
                                 "implemented by this replica")
    if filter_by.get("states"):
        out = [i for i in out if issue_state(i) in filter_by["states"]]
    if filter_by.get("labels"):
        out = [i for i in out if _has_label(i, filter_by["labels"])]
    assignee = filter_by.get("assignee")
    if assignee == "*":
        out = [i for i in out if i.assignees]
    elif assignee:
        out = [i for i in out if any(a.key == assignee.lower() for a in i.assignees)]
    created_by = filter_by.get("createdBy")
    if created_by:
        out = [i for i in out if i.user.key == created_by.lower()]
    mentioned = filter_by.get("mentioned")
    if mentioned:
        out = [i for i in out if i.mentions(mentioned)]
    milestone = filter_by.get("milestoneNumber") or filter_by.get("milestone")
    if milestone == "*":
        out = [i for i in out if i.milestone is not None]
    elif milestone == "none":
        out = [i for i in out if i.milestone is None]
    elif milestone:
        out = [i for i in out if i.milestone is not None and str(i.milestone.number) == milestone]
    since = parse_time(filter_by.get("since"))
    if since is not None:
        out = [i for i in out if i.updated_at >= since]
    return out


def order_issues(issues: list[Any], order_by: dict[str, Any] | None, conversation: Any = None) -> list[Any]:
    """``IssueOrder``: CREATED_AT, UPDATED_AT or COMMENTS; creation order when absent."""

    def issue(item: Any) -> Issue:
        return item.issue if isinstance(item, Pull) else item

    if not order_by:
        return sorted(issues, key=lambda i: issue(i).number)
    field = order_by.get("field")
    keys = {"CREATED_AT": lambda i: (issue(i).created_at, issue(i).number),
            "UPDATED_AT": lambda i: (issue(i).updated_at, issue(i).number),
            "COMMENTS": lambda i: (len(issue(i).comments), issue(i).number)}
    key = keys.get(field or "", keys["CREATED_AT"])
    return sorted(issues, key=key, reverse=order_by.get("direction") == "DESC")
