"""Branch protection, one setting at a time: admin enforcement, required reviews,
required status checks and their contexts.

Each reads and writes the same ``Protection`` that ``PUT .../protection`` sets and the
merge, contents and push paths obey (``git_protection``); a seeded protection becomes
a ``Protection`` on its first edit. A branch without protection answers 404
``Branch not protected``; a setting that is off answers 404 ``... not enabled``.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from ancha.world.tools.github import errors
from ancha.world.tools.github.call import Call, Reply, no_content
from ancha.world.tools.github.git_calls import protection, repo_git
from ancha.world.tools.github.git_protection import Protection
from ancha.world.tools.github.router import route
from ancha.world.tools.github.routes.branches import restriction_lists, restriction_policy

_BASE = "/repos/{owner}/{repo}/branches/{branch}/protection"


def _rule(call: Call) -> tuple[Protection, str]:
    """The branch's protection (kept as a ``Protection`` from now on) and its URL."""
    repo, git = repo_git(call, need="admin")
    name = call.params["branch"]
    if git.branch_sha(name) is None:
        raise errors.NotFound("Branch not found")
    rule = protection(repo, name)
    if rule is None:
        raise errors.NotFound("Branch not protected")
    repo.protected_branches[name] = rule
    return rule, f"{call.base}/repos/{repo.full_name}/branches/{quote(name, safe='')}/protection"


# --- enforce_admins ----------------------------------------------------------------------------


def _admins(rule: Protection, url: str) -> dict[str, Any]:
    return {"url": f"{url}/enforce_admins", "enabled": rule.enforce_admins}


@route("GET", _BASE + "/enforce_admins")
def repos_get_admin_branch_protection(call: Call) -> dict[str, Any]:
    return _admins(*_rule(call))


@route("POST", _BASE + "/enforce_admins")
def repos_set_admin_branch_protection(call: Call) -> dict[str, Any]:
    rule, url = _rule(call)
    rule.enforce_admins = True
    return _admins(rule, url)


@route("DELETE", _BASE + "/enforce_admins")
def repos_delete_admin_branch_protection(call: Call) -> Reply:
    rule, _ = _rule(call)
    if not rule.enforce_admins:
        raise errors.NotFound("Enforce admins not enabled")
    rule.enforce_admins = False
    return no_content()


# --- required_pull_request_reviews ------------------------------------------------------------


def _reviews(call: Call) -> tuple[Protection, str]:
    rule, url = _rule(call)
    if rule.required_reviews is None:
        raise errors.NotFound("Required pull request reviews not enabled")
    return rule, url


def _reviews_body(rule: Protection, url: str) -> dict[str, Any]:
    return {"url": f"{url}/required_pull_request_reviews", "dismiss_stale_reviews": rule.dismiss_stale_reviews,
            "require_code_owner_reviews": rule.require_code_owner_reviews,
            "required_approving_review_count": rule.required_reviews or 0,
            "require_last_push_approval": rule.require_last_push_approval}


@route("GET", _BASE + "/required_pull_request_reviews")
def repos_get_pull_request_review_protection(call: Call) -> dict[str, Any]:
    rule, url = _reviews(call)
    return _with_dismissal(call, rule, url, _reviews_body(rule, url))


def _with_dismissal(call: Call, rule: Protection, url: str, body: dict[str, Any]) -> dict[str, Any]:
    if rule.dismissal_restrictions is not None:
        body["dismissal_restrictions"] = restriction_policy(call, f"{url}/dismissal_restrictions",
                                                            rule.dismissal_restrictions, apps=False)
    return body


@route("PATCH", _BASE + "/required_pull_request_reviews",
       partial="bypass allowances are accepted and not kept")
def repos_update_pull_request_review_protection(call: Call) -> dict[str, Any]:
    rule, url = _reviews(call)
    count = call.body.get("required_approving_review_count")
    if count is not None and (isinstance(count, bool) or not isinstance(count, int) or not 0 <= count <= 6):
        raise errors.ValidationFailed({"resource": "ProtectedBranch", "field": "required_approving_review_count",
                                       "code": "invalid"},
                                      message="Invalid request.\n\nrequired_approving_review_count must be "
                                              "between 0 and 6.")
    flags = {name: call.field_bool(name) for name in
             ("dismiss_stale_reviews", "require_code_owner_reviews", "require_last_push_approval")}
    for name in ("dismissal_restrictions", "bypass_pull_request_allowances"):
        if call.body.get(name) is not None and not isinstance(call.body[name], dict):
            raise errors.invalid_request(f"For '{name}', {call.body[name]!r} is not an object.")
    if call.body.get("dismissal_restrictions") is not None:
        repo = call.repo(need="admin")
        rule.dismissal_restrictions = restriction_lists(call, repo, call.body["dismissal_restrictions"],
                                                        "dismissal_restrictions")
    if count is not None:
        rule.required_reviews = count
    for name, value in flags.items():
        if value is not None:
            setattr(rule, name, value)
    return _with_dismissal(call, rule, url, _reviews_body(rule, url))


