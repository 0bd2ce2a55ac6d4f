"""Deployments, their statuses, and environments.

Creating a deployment resolves ``ref`` to a sha through the repository's git; as on
GitHub, ``auto_merge`` (default on) first merges the default branch into a ``ref``
branch that is behind it (202 with a message, 409 on conflict), and the commit's
statuses must succeed unless ``required_contexts`` says otherwise (409). A ``success``
status with ``auto_inactive`` (default on) marks earlier deployments to the same
environment inactive. ``production.production_sha`` reads the result.
"""

from __future__ import annotations

import json
from typing import Any

from ancha.world.tools.github import errors
from ancha.world.tools.github.call import Call, Reply, created, no_content
from ancha.world.tools.github.git_calls import WEB_COMMITTER, identity_of, optional_str, repo_git
from ancha.world.tools.github.git_merge import MergeConflict
from ancha.world.tools.github.git_store import RefError, RepoGit
from ancha.world.tools.github.models import Repo
from ancha.world.tools.github.production import (
    STATES,
    Deployment,
    DeploymentStatus,
    deployments_of,
    environment,
    environments_of,
)
from ancha.world.tools.github.router import route
from ancha.world.tools.github.routes.statuses import latest_statuses

_REF_FILTERS = ("sha", "ref", "task", "environment")


def _deployment(call: Call, repo: Repo) -> Deployment:
    wanted = call.number("deployment_id")
    for deployment in deployments_of(repo):
        if deployment.id == wanted:
            return deployment
    raise errors.NotFound()


@route("GET", "/repos/{owner}/{repo}/deployments")
def repos_list_deployments(call: Call) -> list[dict[str, Any]]:
    repo = call.repo()
    picked = [d for d in reversed(deployments_of(repo))
              if all(not call.query.get(k) or getattr(d, k) == call.query[k] for k in _REF_FILTERS)]
    return [d.to_dict(call.base) for d in call.page(picked)]


@route("GET", "/repos/{owner}/{repo}/deployments/{deployment_id}")
def repos_get_deployment(call: Call) -> dict[str, Any]:
    repo = call.repo()
    return _deployment(call, repo).to_dict(call.base)


def _auto_merge(call: Call, repo: Repo, git: RepoGit, ref: str) -> Reply | None:
    """Merge the default branch into ``ref`` when it is a branch behind it."""
    default = git.default_branch
    tip, head = git.branch_sha(default), git.branch_sha(ref)
    if ref == default or tip is None or head is None or git.is_ancestor(tip, head):
        return None
    try:
        git.merge(ref, tip, "merge", f"Auto-merged {default} into {ref} on deployment.", identity_of(call.user),
                  call.now(), committer=WEB_COMMITTER, actor=call.actor)
    except (MergeConflict, LookupError, RefError):
        raise errors.Conflict(f"Conflict merging {default} into {ref}.") from None
    return Reply(202, {"message": f"Auto-merged {default} into {ref} on deployment."})


def _required_contexts(call: Call, repo: Repo, sha: str, ref: str) -> None:
    given = call.body.get("required_contexts")
    latest = latest_statuses(repo, sha)
    if given is None:
        wanted = list(latest)
    elif isinstance(given, list) and all(isinstance(c, str) for c in given):
        wanted = list(given)
    else:
        raise errors.invalid_request(f"For 'required_contexts', {json.dumps(given)} is not an array of strings.")
    failing = [{"context": c, "state": latest.get(c, "missing")} for c in wanted if latest.get(c) != "success"]
    if failing:
        raise errors.Conflict(f"Conflict: Commit status checks failed for {ref}.",
                              errors=[{"contexts": failing, "resource": "Deployment", "field": "required_contexts",
                                       "code": "invalid"}])


@route("POST", "/repos/{owner}/{repo}/deployments")
def repos_create_deployment(call: Call) -> Reply:
    repo, git = repo_git(call, need="write")
    ref = call.body.get("ref")
    if ref is None:
        raise errors.invalid_request('"ref" wasn\'t supplied.')
    if not isinstance(ref, str):
        raise errors.invalid_request(f"For 'ref', {json.dumps(ref)} is not a string.")
    task = optional_str(call, "task") or "deploy"
    env_name = optional_str(call, "environment") or "production"
    description = optional_str(call, "description")
    auto_merge = call.field_bool("auto_merge", True)
    transient = bool(call.field_bool("transient_environment", False))
    production = call.field_bool("production_environment")
    payload = call.body.get("payload", {})
    if not isinstance(payload, dict | str):
        raise errors.invalid_request(f"For 'payload', {json.dumps(payload)} is not an object or string.")
    if git.resolve(ref) is None:
        raise errors.Unprocessable(f"No ref found for: {ref}")
    if auto_merge:
        merged = _auto_merge(call, repo, git, ref)
        if merged is not None:
            return merged
    sha = git.resolve(ref)
    assert sha is not None
    _required_contexts(call, repo, sha, ref)
    at = call.now()
    deployment = Deployment(repo, call.state.ids.next("deployment"), sha, ref, task, env_name, call.user, at,
                            payload=payload, description=description, transient=transient, production=production)
    deployments_of(repo).append(deployment)
    environment(repo, env_name, at).updated_at = at
    call.replica.publish("deployment_created", repo, call.user, call.actor, deployment_id=deployment.id, ref=ref,
                         sha=sha, environment=env_name, task=task)
    return created(deployment.to_dict(call.base), f"{call.base}/repos/{repo.full_name}/deployments/{deployment.id}")


