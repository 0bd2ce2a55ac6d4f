"""Issues and what hangs off them: labels, milestones, comments, issue events.

A pull request's conversation is an ``Issue`` whose ``pull`` is set; it shares the
repository's number space, labels, assignees, milestone and comments with the pull,
and the Issues API lists it with a ``pull_request`` key, exactly as GitHub does.

Issues and comments keep their wire JSON (``wire(base)``), so a page of 100 is a join of
cached text rather than 100 dicts built and encoded. A cached text is kept with a
*stamp*, a tuple of everything the JSON shows that can change (own fields, the author's
login, labels' and the milestone's ``revision``, the milestone's counts, the repository's
name, ``author_association``, the ``reactions`` counts of ``models.reactions``), taken
afresh on each read: a write anywhere (a route, a GraphQL mutation, a scene action) can
never leave a stale answer, and there is no ``touch()`` to forget. Labels and milestones count their own ``revision`` on every
attribute set; an issue's ``state`` and ``milestone`` setters bump the milestones whose
counts they change.
"""

from __future__ import annotations

from itertools import count
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from ancha.world.tools.github.models.reactions import ROLLUP, counts, rollup
from ancha.world.tools.github.models.users import Account, User
from ancha.world.tools.github.models.wire import JSONDict, RawJSON, dumps, iso, node_id, web_url

if TYPE_CHECKING:
    from ancha.world.tools.github.models.pulls import Pull
    from ancha.world.tools.github.models.repos import Repo

REACTIONS = ROLLUP
"""The contents of a ``reactions`` rollup, in GitHub's order (``models.reactions.ROLLUP``)."""


_REVISIONS = count(1)
"""Process-wide, so a revision never repeats (not even for a new object at a freed address)."""
_BASES_KEPT = 4
"""Wire texts kept per object: one per base URL and shape; more bases than this start afresh."""


class Revised:
    """An object whose ``revision`` changes on every attribute set (what caches of its wire form check)."""

    revision: int

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)
        object.__setattr__(self, "revision", next(_REVISIONS))

    def changed(self) -> None:
        """Count a change the attributes do not show (a milestone's issue counts)."""
        object.__setattr__(self, "revision", next(_REVISIONS))


class Label(Revised):
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