@route("DELETE", _BASE + "/required_pull_request_reviews")
def repos_delete_pull_request_review_protection(call: Call) -> Reply:
    rule, _ = _reviews(call)
    rule.required_reviews = None
    return no_content()


# --- required_status_checks -------------------------------------------------------------------


def _checks(call: Call) -> tuple[Protection, list[str], str]:
    rule, url = _rule(call)
    if rule.required_checks is None:
        raise errors.NotFound("Required status checks not enabled")
    return rule, rule.required_checks, url


def _checks_body(rule: Protection, contexts: list[str], url: str) -> dict[str, Any]:
    u = f"{url}/required_status_checks"
    return {"url": u, "strict": rule.strict, "contexts": list(contexts), "contexts_url": f"{u}/contexts",
            "checks": [{"context": c, "app_id": None} for c in contexts]}


def _strings(call: Call, name: str, value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(c, str) for c in value):
        raise errors.invalid_request(f"For '{name}', {value!r} is not an array of strings.")
    return list(value)


@route("GET", _BASE + "/required_status_checks")
def repos_get_status_checks_protection(call: Call) -> dict[str, Any]:
    return _checks_body(*_checks(call))


@route("PATCH", _BASE + "/required_status_checks", partial="checks' app_id is not kept")
def repos_update_status_check_protection(call: Call) -> dict[str, Any]:
    rule, contexts, url = _checks(call)
    strict = call.field_bool("strict")
    names: list[str] | None = None
    if call.body.get("contexts") is not None:
        names = _strings(call, "contexts", call.body["contexts"])
    if call.body.get("checks") is not None:
        checks = call.body["checks"]
        if not isinstance(checks, list) or not all(isinstance(c, dict) and isinstance(c.get("context"), str)
                                                   for c in checks):
            raise errors.invalid_request(f"For 'checks', {checks!r} is not an array of checks.")
        names = [*(names or []), *(c["context"] for c in checks)]
    if strict is not None:
        rule.strict = strict
    if names is not None:
        rule.required_checks = list(dict.fromkeys(names))
    return _checks_body(rule, rule.required_checks or [], url)


@route("DELETE", _BASE + "/required_status_checks")
def repos_remove_status_check_protection(call: Call) -> Reply:
    rule, _ = _rule(call)
    rule.required_checks = None
    rule.strict = False
    return no_content()


@route("GET", _BASE + "/required_status_checks/contexts")
def repos_get_all_status_check_contexts(call: Call) -> list[str]:
    return list(_checks(call)[1])


def _contexts(call: Call) -> list[str]:
    """``contexts`` from an object body or, as GitHub also takes, a bare array."""
    call.body_or_array("contexts")
    if "contexts" not in call.body:
        raise errors.invalid_request('"contexts" wasn\'t supplied.')
    return _strings(call, "contexts", call.body["contexts"])


@route("POST", _BASE + "/required_status_checks/contexts")
def repos_add_status_check_contexts(call: Call) -> list[str]:
    rule, contexts, _ = _checks(call)
    rule.required_checks = list(dict.fromkeys([*contexts, *_contexts(call)]))
    return list(rule.required_checks)


@route("PUT", _BASE + "/required_status_checks/contexts")
def repos_set_status_check_contexts(call: Call) -> list[str]:
    rule, _, _ = _checks(call)
    rule.required_checks = list(dict.fromkeys(_contexts(call)))
    return list(rule.required_checks)


@route("DELETE", _BASE + "/required_status_checks/contexts")
def repos_remove_status_check_contexts(call: Call) -> list[str]:
    rule, contexts, _ = _checks(call)
    gone = set(_contexts(call))
    rule.required_checks = [c for c in contexts if c not in gone]
    return list(rule.required_checks)
