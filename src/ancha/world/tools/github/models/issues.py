"""Issues and what hangs off them: labels, milestones, comments, issue events.

A pull request's conversation is an ``Issue`` whose ``pull`` is set; it shares the
repository's number space, labels, assignees, milestone and comments with the pull,
and the Issues API lists it with a ``pull_request`` key, exactly as GitHub does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from ancha.world.tools.github.models.users import Account, User
from ancha.world.tools.github.models.wire import HTML, JSONDict, iso, node_id

if TYPE_CHECKING:
    from ancha.world.tools.github.models.pulls import Pull
    from ancha.world.tools.github.models.repos import Repo

REACTIONS = ("+1", "-1", "laugh", "hooray", "confused", "heart", "rocket", "eyes")


def reactions(url: str) -> JSONDict:
    return {"url": f"{url}/reactions", "total_count": 0, **dict.fromkeys(REACTIONS, 0)}


class Label:
    def __init__(self, repo: Repo, id: int, name: str, color: str = "ededed", description: str | None = None,
                 default: bool = False) -> None:
        self.repo = repo
        self.id = id
        self.node_id = node_id("Label", id)
        self.name = name
        self.color = color.lower().lstrip("#")
        self.description = description
        self.default = default

    def to_dict(self, base: str) -> JSONDict:
        return {"id": self.id, "node_id": self.node_id,
                "url": f"{base}/repos/{self.repo.full_name}/labels/{_quote(self.name)}", "name": self.name,
                "color": self.color, "default": self.default, "description": self.description,
                # API version 2026-03-10 added these; earlier versions' clients ignore them.
                "archived_at": None, "archived_by": None}


class Milestone:
    def __init__(self, repo: Repo, id: int, number: int, title: str, creator: Account, *,
                 description: str | None = None, state: str = "open", due_on: float | None = None,
                 created_at: float = 0.0) -> None:
        self.repo = repo
        self.id = id
        self.node_id = node_id("Milestone", id)
        self.number = number
        self.title = title
        self.creator = creator
        self.description = description
        self.state = state
        self.due_on = due_on
        self.created_at = created_at
        self.updated_at = created_at
        self.closed_at: float | None = created_at if state == "closed" else None

    def counts(self) -> tuple[int, int]:
        issues = [i for i in self.repo.issues.values() if i.milestone is self]
        open_count = sum(1 for i in issues if i.state == "open")
        return open_count, len(issues) - open_count

    def to_dict(self, base: str) -> JSONDict:
        u = f"{base}/repos/{self.repo.full_name}/milestones/{self.number}"
        open_count, closed_count = self.counts()
        return {"url": u, "html_url": f"{HTML}/{self.repo.full_name}/milestone/{self.number}",
                "labels_url": f"{u}/labels", "id": self.id, "node_id": self.node_id, "number": self.number,
                "title": self.title, "description": self.description, "creator": self.creator.simple(base),
                "open_issues": open_count, "closed_issues": closed_count, "state": self.state,
                "created_at": iso(self.created_at), "updated_at": iso(self.updated_at),
                "due_on": iso(self.due_on), "closed_at": iso(self.closed_at)}


class IssueComment:
    def __init__(self, issue: Issue, id: int, user: Account, body: str, created_at: float, *,
                 seeded: bool = False, actor: str = "agent") -> None:
        self.issue = issue
        self.id = id
        self.node_id = node_id("IssueComment", id)
        self.user = user
        self.body = body
        self.created_at = created_at
        self.updated_at = created_at
        self.seeded = seeded
        self.actor = actor
        """The trace actor who wrote it: ``agent``, ``person:NAME``, ``world`` (``seed`` when seeded)."""

    def to_dict(self, base: str) -> JSONDict:
        repo = self.issue.repo
        u = f"{base}/repos/{repo.full_name}/issues/comments/{self.id}"
        kind = "pull" if self.issue.pull is not None else "issues"
        return {"url": u, "html_url": f"{HTML}/{repo.full_name}/{kind}/{self.issue.number}#issuecomment-{self.id}",
                "issue_url": f"{base}/repos/{repo.full_name}/issues/{self.issue.number}", "id": self.id,
                "node_id": self.node_id, "user": self.user.simple(base), "created_at": iso(self.created_at),
                "updated_at": iso(self.updated_at), "body": self.body,
                "author_association": repo.association(self.user), "reactions": reactions(u),
                "performed_via_github_app": None}


class IssueEvent:
    """One entry of an issue's event log (closed, labeled, assigned, renamed, ...)."""

    def __init__(self, issue: Issue, id: int, event: str, actor: Account, created_at: float,
                 **fields: Any) -> None:
        self.issue = issue
        self.id = id
        self.node_id = node_id("IssueEvent", id)
        self.event = event
        self.actor = actor
        self.created_at = created_at
        self.fields = fields
        """Event-specific: ``label`` (Label), ``assignee``/``assigner`` (Account), ``milestone``
        (title), ``rename`` ({from, to}), ``lock_reason``, ``commit_id``, ``state_reason``."""

    def to_dict(self, base: str, *, with_issue: bool = False) -> JSONDict:
        repo = self.issue.repo
        commit = self.fields.get("commit_id")
        body: JSONDict = {
            "id": self.id, "node_id": self.node_id, "url": f"{base}/repos/{repo.full_name}/issues/events/{self.id}",
            "actor": self.actor.simple(base), "event": self.event, "commit_id": commit,
            "commit_url": f"{base}/repos/{repo.full_name}/commits/{commit}" if commit else None,
            "created_at": iso(self.created_at), "performed_via_github_app": None,
        }
        for key, value in self.fields.items():
            if key == "commit_id":
                continue
            if isinstance(value, Label):
                body[key] = {"name": value.name, "color": value.color}
            elif isinstance(value, Account):
                body[key] = value.simple(base)
            elif key == "milestone":
                body[key] = {"title": value}
            else:
                body[key] = value
        if with_issue:
            body["issue"] = self.issue.to_dict(base)
        return body