class Milestone(Revised):
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
        self._counts: tuple[int, int, int, int] = (-1, -1, 0, 0)
        """(revision, issues in the repository, open, closed) when last counted."""

    def counts(self) -> tuple[int, int]:
        """(open, closed) issues in this milestone; counted afresh only after a change that can move them."""
        revision, stored, open_count, closed_count = self._counts
        if revision != self.revision or stored != len(self.repo.issues):
            issues = [i for i in self.repo.issues.values() if i.milestone is self]
            open_count = sum(1 for i in issues if i.state == "open")
            closed_count = len(issues) - open_count
            object.__setattr__(self, "_counts", (self.revision, len(self.repo.issues), open_count, closed_count))
        return open_count, closed_count

    def stamp(self) -> tuple[Any, ...]:
        return self.revision, self.creator.login, self.counts()

    def to_dict(self, base: str) -> JSONDict:
        u = f"{base}/repos/{self.repo.full_name}/milestones/{self.number}"
        open_count, closed_count = self.counts()
        return {"url": u, "html_url": f"{web_url(base)}/{self.repo.full_name}/milestone/{self.number}",
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
        self._wire: dict[str, tuple[tuple[Any, ...], RawJSON]] = {}

    def wire(self, base: str) -> RawJSON:
        """``to_dict(base)`` as JSON text, kept while nothing it shows changes."""
        issue = self.issue
        repo = issue.repo
        stamp = (self.body, self.updated_at, self.created_at, self.user.login, repo.owner.login, repo.name,
                 repo.association(self.user), issue.number, issue.pull is None,
                 counts(repo, ("issue_comment", self.id)))
        kept = self._wire.get(base)
        if kept is not None and kept[0] == stamp:
            return kept[1]
        text = RawJSON(dumps(self.to_dict(base)))
        if len(self._wire) >= _BASES_KEPT:
            self._wire.clear()
        self._wire[base] = (stamp, text)
        return text

    def to_dict(self, base: str) -> JSONDict:
        repo = self.issue.repo
        u = f"{base}/repos/{repo.full_name}/issues/comments/{self.id}"
        kind = "pull" if self.issue.pull is not None else "issues"
        return {"url": u, "html_url": f"{web_url(base)}/{repo.full_name}/{kind}/{self.issue.number}#issuecomment-{self.id}",
                "issue_url": f"{base}/repos/{repo.full_name}/issues/{self.issue.number}", "id": self.id,
                "node_id": self.node_id, "user": self.user.simple(base), "created_at": iso(self.created_at),
                "updated_at": iso(self.updated_at), "body": self.body,
                "author_association": repo.association(self.user),
                "reactions": rollup(repo, ("issue_comment", self.id), u),
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
        self._milestone: Milestone | None = None
        self._state = "open"
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
        self._wire: dict[tuple[str, bool], tuple[tuple[Any, ...], RawJSON]] = {}

    @property
    def state(self) -> str:
        """``open`` or ``closed``."""
        return self._state

    @state.setter
    def state(self, value: str) -> None:
        if value != self._state:
            if self._milestone is not None:
                self._milestone.changed()  # its open/closed counts move
            self.repo.extra.pop(_BY_CREATED, None)
        self._state = value

    @property
    def milestone(self) -> Milestone | None:
        return self._milestone

    @milestone.setter
    def milestone(self, value: Milestone | None) -> None:
        if value is not self._milestone:
            for moved in (self._milestone, value):
                if moved is not None:
                    moved.changed()
        self._milestone = value

    def wire(self, base: str, *, single: bool = False) -> RawJSON:
        """``to_dict(base, single=...)`` as JSON text, kept while nothing it shows changes."""
        stamp = self._stamp(single)
        kept = self._wire.get((base, single))
        if kept is not None and kept[0] == stamp:
            return kept[1]
        text = RawJSON(dumps(self.to_dict(base, single=single)))
        if len(self._wire) >= _BASES_KEPT:
            self._wire.clear()
        self._wire[(base, single)] = (stamp, text)
        return text

    def _stamp(self, single: bool) -> tuple[Any, ...]:
        """Everything ``to_dict`` shows that can change (ids, numbers and node ids cannot)."""
        repo, user, milestone, pull = self.repo, self.user, self._milestone, self.pull
        return (self.title, self.body, self._state, self.state_reason, self.locked, self.active_lock_reason,
                self.created_at, self.updated_at, self.closed_at, len(self.comments), user.login,
                repo.owner.login, repo.name, repo.association(user),
                tuple([label.revision for label in self.labels]), tuple([a.login for a in self.assignees]),
                milestone.stamp() if milestone is not None else None,
                (pull.draft, pull.merged_at) if pull is not None else None, counts(repo, ("issue", self.id)),
                (self.closed_by.login if self.closed_by is not None else None) if single else None)

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
            "events_url": f"{u}/events", "html_url": f"{web_url(base)}/{repo.full_name}/{kind}/{self.number}",
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
            "body": self.body, "reactions": rollup(repo, ("issue", self.id), u), "timeline_url": f"{u}/timeline",
            "performed_via_github_app": None, "state_reason": self.state_reason,
        }
        if self.pull is not None:
            p = f"{web_url(base)}/{repo.full_name}/pull/{self.number}"
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


_BY_CREATED = "issues.by_created"


class _ByCreated:
    """A repository's issues per (state, descending) sorted by creation time, for the list routes' default
    order. Valid while the stored issues are the same ones (count and newest number) and no state changed
    (``Issue.state`` drops it); an issue's ``created_at`` never changes once it is stored."""

    def __init__(self, signature: tuple[int, int | None]) -> None:
        self.signature = signature
        self.lists: dict[tuple[str, bool], list[Issue]] = {}


def by_created(repo: Repo, state: str, descending: bool) -> list[Issue]:
    """``sorted`` of the repository's issues in ``state`` (``all`` for any) by ``created_at``, as the
    filter-then-sort of a list route gives them, at O(1) while nothing moved. Shared: do not change it."""
    issues = repo.issues
    signature = (len(issues), next(reversed(issues), None))
    index = repo.extra.get(_BY_CREATED)
    if not isinstance(index, _ByCreated) or index.signature != signature:
        index = repo.extra[_BY_CREATED] = _ByCreated(signature)
    found = index.lists.get((state, descending))
    if found is None:
        picked = [i for i in issues.values() if state == "all" or i.state == state]
        found = index.lists[(state, descending)] = sorted(picked, key=_created, reverse=descending)
    return found


def _created(issue: Issue) -> float:
    return issue.created_at


def _quote(name: str) -> str:
    return quote(name, safe="")
