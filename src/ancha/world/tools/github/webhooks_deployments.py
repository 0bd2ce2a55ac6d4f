"""``deployment`` and ``deployment_status`` webhooks.

A deployment (and a status) the replica stores under ``Repo.extra["deployments"]``
(``deployment_statuses``), by id, as an object with ``to_dict(base)`` or as its REST
body, is rendered from there; otherwise from what the domain event carries (id, ref,
sha, environment, state), which is all a deployment made through the API has beside
its defaults.
"""

from __future__ import annotations

from typing import Any

from ancha.world.tools.github.models import Account, Repo
from ancha.world.tools.github.models.wire import JSONDict, iso, node_id
from ancha.world.tools.github.webhooks import Webhook, _users, envelope, user

_DEPLOYMENT_KEYS = ("url", "id", "node_id", "sha", "ref", "task", "payload", "original_environment", "environment",
                    "transient_environment", "production_environment", "description", "creator", "created_at",
                    "updated_at", "statuses_url", "repository_url", "performed_via_github_app")
_STATUS_KEYS = ("url", "id", "node_id", "state", "creator", "description", "environment", "environment_url",
                "log_url", "target_url", "created_at", "updated_at", "deployment_url", "repository_url",
                "performed_via_github_app")


def _stored(repo: Repo, family: str, id: Any, base: str) -> JSONDict | None:
    items = repo.extra.get(family)
    found: Any = None
    if isinstance(items, dict):
        found = items.get(id)
        if found is None and isinstance(id, int):
            found = items.get(str(id))
    elif isinstance(items, list):
        found = next((x for x in items if getattr(x, "id", None) == id
                      or (isinstance(x, dict) and x.get("id") == id)), None)
    if found is None:
        return None
    body = found.to_dict(base) if hasattr(found, "to_dict") else found
    return dict(_users(body, base)) if isinstance(body, dict) else None


def deployment(repo: Repo, creator: Account, base: str, data: dict[str, Any], at: float) -> JSONDict:
    id = int(data.get("deployment_id") or 0)
    stored = _stored(repo, "deployments", id, base)
    if stored is not None:
        body = {k: stored[k] for k in _DEPLOYMENT_KEYS if k in stored}
        body.setdefault("performed_via_github_app", None)
        return body
    u = f"{base}/repos/{repo.full_name}/deployments/{id}"
    environment = str(data.get("environment") or "production")
    return {"url": u, "id": id, "node_id": node_id("Deployment", id), "sha": str(data.get("sha") or ""),
            "ref": str(data.get("ref") or ""), "task": str(data.get("task") or "deploy"),
            "payload": dict(data.get("payload") or {}), "original_environment": environment,
            "environment": environment, "description": data.get("description"), "creator": user(creator, base),
            "created_at": iso(at), "updated_at": iso(at), "statuses_url": f"{u}/statuses",
            "repository_url": f"{base}/repos/{repo.full_name}", "performed_via_github_app": None}


def deployment_status(repo: Repo, creator: Account, base: str, data: dict[str, Any], at: float,
                      deployment_body: JSONDict) -> JSONDict:
    id = int(data.get("status_id") or data.get("deployment_status_id") or 0)
    stored = _stored(repo, "deployment_statuses", id, base) if id else None
    if stored is not None:
        body = {k: stored[k] for k in _STATUS_KEYS if k in stored}
        body.setdefault("performed_via_github_app", None)
        return body
    u = f"{deployment_body['url']}/statuses/{id}"
    return {"url": u, "id": id, "node_id": node_id("DeploymentStatus", id), "state": str(data.get("state")),
            "creator": user(creator, base), "description": str(data.get("description") or ""),
            "environment": str(data.get("environment") or deployment_body["environment"]),
            "target_url": str(data.get("target_url") or ""), "created_at": iso(at), "updated_at": iso(at),
            "deployment_url": deployment_body["url"], "repository_url": f"{base}/repos/{repo.full_name}",
            "performed_via_github_app": None}


def deployment_webhooks(kind: str, repo: Repo, sender: Account, base: str, data: dict[str, Any],
                        at: float) -> list[Webhook]:
    body = deployment(repo, sender, base, data, at)
    if kind == "deployment_created":
        return [("deployment", envelope("created", repo, sender, base, deployment=body, workflow=None,
                                        workflow_run=None))]
    status = deployment_status(repo, sender, base, data, at, body)
    return [("deployment_status", envelope("created", repo, sender, base, deployment_status=status,
                                           deployment=body))]
