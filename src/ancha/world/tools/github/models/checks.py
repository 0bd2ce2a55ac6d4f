"""Commit statuses (``POST /statuses/{sha}``) and check runs (the Checks API)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ancha.world.tools.github.models.users import Account
from ancha.world.tools.github.models.wire import JSONDict, avatar_url, iso, node_id, web_url

if TYPE_CHECKING:
    from ancha.world.tools.github.models.repos import Repo

STATUS_STATES = ("error", "failure", "pending", "success")
CHECK_STATUSES = ("queued", "in_progress", "completed", "waiting", "requested", "pending")
CHECK_CONCLUSIONS = ("action_required", "cancelled", "failure", "neutral", "success", "skipped", "stale",
                     "timed_out")


class CommitStatus:
    def __init__(self, repo: Repo, id: int, sha: str, state: str, creator: Account, created_at: float, *,
                 context: str = "default", description: str | None = None, target_url: str | None = None) -> None:
        self.repo = repo
        self.id = id
        self.node_id = node_id("StatusContext", id)
        self.sha = sha
        self.state = state
        self.creator = creator
        self.context = context
        self.description = description
        self.target_url = target_url
        self.created_at = created_at
        self.updated_at = created_at

    def to_dict(self, base: str) -> JSONDict:
        return {"url": f"{base}/repos/{self.repo.full_name}/statuses/{self.sha}",
                "avatar_url": avatar_url(base, self.creator.id), "id": self.id, "node_id": self.node_id,
                "state": self.state, "description": self.description, "target_url": self.target_url,
                "context": self.context, "created_at": iso(self.created_at), "updated_at": iso(self.updated_at),
                "creator": self.creator.simple(base)}


def combined_state(statuses: list[CommitStatus]) -> str:
    """GitHub's combined state of the latest status per context."""
    latest: dict[str, CommitStatus] = {}
    for status in statuses:
        latest[status.context] = status
    states = {s.state for s in latest.values()}
    if not states:
        return "pending"
    if states & {"error", "failure"}:
        return "failure"
    return "pending" if "pending" in states else "success"


class CheckRun:
    def __init__(self, repo: Repo, id: int, name: str, head_sha: str, created_at: float, *,
                 status: str = "queued", conclusion: str | None = None, details_url: str | None = None,
                 external_id: str = "", output: dict[str, Any] | None = None, suite_id: int = 0,
                 app: dict[str, Any] | None = None) -> None:
        self.repo = repo
        self.id = id
        self.node_id = node_id("CheckRun", id)
        self.name = name
        self.head_sha = head_sha
        self.status = "completed" if conclusion else status
        self.conclusion = conclusion
        self.details_url = details_url
        self.external_id = external_id
        self.output = output or {}
        self.suite_id = suite_id or id
        self.app = app
        self.started_at = created_at
        self.completed_at: float | None = created_at if self.status == "completed" else None

    def to_dict(self, base: str) -> JSONDict:
        u = f"{base}/repos/{self.repo.full_name}/check-runs/{self.id}"
        out = self.output
        return {"id": self.id, "head_sha": self.head_sha, "node_id": self.node_id, "external_id": self.external_id,
                "url": u, "html_url": f"{web_url(base)}/{self.repo.full_name}/runs/{self.id}",
                "details_url": self.details_url, "status": self.status, "conclusion": self.conclusion,
                "started_at": iso(self.started_at), "completed_at": iso(self.completed_at),
                "output": {"title": out.get("title"), "summary": out.get("summary"), "text": out.get("text"),
                           "annotations_count": len(out.get("annotations") or []),
                           "annotations_url": f"{u}/annotations"},
                "name": self.name, "check_suite": {"id": self.suite_id}, "app": self.app, "pull_requests": []}