class Issue:
    """An issue, or the conversation side of a pull request (``pull`` set)."""

    def __init__(self, repo: Repo, id: int, number: int, title: str, user: Account, created_at: float, *,
                 body: str | None = None, ref: str | None = None, seeded: bool = False,
                 actor: str = "agent") -> None:
        self.repo = repo
        self.id = id
        self.node_id = node_id("Issue", id)
        self.number = number
        self.title = title
        self.body = body
        self.user = user
        self.labels: list[Label] = []
        self.assignees: list[Account] = []
        self.milestone: Milestone | None = None
        self.state = "open"
        self.state_reason: str | None = None
        self.locked = False
        self.active_lock_reason: str | None = None
        self.comments: list[IssueComment] = []
        self.events: list[IssueEvent] = []
        self.created_at = created_at
        self.updated_at = created_at
        self.closed_at: float | None = None
        self.closed_by: Account | None = None
        self.pull: Pull | None = None
        self.ref = ref
        self.seeded = seeded
        self.actor = actor
        """The trace actor who opened it (``seed`` for seeded issues)."""

    @property
    def is_pull(self) -> bool:
        return self.pull is not None

    def label_names(self) -> list[str]:
        return [label.name for label in self.labels]

    def to_dict(self, base: str, *, single: bool = False) -> JSONDict:
        """``issue`` shape; ``single`` adds what only ``GET .../issues/{n}`` carries (``closed_by``)."""
        repo = self.repo
        r = f"{base}/repos/{repo.full_name}"
        u = f"{r}/issues/{self.number}"
        kind = "pull" if self.pull is not None else "issues"
        body: JSONDict = {
            "url": u, "repository_url": r, "labels_url": f"{u}/labels{{/name}}", "comments_url": f"{u}/comments",
            "events_url": f"{u}/events", "html_url": f"{HTML}/{repo.full_name}/{kind}/{self.number}",
            "id": self.id, "node_id": self.node_id, "number": self.number, "title": self.title,
            "user": self.user.simple(base), "labels": [label.to_dict(base) for label in self.labels],
            "state": self.state, "locked": self.locked,
            "assignee": self.assignees[0].simple(base) if self.assignees else None,
            "assignees": [a.simple(base) for a in self.assignees],
            "milestone": self.milestone.to_dict(base) if self.milestone is not None else None,
            "comments": len(self.comments), "created_at": iso(self.created_at),
            "updated_at": iso(self.updated_at), "closed_at": iso(self.closed_at),
            "author_association": repo.association(self.user), "type": None,
            "active_lock_reason": self.active_lock_reason, "sub_issues_summary": {
                "total": 0, "completed": 0, "percent_completed": 0},
            "body": self.body, "reactions": reactions(u), "timeline_url": f"{u}/timeline",
            "performed_via_github_app": None, "state_reason": self.state_reason,
        }
        if self.pull is not None:
            p = f"{HTML}/{repo.full_name}/pull/{self.number}"
            body["draft"] = self.pull.draft
            body["pull_request"] = {"url": f"{r}/pulls/{self.number}", "html_url": p, "diff_url": f"{p}.diff",
                                    "patch_url": f"{p}.patch", "merged_at": iso(self.pull.merged_at)}
        if single:
            body["closed_by"] = self.closed_by.simple(base) if self.closed_by is not None else None
        return body

    def mentions(self, login: str) -> bool:
        needle = "@" + login.lower()
        texts = [self.body or "", *(c.body for c in self.comments)]
        return any(needle in text.lower() for text in texts)

    def involves(self, user: User) -> bool:
        return (self.user.key == user.key or any(a.key == user.key for a in self.assignees)
                or self.mentions(user.login) or any(c.user.key == user.key for c in self.comments))


def _quote(name: str) -> str:
    return quote(name, safe="")