@route("DELETE", "/repos/{owner}/{repo}/deployments/{deployment_id}")
def repos_delete_deployment(call: Call) -> Reply:
    repo = call.repo(need="write")
    deployment = _deployment(call, repo)
    same_env = [d for d in deployments_of(repo) if d.environment == deployment.environment]
    if deployment.state not in (None, "inactive", "error", "failure") and len(same_env) > 1:
        raise errors.Unprocessable("We cannot delete an active deployment unless it is the only deployment in a "
                                   "given environment.")
    repo.extra["deployments"] = [d for d in deployments_of(repo) if d is not deployment]
    return no_content()


# --- statuses ------------------------------------------------------------------------------------


@route("GET", "/repos/{owner}/{repo}/deployments/{deployment_id}/statuses")
def repos_list_deployment_statuses(call: Call) -> list[dict[str, Any]]:
    repo = call.repo()
    deployment = _deployment(call, repo)
    return [s.to_dict(call.base) for s in call.page(list(reversed(deployment.statuses)))]


@route("GET", "/repos/{owner}/{repo}/deployments/{deployment_id}/statuses/{status_id}")
def repos_get_deployment_status(call: Call) -> dict[str, Any]:
    repo = call.repo()
    deployment = _deployment(call, repo)
    wanted = call.number("status_id")
    for status in deployment.statuses:
        if status.id == wanted:
            return status.to_dict(call.base)
    raise errors.NotFound()


@route("POST", "/repos/{owner}/{repo}/deployments/{deployment_id}/statuses")
def repos_create_deployment_status(call: Call) -> Reply:
    repo = call.repo(need="write")
    deployment = _deployment(call, repo)
    state = call.body.get("state")
    if state is None:
        raise errors.invalid_request('"state" wasn\'t supplied.')
    if state not in STATES:
        raise errors.invalid_request(f"For 'state', {json.dumps(state)} is not one of {', '.join(STATES)}.")
    texts = {name: optional_str(call, name) for name in
             ("target_url", "log_url", "description", "environment", "environment_url")}
    auto_inactive = call.field_bool("auto_inactive", True)
    at = call.now()
    if texts["environment"]:
        deployment.environment = texts["environment"] or deployment.environment
        environment(repo, deployment.environment, at)
    status = DeploymentStatus(deployment, call.state.ids.next("deployment_status"), str(state), call.user, at,
                              description=texts["description"] or "", environment=deployment.environment,
                              target_url=texts["target_url"] or "", log_url=texts["log_url"] or "",
                              environment_url=texts["environment_url"] or "")
    deployment.statuses.append(status)
    deployment.updated_at = at
    environment(repo, deployment.environment, at).updated_at = at
    call.replica.publish("deployment_status_created", repo, call.user, call.actor, deployment_id=deployment.id,
                         state=state, environment=deployment.environment, sha=deployment.sha)
    if state == "success" and auto_inactive:
        for earlier in deployments_of(repo):
            if (earlier is not deployment and earlier.environment == deployment.environment
                    and not earlier.transient and earlier.state not in (None, "inactive")):
                earlier.statuses.append(DeploymentStatus(
                    earlier, call.state.ids.next("deployment_status"), "inactive", call.user, at,
                    environment=earlier.environment))
                earlier.updated_at = at
    url = f"{call.base}/repos/{repo.full_name}/deployments/{deployment.id}/statuses/{status.id}"
    return created(status.to_dict(call.base), url)


# --- environments --------------------------------------------------------------------------------


@route("GET", "/repos/{owner}/{repo}/environments", partial="no protection rules or branch policies")
def repos_get_all_environments(call: Call) -> dict[str, Any]:
    repo = call.repo()
    found = sorted(environments_of(repo).values(), key=lambda e: e.name.lower())
    return {"total_count": len(found), "environments": [e.to_dict(call.base) for e in call.page(found)]}


@route("GET", "/repos/{owner}/{repo}/environments/{environment_name}",
       partial="no protection rules or branch policies")
def repos_get_environment(call: Call) -> dict[str, Any]:
    repo = call.repo()
    found = environments_of(repo).get(call.params.get("environment_name", ""))
    if found is None:
        raise errors.NotFound()
    return found.to_dict(call.base)
