"""Deployments and their statuses (what runs where: ``production`` follows them)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ancha.world.tools.github.models.users import Account
from ancha.world.tools.github.models.wire import JSONDict, iso, node_id

if TYPE_CHECKING:
    from ancha.world.tools.github.models.repos import Repo

DEPLOYMENT_STATES = ("error", "failure", "inactive", "in_progress", "queued", "pending", "success")


class DeploymentStatus:
    def __init__(self, deployment: Deployment, id: int, state: str, creator: Account, created_at: float, *,
                 description: str = "", environment: str | None = None, target_url: str = "",
                 log_url: str = "", environment_url: str = "") -> None:
        self.deployment = deployment
        self.id = id
        self.node_id = node_id("DeploymentStatus", id)
        self.state = state
        self.creator = creator
        self.description = description
        self.environment = environment or deployment.environment
        self.target_url = target_url
        self.log_url = log_url or target_url
        self.environment_url = environment_url
        self.created_at = created_at

    def to_dict(self, base: str) -> JSONDict:
        repo = self.deployment.repo
        d = f"{base}/repos/{repo.full_name}/deployments/{self.deployment.id}"
        return {"url": f"{d}/statuses/{self.id}", "id": self.id, "node_id": self.node_id, "state": self.state,
                "creator": self.creator.simple(base), "description": self.description,
                "environment": self.environment, "target_url": self.target_url, "created_at": iso(self.created_at),
                "updated_at": iso(self.created_at), "deployment_url": d,
                "repository_url": f"{base}/repos/{repo.full_name}", "environment_url": self.environment_url,
                "log_url": self.log_url, "performed_via_github_app": None}


class Deployment:
    def __init__(self, repo: Repo, id: int, sha: str, ref: str, creator: Account, created_at: float, *,
                 task: str = "deploy", environment: str = "production", description: str | None = None,
                 payload: Any = None, transient: bool = False, production: bool | None = None) -> None:
        self.repo = repo
        self.id = id
        self.node_id = node_id("Deployment", id)
        self.sha = sha
        self.ref = ref
        self.creator = creator
        self.task = task
        self.environment = environment
        self.original_environment = environment
        self.description = description
        self.payload: Any = payload if payload is not None else {}
        self.transient = transient
        self.production = environment == "production" if production is None else production
        self.created_at = created_at
        self.updated_at = created_at
        self.statuses: list[DeploymentStatus] = []

    @property
    def state(self) -> str:
        """The latest status's state (``pending`` before any)."""
        return self.statuses[-1].state if self.statuses else "pending"

    def to_dict(self, base: str) -> JSONDict:
        u = f"{base}/repos/{self.repo.full_name}/deployments/{self.id}"
        return {"url": u, "id": self.id, "node_id": self.node_id, "sha": self.sha, "ref": self.ref,
                "task": self.task, "payload": self.payload, "original_environment": self.original_environment,
                "environment": self.environment, "description": self.description,
                "creator": self.creator.simple(base), "created_at": iso(self.created_at),
                "updated_at": iso(self.updated_at), "statuses_url": f"{u}/statuses",
                "repository_url": f"{base}/repos/{self.repo.full_name}",
                "transient_environment": self.transient, "production_environment": self.production,
                "performed_via_github_app": None}
