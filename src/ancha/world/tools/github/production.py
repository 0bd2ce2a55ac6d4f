"""Deployments and what runs in production.

A repository's deployments (with their statuses) and environments live here, in
``Repo.extra``, so both the REST routes (``routes/deployments.py``) and checks read
the same objects. ``production_sha(repo)`` answers "which commit runs in production?":
the sha of the latest deployment to ``production`` whose latest status is ``success``,
else the seed's ``production`` (a branch, commit ref or SHA) resolved through the
repository's git, else None.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ancha.world.tools.github.models.wire import JSONDict, iso, node_id, web_url

if TYPE_CHECKING:
    from ancha.world.tools.github.models import Account, Repo

PRODUCTION = "production"
STATES = ("error", "failure", "inactive", "in_progress", "queued", "pending", "success")


class DeploymentStatus:
    def __init__(self, deployment: Deployment, id: int, state: str, creator: Account, at: float, *,
                 description: str = "", environment: str = "", target_url: str = "", log_url: str = "",
                 environment_url: str = "") -> None:
        self.deployment = deployment
        self.id = id
        self.state = state
        self.creator = creator
        self.created_at = at
        self.description = description
        self.environment = environment
        self.target_url = target_url
        self.log_url = log_url
        self.environment_url = environment_url

    def to_dict(self, base: str) -> JSONDict:
        d = self.deployment
        repo_url = f"{base}/repos/{d.repo.full_name}"
        deployment_url = f"{repo_url}/deployments/{d.id}"
        return {
            "url": f"{deployment_url}/statuses/{self.id}", "id": self.id,
            "node_id": node_id("DeploymentStatus", self.id), "state": self.state,
            "creator": self.creator.simple(base), "description": self.description,
            "environment": self.environment, "target_url": self.target_url or self.log_url,
            "created_at": iso(self.created_at), "updated_at": iso(self.created_at),
            "deployment_url": deployment_url, "repository_url": repo_url,
            "environment_url": self.environment_url, "log_url": self.log_url or self.target_url,
            "performed_via_github_app": None,
        }


class Deployment:
    def __init__(self, repo: Repo, id: int, sha: str, ref: str, task: str, environment: str, creator: Account,
                 at: float, *, payload: Any = None, description: str | None = None,
                 transient: bool = False, production: bool | None = None) -> None:
        self.repo = repo
        self.id = id
        self.sha = sha
        self.ref = ref
        self.task = task
        self.environment = environment
        self.original_environment = environment
        self.creator = creator
        self.created_at = at
        self.updated_at = at
        self.payload: Any = payload if payload is not None else {}
        self.description = description
        self.transient = transient
        self.production = production if production is not None else environment == PRODUCTION
        self.statuses: list[DeploymentStatus] = []

    @property
    def state(self) -> str | None:
        """The latest status's state, or None before any status."""
        return self.statuses[-1].state if self.statuses else None

    def to_dict(self, base: str) -> JSONDict:
        repo_url = f"{base}/repos/{self.repo.full_name}"
        url = f"{repo_url}/deployments/{self.id}"
        return {
            "url": url, "id": self.id, "node_id": node_id("Deployment", self.id), "sha": self.sha,
            "ref": self.ref, "task": self.task, "payload": self.payload,
            "original_environment": self.original_environment, "environment": self.environment,
            "description": self.description, "creator": self.creator.simple(base),
            "created_at": iso(self.created_at), "updated_at": iso(self.updated_at),
            "statuses_url": f"{url}/statuses", "repository_url": repo_url,
            "transient_environment": self.transient, "production_environment": self.production,
            "performed_via_github_app": None,
        }


class Environment:
    def __init__(self, repo: Repo, id: int, name: str, at: float) -> None:
        self.repo = repo
        self.id = id
        self.name = name
        self.created_at = at
        self.updated_at = at

    def to_dict(self, base: str) -> JSONDict:
        full = self.repo.full_name
        return {"id": self.id, "node_id": node_id("Environment", self.id), "name": self.name,
                "url": f"{base}/repos/{full}/environments/{self.name}",
                "html_url": f"{web_url(base)}/{full}/deployments/activity_log?environments_filter={self.name}",
                "created_at": iso(self.created_at), "updated_at": iso(self.updated_at),
                "protection_rules": [], "deployment_branch_policy": None}


def deployments_of(repo: Repo) -> list[Deployment]:
    """The repository's deployments, oldest first."""
    found: list[Deployment] = repo.extra.setdefault("deployments", [])
    return found


def environments_of(repo: Repo) -> dict[str, Environment]:
    """Environments by name (created by the first deployment to them; ``production`` is
    there from the start when the seed says what runs in production)."""
    found: dict[str, Environment] = repo.extra.setdefault("environments", {})
    if repo.production and PRODUCTION not in found:
        found[PRODUCTION] = Environment(repo, repo.id * 100 + len(found) + 1, PRODUCTION, repo.created_at)
    return found


def environment(repo: Repo, name: str, at: float) -> Environment:
    """The environment ``name``, created when missing."""
    found = environments_of(repo)
    if name not in found:
        found[name] = Environment(repo, repo.id * 100 + len(found) + 1, name, at)
    return found[name]


def production_sha(repo: Repo) -> str | None:
    """The commit running in production: the latest deployment to ``production`` whose
    latest status is ``success``, else the seed's ``production`` resolved through git."""
    for deployment in reversed(deployments_of(repo)):
        if deployment.environment == PRODUCTION and deployment.state == "success":
            return deployment.sha
    if not repo.production:
        return None
    git = repo.git
    resolve = getattr(git, "resolve", None)
    if callable(resolve):
        # A branch, tag or SHA; else a seeded commit's ref, with or without its ``$``.
        for name in (repo.production, "$" + repo.production.removeprefix("$")):
            sha = resolve(name)
            if isinstance(sha, str):
                return sha
    return None
