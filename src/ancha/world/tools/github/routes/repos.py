"""Repositories: get, list (yours, a user's, an org's), create, update, delete."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from ancha.world.tools.github import errors
from ancha.world.tools.github.call import Call, Reply, created, no_content
from ancha.world.tools.github.models import Account, Label, Org, Repo
from ancha.world.tools.github.router import route
from ancha.world.tools.github.routes.users import repo_list
from ancha.world.tools.github.seed import DEFAULT_LABELS

_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,100}$")
_SETTINGS_BOOL = ("has_issues", "has_projects", "has_wiki", "has_discussions", "is_template", "allow_squash_merge",
                  "allow_merge_commit", "allow_rebase_merge", "allow_auto_merge", "delete_branch_on_merge",
                  "archived")


@route("GET", "/repos/{owner}/{repo}")
def repos_get(call: Call) -> dict[str, Any]:
    repo = call.repo()
    return repo.to_dict(call.base, role=call.role(repo) if call.caller is not None else None, full=True)


@route("GET", "/user/repos")
def repos_list_for_authenticated_user(call: Call) -> list[dict[str, Any]]:
    user = call.user
    visibility = call.query.get("visibility", "all")
    kind = call.query.get("type", "")
    affiliation = set(call.query.get("affiliation", "owner,collaborator,organization_member").split(","))
    if kind and ("visibility" in call.query or "affiliation" in call.query):
        raise errors.invalid_request("If you specify visibility or affiliation, you cannot specify type.")
    if kind in ("owner", "public", "private", "member"):
        affiliation = {"owner"} if kind == "owner" else (
            {"collaborator", "organization_member"} if kind == "member" else affiliation)
        visibility = kind if kind in ("public", "private") else visibility
    repos: list[Repo] = []
    for repo in call.state.repos.values():
        if visibility != "all" and repo.visibility != visibility:
            continue
        owner = repo.owner
        mine = owner.key == user.key
        member = isinstance(owner, Org) and user.key in owner.members
        collaborator = user.key in repo.collaborators
        if (("owner" in affiliation and mine) or ("collaborator" in affiliation and collaborator)
                or ("organization_member" in affiliation and member)) and call.role(repo) is not None:
            repos.append(repo)
    return repo_list(call, repos)


@route("GET", "/users/{username}/repos")
def repos_list_for_user(call: Call) -> list[dict[str, Any]]:
    account = call.state.account(call.params["username"])
    if account is None:
        raise errors.NotFound()
    kind = call.query.get("type", "owner")
    repos = [r for r in call.state.repos.values() if call.role(r) is not None and not r.private
             and (r.owner.key == account.key or (kind in ("all", "member") and account.key in r.collaborators))]
    return repo_list(call, repos)


@route("GET", "/orgs/{org}/repos")
def repos_list_for_org(call: Call) -> list[dict[str, Any]]:
    org = call.state.orgs.get(call.params["org"].lower())
    if org is None:
        raise errors.NotFound()
    kind = call.query.get("type", "all")
    repos = [r for r in call.state.repos_of(org) if call.role(r) is not None
             and (kind not in ("public", "private") or r.visibility == kind)]
    return repo_list(call, repos, default_sort="created")


def _create(call: Call, owner: Account) -> Reply:
    name = call.field_str("name", resource="Repository", required=True) or ""
    if not _NAME.match(name) or name in (".", ".."):
        raise errors.ValidationFailed({"resource": "Repository", "code": "custom", "field": "name",
                                       "message": "name is invalid"}, message="Repository creation failed.")
    if call.state.repo(owner.login, name) is not None:
        raise errors.ValidationFailed({"resource": "Repository", "code": "custom", "field": "name",
                                       "message": "name already exists on this account"},
                                      message="Repository creation failed.")
    visibility = call.field_str("visibility")
    private = call.field_bool("private", False) or visibility in ("private", "internal")
    now = call.now()
    repo = Repo(owner, name, call.state.ids.next("repo"), private=private, description=call.field_str("description"),
                created_at=now)
    repo.homepage = call.field_str("homepage")
    for key in _SETTINGS_BOOL:
        value = call.field_bool(key)
        if value is not None:
            setattr(repo, key, value)
    for label_name, color, text in DEFAULT_LABELS:
        repo.labels[label_name] = Label(repo, call.state.ids.next("label"), label_name, color, text, default=True)
    _init_git(call, repo, bool(call.field_bool("auto_init", False)))
    call.state.add_repo(repo)
    call.replica.publish("repo_created", repo, call.user, call.actor, private=repo.private)
    return created(repo.to_dict(call.base, role="admin", full=True), f"{call.base}/repos/{repo.full_name}")


def _init_git(call: Call, repo: Repo, auto_init: bool) -> None:
    try:
        from ancha.world.tools.github.git_store import build_repo_git
    except ImportError:
        return
    files = {"README.md": f"# {repo.name}\n" + (f"{repo.description}\n" if repo.description else "")} if auto_init else {}
    seed = {"name": repo.full_name, "default_branch": repo.default_branch, "files": files}
    start = datetime.fromtimestamp(call.replica.world.clock.peek(), UTC)
    repo.git = build_repo_git(seed, start)


@route("POST", "/user/repos")
def repos_create_for_authenticated_user(call: Call) -> Reply:
    return _create(call, call.user)


@route("POST", "/orgs/{org}/repos")
def repos_create_in_org(call: Call) -> Reply:
    org = call.state.orgs.get(call.params["org"].lower())
    if org is None or call.user.key not in org.members:
        raise errors.NotFound()
    return _create(call, org)


@route("PATCH", "/repos/{owner}/{repo}", partial="security_and_analysis and merge-message settings are ignored")
def repos_update(call: Call) -> dict[str, Any]:
    repo = call.repo(need="admin")
    changes: dict[str, Any] = {}
    name = call.field_str("name", allow_none=False)
    if name is not None and name != repo.name:
        if not _NAME.match(name):
            raise errors.invalid_field("Repository", "name", name)
        if call.state.repo(repo.owner.login, name) is not None:
            raise errors.ValidationFailed({"resource": "Repository", "code": "custom", "field": "name",
                                           "message": "name already exists on this account"})
        call.state.remove_repo(repo)
        call.state.renamed[repo.full_name.lower()] = repo.id
        changes["name"] = {"from": repo.name}
        repo.name = name
        call.state.add_repo(repo)
        for issue in repo.issues.values():
            for comment in issue.comments:
                call.state.comments[comment.id] = comment
    for key in ("description", "homepage"):
        if key in call.body:
            changes[key] = {"from": getattr(repo, key)}
            setattr(repo, key, call.field_str(key))
    visibility = call.field_str("visibility", allow_none=False)
    private = call.field_bool("private")
    if visibility is not None:
        if visibility not in ("public", "private", "internal"):
            raise errors.invalid_field("Repository", "visibility", visibility)
        private = visibility != "public"
    if private is not None and private != repo.private:
        changes["private"] = {"from": repo.private}
        repo.private = private
    branch = call.field_str("default_branch", allow_none=False)
    if branch is not None and branch != repo.default_branch:
        git = repo.git
        if git is not None and git.branch_sha(branch) is None:
            raise errors.ValidationFailed({"resource": "Repository", "code": "invalid", "field": "default_branch",
                                           "message": f"Cannot update default branch for this repository to "
                                                      f"{branch}. The branch does not exist."})
        if git is not None:
            git.set_default_branch(branch)
        changes["default_branch"] = {"from": repo.default_branch}
        repo.default_branch = branch
    for key in _SETTINGS_BOOL:
        value = call.field_bool(key)
        if value is not None and value != getattr(repo, key):
            changes[key] = {"from": getattr(repo, key)}
            setattr(repo, key, value)
    repo.updated_at = call.now()
    if changes:
        call.replica.publish("repo_edited", repo, call.user, call.actor, changes=changes)
    return repo.to_dict(call.base, role=call.role(repo), full=True)


@route("DELETE", "/repos/{owner}/{repo}")
def repos_delete(call: Call) -> Reply:
    repo = call.repo(need="admin")
    call.state.remove_repo(repo)
    call.replica.publish("repo_deleted", repo, call.user, call.actor)
    return no_content()


@route("GET", "/repos/{owner}/{repo}/topics")
def repos_get_all_topics(call: Call) -> dict[str, Any]:
    repo = call.repo()
    return {"names": list(repo.topics)}


@route("PUT", "/repos/{owner}/{repo}/topics")
def repos_replace_all_topics(call: Call) -> dict[str, Any]:
    repo = call.repo(need="admin")
    names = call.field_list("names", required=True) or []
    for name in names:
        if not re.match(r"^[a-z0-9][a-z0-9-]{0,49}$", name):
            raise errors.ValidationFailed({"resource": "Repository", "code": "invalid", "field": "topics",
                                           "message": f"{name} is not a valid topic"},
                                          message=f"{name} is not a valid topic")
    repo.topics = list(dict.fromkeys(names))
    repo.updated_at = call.now()
    return {"names": list(repo.topics)}
