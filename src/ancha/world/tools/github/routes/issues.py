"""Issues: list (per repo, yours), get, create, update, lock; assignees.

The Issues API sees pull requests too (with a ``pull_request`` key), as GitHub does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ancha.world.kernel.plain_numbers import is_plain_int
from ancha.world.tools.github import changes, errors
from ancha.world.tools.github.call import Call, Reply, created, no_content
from ancha.world.tools.github.models import Account, Issue, Label, Milestone, Repo
from ancha.world.tools.github.models.issues import by_created
from ancha.world.tools.github.models.wire import RawJSON, dumps, raw_list
from ancha.world.tools.github.router import route

LOCK_REASONS = ("off-topic", "too heated", "resolved", "spam")
_PAGES = "issues.pages"
_PAGES_KEPT = 4
"""Pages of a repository's issue list kept for reuse (each up to 100 issues' text, and its bytes)."""
_SORTS: dict[str, Callable[[Issue], float]] = {
    "created": lambda i: i.created_at, "updated": lambda i: i.updated_at, "comments": lambda i: len(i.comments)}


# --- shared by issue, label and pull routes -------------------------------------------------


def assignable(call: Call, repo: Repo, login: str) -> Account | None:
    """The user ``login`` names if they can be assigned here (anyone with triage or more)."""
    account = call.state.user(login)
    if account is None or call.state.role(repo, account) not in ("triage", "write", "maintain", "admin"):
        return None
    return account


def labels_by_name(call: Call, repo: Repo, names: list[str], *, create: bool = True) -> list[Label]:
    """Labels for names; GitHub creates the ones a repository lacks when they are set on an issue."""
    found: list[Label] = []
    for name in names:
        name = name.strip()
        if not name:
            continue
        label = repo.labels.get(name.lower())
        if label is None:
            if not create:
                raise errors.NotFound("Label does not exist")
            label = repo.labels[name.lower()] = Label(repo, call.state.ids.next("label"), name)
            call.replica.publish("label_created", repo, call.user, call.actor, label=name, color=label.color)
        if all(existing is not label for existing in found):
            found.append(label)
    return found


def _milestone(call: Call, repo: Repo) -> Milestone | None:
    value = call.body.get("milestone")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | str) or not is_plain_int(str(value)):
        raise errors.invalid_request(f"For 'milestone', {value!r} is not an integer or null.")
    milestone = repo.milestones.get(int(value))
    if milestone is None:
        raise errors.ValidationFailed({"value": value, "resource": "Issue", "field": "milestone", "code": "invalid"})
    return milestone


def _assignees(call: Call, repo: Repo, resource: str = "Issue") -> list[Account] | None:
    names = call.field_list("assignees")
    single = call.field_str("assignee") if "assignee" in call.body else None
    if names is None and "assignee" not in call.body:
        return None
    names = [*(names or []), *([single] if single else [])]
    found: list[Account] = []
    for name in names:
        account = assignable(call, repo, name)
        if account is None:
            raise errors.ValidationFailed({"value": name, "resource": resource, "field": "assignees",
                                           "code": "invalid"})
        if all(a.key != account.key for a in found):
            found.append(account)
    return found


def render(call: Call, issue: Issue, *, single: bool = False) -> dict[str, Any]:
    """The issue as a dict: what write routes answer (GraphQL mutations read it)."""
    return issue.to_dict(call.base, single=single)


def _page(call: Call, issues: list[Issue], *, repo: Repo | None = None, with_repo: bool = False) -> RawJSON:
    """A page of issues as JSON text, joined from each issue's cached wire text. For one repository's
    list, the last few pages are kept: a page whose items are the very same texts is answered with
    the text (and bytes and ETag) it had."""
    base = call.base
    page = call.page(issues)
    if with_repo:
        repos: dict[int, str] = {}  # the repository's JSON depends on the caller's role: never cached
        items: list[str] = []
        for issue in page:
            r = issue.repo
            if r.id not in repos:
                repos[r.id] = dumps(r.to_dict(base, role=call.role(r)))
            items.append(f'{issue.wire(base)[:-1]},"repository":{repos[r.id]}}}')
        return raw_list(items)
    texts = [issue.wire(base) for issue in page]
    if repo is None:
        return raw_list(texts)
    kept: dict[tuple[str, str], tuple[list[RawJSON], RawJSON]] = repo.extra.setdefault(_PAGES, {})
    key = (base, call.raw_query)
    last = kept.get(key)
    if last is not None and len(last[0]) == len(texts) and all(a is b for a, b in zip(last[0], texts, strict=True)):
        return last[1]
    body = raw_list(texts)
    if len(kept) >= _PAGES_KEPT:
        kept.clear()
    kept[key] = (texts, body)
    return body


# --- listing --------------------------------------------------------------------------------


def _filtered(call: Call, issues: list[Issue] | None, repo: Repo | None = None) -> list[Issue]:
    """``issues`` (None: all of ``repo``'s) that pass the query's filters, in its order."""
    q = call.query
    state = call.q_enum("state", ("open", "closed", "all"), "open")
    labels = [n.strip().lower() for n in q.get("labels", "").split(",") if n.strip()]
    since = call.q_time("since")
    sort = call.q_enum("sort", ("created", "updated", "comments"), "created")
    direction = call.q_enum("direction", ("asc", "desc"), "desc")
    if issues is None:
        assert repo is not None
        if (sort == "created" and not labels and since is None
                and not any(key in q for key in ("milestone", "assignee", "creator", "mentioned"))):
            return by_created(repo, state, direction == "desc")  # the default list: kept sorted, O(1)
        issues = list(repo.issues.values())
    out: list[Issue] = []
    for issue in issues:
        if state != "all" and issue.state != state:
            continue
        if labels and not set(labels) <= {label.name.lower() for label in issue.labels}:
            continue
        if since is not None and issue.updated_at < since:
            continue
        if "milestone" in q:
            m = q["milestone"]
            if m == "none" and issue.milestone is not None:
                continue
            if m == "*" and issue.milestone is None:
                continue
            if m not in ("none", "*") and (issue.milestone is None or str(issue.milestone.number) != m):
                continue
        if "assignee" in q:
            a = q["assignee"].lower()
            if a == "none" and issue.assignees:
                continue
            if a == "*" and not issue.assignees:
                continue
            if a not in ("none", "*") and all(x.key != a for x in issue.assignees):
                continue
        if "creator" in q and issue.user.key != q["creator"].lower():
            continue
        if "mentioned" in q and not issue.mentions(q["mentioned"]):
            continue
        out.append(issue)
    return sorted(out, key=_SORTS[sort], reverse=direction == "desc")


@route("GET", "/repos/{owner}/{repo}/issues")
def issues_list_for_repo(call: Call) -> RawJSON:
    repo = call.repo()
    for key in ("assignee", "creator", "mentioned"):
        value = call.query.get(key)
        if value and value not in ("none", "*") and call.state.account(value) is None:
            raise errors.ValidationFailed({"value": value, "resource": "Issue", "field": key, "code": "invalid"})
    return _page(call, _filtered(call, None, repo), repo=repo)


def _mine(call: Call, repos: list[Repo]) -> RawJSON:
    user = call.user
    mode = call.q_enum("filter", ("assigned", "created", "mentioned", "subscribed", "repos", "all"), "assigned")
    picked: list[Issue] = []
    for repo in repos:
        if call.role(repo) is None:
            continue
        for issue in repo.issues.values():
            if ((mode == "assigned" and any(a.key == user.key for a in issue.assignees))
                    or (mode == "created" and issue.user.key == user.key)
                    or (mode == "mentioned" and issue.mentions(user.login))
                    or (mode == "subscribed" and issue.involves(user))
                    or mode in ("repos", "all")):
                picked.append(issue)
    return _page(call, _filtered(call, picked), with_repo=True)


@route("GET", "/issues")
def issues_list(call: Call) -> RawJSON:
    user = call.user
    repos = [r for r in call.state.repos.values() if r.owner.key == user.key or user.key in r.collaborators
             or (user.key in getattr(r.owner, "members", {}))]
    return _mine(call, repos)


@route("GET", "/user/issues")
def issues_list_for_authenticated_user(call: Call) -> RawJSON:
    user = call.user
    return _mine(call, [r for r in call.state.repos.values() if r.owner.key == user.key or user.key in r.collaborators])


@route("GET", "/orgs/{org}/issues")
def issues_list_for_org(call: Call) -> RawJSON:
    org = call.state.orgs.get(call.params["org"].lower())
    if org is None:
        raise errors.NotFound()
    return _mine(call, call.state.repos_of(org))


# --- one issue ------------------------------------------------------------------------------


@route("GET", "/repos/{owner}/{repo}/issues/{issue_number}")
def issues_get(call: Call) -> RawJSON:
    repo = call.repo()
    return RawJSON(call.issue(repo).wire(call.base, single=True))


@route("POST", "/repos/{owner}/{repo}/issues")
def issues_create(call: Call) -> Reply:
    repo = call.repo()
    call.user  # noqa: B018  (anonymous callers get 401 before validation)
    if not repo.has_issues:
        raise errors.Gone("Issues are disabled for this repo")
    if "title" not in call.body:
        raise errors.invalid_request('"title" wasn\'t supplied.')
    title = call.field_str("title", resource="Issue", required=True) or ""
    if not title.strip():
        raise errors.missing_field("Issue", "title")
    body = call.field_str("body")
    triage = call.can(repo, "triage")
    labels = labels_by_name(call, repo, call.field_list("labels") or []) if triage else []
    assignees = (_assignees(call, repo) or []) if triage else []
    milestone = _milestone(call, repo) if triage else None
    issue = Issue(repo, call.state.ids.next("issue"), repo.new_number(), title, call.user, call.now(), body=body,
                  actor=call.actor)
    issue.labels, issue.assignees, issue.milestone = labels, assignees, milestone
    changes.open_issue(call, issue)
    return created(render(call, issue, single=True), f"{call.base}/repos/{repo.full_name}/issues/{issue.number}")


@route("PATCH", "/repos/{owner}/{repo}/issues/{issue_number}")
def issues_update(call: Call) -> dict[str, Any]:
    repo = call.repo()
    issue = call.issue(repo)
    author = call.user.key == issue.user.key
    triage = call.can(repo, "triage")
    if not (author or triage):
        raise errors.MustHavePush()
    title = call.field_str("title", allow_none=False)
    if title is not None and not title.strip():
        raise errors.missing_field("Issue", "title")
    state = call.field_str("state", allow_none=False)
    if state is not None and state not in ("open", "closed"):
        raise errors.invalid_field("Issue", "state", state)
    reason = call.field_str("state_reason")
    if reason is not None and reason not in ("completed", "not_planned", "duplicate", "reopened"):
        raise errors.invalid_field("Issue", "state_reason", reason)
    labels = call.field_list("labels")
    assignees = _assignees(call, repo)
    milestone = _milestone(call, repo) if "milestone" in call.body else issue.milestone
    if title is not None or "body" in call.body:
        changes.edit(call, issue, title=title, body=call.field_str("body"), body_given="body" in call.body)
    if triage:
        if labels is not None:
            changes.set_labels(call, issue, labels_by_name(call, repo, labels))
        if assignees is not None:
            changes.set_assignees(call, issue, assignees)
        changes.set_milestone(call, issue, milestone)
    if state is not None:
        changes.set_state(call, issue, state, reason if state == "closed" else None)
    elif reason in ("completed", "not_planned", "duplicate"):
        changes.set_state(call, issue, "closed", reason)
    return render(call, issue, single=True)


@route("PUT", "/repos/{owner}/{repo}/issues/{issue_number}/lock")
def issues_lock(call: Call) -> Reply:
    repo = call.repo(need="triage")
    issue = call.issue(repo)
    reason = call.field_str("lock_reason")
    if reason is not None and reason not in LOCK_REASONS:
        raise errors.invalid_field("Issue", "lock_reason", reason)
    if not issue.locked:
        at = call.now()
        issue.locked, issue.active_lock_reason = True, reason
        changes.log(call, issue, "locked", at, lock_reason=reason)
        changes.touch(issue, at)
        changes.publish(call, "issue_locked", issue, lock_reason=reason)
    return no_content()


@route("DELETE", "/repos/{owner}/{repo}/issues/{issue_number}/lock")
def issues_unlock(call: Call) -> Reply:
    repo = call.repo(need="triage")
    issue = call.issue(repo)
    if issue.locked:
        at = call.now()
        issue.locked, issue.active_lock_reason = False, None
        changes.log(call, issue, "unlocked", at)
        changes.touch(issue, at)
        changes.publish(call, "issue_unlocked", issue, lock_reason=None)
    return no_content()


# --- assignees ------------------------------------------------------------------------------


@route("GET", "/repos/{owner}/{repo}/assignees")
def issues_list_assignees(call: Call) -> list[dict[str, Any]]:
    repo = call.repo()
    users = [u for u in call.state.users.values() if assignable(call, repo, u.login) is not None]
    return [u.simple(call.base) for u in call.page(sorted(users, key=lambda u: u.login.lower()))]


@route("GET", "/repos/{owner}/{repo}/assignees/{assignee}")
def issues_check_user_can_be_assigned(call: Call) -> Reply:
    repo = call.repo()
    if assignable(call, repo, call.params["assignee"]) is None:
        raise errors.NotFound()
    return no_content()


@route("GET", "/repos/{owner}/{repo}/issues/{issue_number}/assignees/{assignee}")
def issues_check_user_can_be_assigned_to_issue(call: Call) -> Reply:
    repo = call.repo()
    call.issue(repo)
    if assignable(call, repo, call.params["assignee"]) is None:
        raise errors.NotFound()
    return no_content()


@route("POST", "/repos/{owner}/{repo}/issues/{issue_number}/assignees")
def issues_add_assignees(call: Call) -> Reply:
    repo = call.repo()
    issue = call.issue(repo)
    if call.can(repo, "triage"):
        for name in call.field_list("assignees") or []:
            account = assignable(call, repo, name)
            if account is not None:
                changes.assign(call, issue, account)
    return created(render(call, issue))


@route("DELETE", "/repos/{owner}/{repo}/issues/{issue_number}/assignees")
def issues_remove_assignees(call: Call) -> dict[str, Any]:
    repo = call.repo()
    issue = call.issue(repo)
    if call.can(repo, "triage"):
        for name in call.field_list("assignees") or []:
            account = call.state.user(name)
            if account is not None:
                changes.unassign(call, issue, account)
    return render(call, issue)
