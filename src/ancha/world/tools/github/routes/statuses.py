"""Commit statuses: create one on a sha, list a ref's statuses (newest first).

The combined status (``GET .../commits/{ref}/status``) is served by ``commits.py`` from
the same list: ``Repo.extra['statuses']`` holds each status as GitHub's
``simple-commit-status`` plus its ``sha``; who created it is kept beside, by id, since
the combined view does not show it.
"""

from __future__ import annotations

from typing import Any

from ancha.world.tools.github import errors
from ancha.world.tools.github.call import Call, Reply, created
from ancha.world.tools.github.git_calls import optional_str, repo_git
from ancha.world.tools.github.models import Account, Repo, iso, node_id
from ancha.world.tools.github.router import route

STATES = ("error", "failure", "pending", "success")


def statuses_of(repo: Repo) -> list[dict[str, Any]]:
    """Every status of the repository, oldest first."""
    kept = repo.extra.setdefault("statuses", [])
    assert isinstance(kept, list)
    return kept


def _creators(repo: Repo) -> dict[int, Account]:
    found: dict[int, Account] = repo.extra.setdefault("status_creators", {})
    return found


def latest_statuses(repo: Repo, sha: str) -> dict[str, str]:
    """Context -> state of the newest status per context on ``sha``."""
    latest: dict[str, str] = {}
    for status in statuses_of(repo):
        if status.get("sha") == sha:
            latest[str(status.get("context"))] = str(status.get("state"))
    return latest


def _full(call: Call, repo: Repo, status: dict[str, Any]) -> dict[str, Any]:
    creator = _creators(repo).get(int(status["id"]))
    body = {k: v for k, v in status.items() if k != "sha"}
    body["creator"] = creator.simple(call.base) if creator is not None else None
    return body


@route("POST", "/repos/{owner}/{repo}/statuses/{sha}")
def repos_create_commit_status(call: Call) -> Reply:
    repo, git = repo_git(call, need="write")
    given = call.params.get("sha", "")
    sha = git.resolve(given)
    state = call.body.get("state")
    if state is None:
        raise errors.invalid_request('"state" wasn\'t supplied.')
    if state not in STATES:
        raise errors.ValidationFailed({"resource": "Status", "code": "custom", "field": "state",
                                       "message": "state is not included in the list"})
    if sha is None:
        raise errors.Unprocessable(f"No commit found for SHA: {given}")
    context = optional_str(call, "context") or "default"
    description = optional_str(call, "description")
    target_url = optional_str(call, "target_url")
    at = call.now()
    status_id = call.state.ids.next("status")
    user = call.user
    status = {
        "url": f"{call.base}/repos/{repo.full_name}/statuses/{sha}", "avatar_url": user.simple(call.base)["avatar_url"],
        "id": status_id, "node_id": node_id("StatusContext", status_id), "state": state,
        "description": description, "target_url": target_url, "context": context,
        "created_at": iso(at), "updated_at": iso(at), "sha": sha,
    }
    statuses_of(repo).append(status)
    _creators(repo)[status_id] = user
    call.replica.publish("status_created", repo, user, call.actor, sha=sha, state=state, context=context,
                         description=description, target_url=target_url)
    return created(_full(call, repo, status), status["url"])


@route("GET", "/repos/{owner}/{repo}/statuses/{sha}")
def repos_list_commit_statuses_legacy(call: Call) -> list[dict[str, Any]]:
    """GitHub's legacy route to the same list (a pull request's ``statuses_url`` names it;
    not in GitHub's OpenAPI description, so not in the coverage ledger)."""
    return _statuses_of_ref(call, call.params.get("sha", ""))


@route("GET", "/repos/{owner}/{repo}/commits/{ref}/statuses")
def repos_list_commit_statuses_for_ref(call: Call) -> list[dict[str, Any]]:
    return _statuses_of_ref(call, call.params.get("ref", ""))


def _statuses_of_ref(call: Call, ref: str) -> list[dict[str, Any]]:
    repo, git = repo_git(call)
    sha = git.resolve(ref)
    if sha is None:
        raise errors.NotFound(f"No commit found for SHA: {ref}")
    mine = [s for s in reversed(statuses_of(repo)) if s.get("sha") == sha]
    return [_full(call, repo, s) for s in call.page(mine)]
