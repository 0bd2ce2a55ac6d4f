"""Branches: list, get, rename, and their protection (get, set, remove).

Branches are the ``refs/heads/*`` of the repository's ``RepoGit``; protection lives in
``Repo.protected_branches`` as a ``git_protection.Protection`` (a seeded one is read as
such), and the smart-HTTP push path and the contents API both obey it.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from ancha.world.tools.github import errors
from ancha.world.tools.github.call import Call, Reply, created, no_content
from ancha.world.tools.github.git_calls import protection, repo_git
from ancha.world.tools.github.git_protection import Protection
from ancha.world.tools.github.git_store import InvalidRef, RefConflict, RepoGit, UnknownRevision
from ancha.world.tools.github.git_wire import Accounts, commit, short_branch
from ancha.world.tools.github.models import Org, Repo
from ancha.world.tools.github.models.wire import web_url
from ancha.world.tools.github.router import route


def _protection_url(call: Call, repo: Repo, name: str) -> str:
    return f"{call.base}/repos/{repo.full_name}/branches/{quote(name, safe='')}/protection"


def _summary(rule: Protection | None) -> dict[str, Any]:
    checks = list(rule.required_checks or []) if rule is not None else []
    level = "off" if rule is None or rule.required_checks is None else (
        "everyone" if rule.enforce_admins else "non_admins")
    return {"enabled": rule is not None,
            "required_status_checks": {"enforcement_level": level, "contexts": checks,
                                       "checks": [{"context": c, "app_id": None} for c in checks]}}


@route("GET", "/repos/{owner}/{repo}/branches")
def repos_list_branches(call: Call) -> Any:
    repo, git = repo_git(call)
    only = call.query.get("protected")
    items = []
    for name, sha in git.branches():
        rule = protection(repo, name)
        if only in ("true", "1") and rule is None or only in ("false", "0") and rule is not None:
            continue
        body = short_branch(call.base, repo, name, sha, rule is not None)
        if call.caller is not None and call.can(repo, "write"):
            body["protection"] = _summary(rule)
            body["protection_url"] = _protection_url(call, repo, name)
        items.append(body)
    return call.page(items)


def _branch(call: Call, repo: Repo, git: RepoGit, name: str) -> dict[str, Any]:
    sha = git.branch_sha(name)
    info = git.commit_info(sha) if sha is not None else None
    if info is None:
        raise errors.NotFound("Branch not found")
    rule = protection(repo, name)
    body: dict[str, Any] = {
        "name": name, "commit": commit(call.base, repo, info, Accounts(call.state)),
        "_links": {"self": f"{call.base}/repos/{repo.full_name}/branches/{quote(name, safe='')}",
                   "html": f"{web_url(call.base)}/{repo.full_name}/tree/{name}"},
        "protected": rule is not None, "protection": _summary(rule),
        "protection_url": _protection_url(call, repo, name),
    }
    if rule is not None and rule.required_reviews is not None:
        body["required_approving_review_count"] = rule.required_reviews
    return body


@route("GET", "/repos/{owner}/{repo}/branches/{branch}")
def repos_get_branch(call: Call) -> dict[str, Any]:
    repo, git = repo_git(call)
    return _branch(call, repo, git, call.params["branch"])


@route("POST", "/repos/{owner}/{repo}/branches/{branch}/rename")
def repos_rename_branch(call: Call) -> Reply:
    repo, git = repo_git(call, need="write")
    old = call.params["branch"]
    new = call.field_str("new_name", resource="Branch", required=True) or ""
    if git.branch_sha(old) is None:
        raise errors.NotFound("Branch not found")
    if old == git.default_branch and not call.can(repo, "admin"):
        raise errors.MustHaveAdmin()
    try:
        git.rename_branch(old, new, actor=call.actor)
    except RefConflict:
        raise errors.Unprocessable(f"A branch named {new} already exists.") from None
    except (InvalidRef, UnknownRevision):
        raise errors.Unprocessable(f"New branch name {new} is not a valid branch name.") from None
    if repo.default_branch == old:
        repo.default_branch = new
    if old in repo.protected_branches:
        repo.protected_branches[new] = repo.protected_branches.pop(old)
    for pull in repo.pulls.values():
        if getattr(pull, "base", None) == old and getattr(pull, "state", "open") == "open":
            pull.base = new
    return created(_branch(call, repo, git, new))


# --- protection ------------------------------------------------------------------------


def _protected(call: Call, need: str) -> tuple[Repo, RepoGit, str]:
    repo, git = repo_git(call, need=need)
    name = call.params["branch"]
    if git.branch_sha(name) is None:
        raise errors.NotFound("Branch not found")
    return repo, git, name


@route("GET", "/repos/{owner}/{repo}/branches/{branch}/protection")
def repos_get_branch_protection(call: Call) -> dict[str, Any]:
    repo, _, name = _protected(call, "admin")
    rule = protection(repo, name)
    if rule is None:
        raise errors.NotFound("Branch not protected")
    return with_restrictions(call, rule, rule.to_dict(_protection_url(call, repo, name)))


def _optional_object(call: Call, name: str) -> dict[str, Any] | None:
    if name not in call.body:
        raise errors.invalid_request(f'"{name}" wasn\'t supplied.')
    value = call.body[name]
    if value is not None and not isinstance(value, dict):
        raise errors.invalid_request(f"For '{name}', {value!r} is not an object.")
    return value


def _flag(call: Call, name: str) -> bool:
    value = call.body.get(name)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise errors.invalid_request(f"For '{name}', {value!r} is not a boolean.")
    return value


@route("PUT", "/repos/{owner}/{repo}/branches/{branch}/protection",
       partial="bypass allowances are accepted and not kept; restrictions are kept and not enforced on pushes")
def repos_update_branch_protection(call: Call) -> dict[str, Any]:
    repo, _, name = _protected(call, "admin")
    checks = _optional_object(call, "required_status_checks")
    reviews = _optional_object(call, "required_pull_request_reviews")
    restrictions = _optional_object(call, "restrictions")
    if "enforce_admins" not in call.body:
        raise errors.invalid_request('"enforce_admins" wasn\'t supplied.')
    enforce = call.body["enforce_admins"]
    if enforce is not None and not isinstance(enforce, bool):
        raise errors.invalid_request(f"For 'enforce_admins', {enforce!r} is not a boolean.")
    rule = Protection(required_reviews=None, required_checks=None, enforce_admins=bool(enforce))
    if checks is not None:
        contexts = checks.get("contexts") or []
        listed = [c.get("context") for c in checks.get("checks") or [] if isinstance(c, dict)]
        names = [*contexts, *listed] if isinstance(contexts, list) else [None]
        if not all(isinstance(c, str) for c in names):
            raise errors.invalid_request("For 'required_status_checks/contexts', is not an array of strings.")
        rule.required_checks = list(dict.fromkeys(str(c) for c in names))
        rule.strict = bool(checks.get("strict", False))
    if reviews is not None:
        count = reviews.get("required_approving_review_count", 1)
        if isinstance(count, bool) or not isinstance(count, int) or not 0 <= count <= 6:
            raise errors.ValidationFailed({"resource": "ProtectedBranch", "field": "required_approving_review_count",
                                           "code": "invalid"},
                                          message="Invalid request.\n\nrequired_approving_review_count must be "
                                                  "between 0 and 6.")
        rule.required_reviews = count
        rule.dismiss_stale_reviews = bool(reviews.get("dismiss_stale_reviews", False))
        rule.require_code_owner_reviews = bool(reviews.get("require_code_owner_reviews", False))
        rule.require_last_push_approval = bool(reviews.get("require_last_push_approval", False))
        rule.dismissal_restrictions = restriction_lists(call, repo, reviews.get("dismissal_restrictions"),
                                                        "required_pull_request_reviews.dismissal_restrictions")
    rule.restrictions = restriction_lists(call, repo, restrictions, "restrictions")
    for flag in ("required_linear_history", "allow_force_pushes", "allow_deletions", "block_creations",
                 "required_conversation_resolution", "lock_branch", "allow_fork_syncing"):
        setattr(rule, flag, _flag(call, flag))
    repo.protected_branches[name] = rule
    return with_restrictions(call, rule, rule.to_dict(_protection_url(call, repo, name), put=True))


def restriction_lists(call: Call, repo: Repo, value: Any, field: str) -> dict[str, list[str]] | None:
    """``{users, teams, apps}`` as given (logins and slugs), checked as GitHub checks them."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise errors.invalid_request(f"For '{field}', {value!r} is not an object.")
    if not isinstance(repo.owner, Org):
        raise errors.Unprocessable("Validation Failed: Only organization repositories can have users and team "
                                   "restrictions")
    found: dict[str, list[str]] = {}
    for kind in ("users", "teams", "apps"):
        items = value.get(kind) or []
        if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
            raise errors.invalid_request(f"For '{field}/{kind}', {items!r} is not an array of strings.")
        found[kind] = list(dict.fromkeys(items))
    return found


def with_restrictions(call: Call, rule: Protection, body: dict[str, Any]) -> dict[str, Any]:
    """``restrictions`` and ``required_pull_request_reviews.dismissal_restrictions``, when set."""
    url = body["url"]
    if rule.restrictions is not None:
        body["restrictions"] = restriction_policy(call, f"{url}/restrictions", rule.restrictions, apps=True)
    reviews = body.get("required_pull_request_reviews")
    if rule.dismissal_restrictions is not None and isinstance(reviews, dict):
        reviews["dismissal_restrictions"] = restriction_policy(call, f"{url}/dismissal_restrictions",
                                                    rule.dismissal_restrictions, apps=False)
    return body


def restriction_policy(call: Call, url: str, lists: dict[str, list[str]], *, apps: bool) -> dict[str, Any]:
    users = [u.simple(call.base) for login in lists.get("users", []) if (u := call.state.user(login)) is not None]
    teams = [t.to_dict(call.base) for org in call.state.orgs.values() for slug in lists.get("teams", [])
             if (t := org.teams.get(slug.lower())) is not None]
    body: dict[str, Any] = {"url": url, "users_url": f"{url}/users", "teams_url": f"{url}/teams"}
    if apps:
        body["apps_url"] = f"{url}/apps"
    body.update({"users": users, "teams": teams, "apps": []})
    return body


@route("DELETE", "/repos/{owner}/{repo}/branches/{branch}/protection")
def repos_delete_branch_protection(call: Call) -> Reply:
    repo, _, name = _protected(call, "admin")
    if name not in repo.protected_branches:
        raise errors.NotFound("Branch not protected")
    del repo.protected_branches[name]
    return no_content()
