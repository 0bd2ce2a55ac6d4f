"""Pull requests: list, get, create, update, and their commits and files.

A pull's code side is read from the repository's git on every answer: an open pull
compares its branches as they are now (so a push or a merge elsewhere shows at once);
a closed or merged one keeps the shas it recorded, so its commits and files stay what
they were. The conversation side (title, body, state, labels) is ``pull.issue``,
written through ``changes`` so the Issues API sees the same thing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ancha.world.kernel.plain_numbers import is_plain_int
from ancha.world.tools.github import changes, errors
from ancha.world.tools.github.call import Call, Reply, created
from ancha.world.tools.github.git_calls import protection, repo_git
from ancha.world.tools.github.git_history import Comparison
from ancha.world.tools.github.git_store import RepoGit
from ancha.world.tools.github.git_wire import Accounts, commit, diff_entry
from ancha.world.tools.github.models import Issue, Pull, Repo
from ancha.world.tools.github.router import route

MAX_FILES = 3000
MAX_COMMITS = 250
_SORTS: dict[str, Callable[[Pull], float]] = {
    "created": lambda p: p.issue.created_at, "updated": lambda p: p.issue.updated_at,
    "popularity": lambda p: len(p.issue.comments), "long-running": lambda p: p.issue.created_at}


# --- shared by the pull routes ----------------------------------------------------------------


def the_pull(call: Call, repo: Repo, name: str = "pull_number") -> Pull:
    pull = repo.pulls.get(call.number(name))
    if pull is None:
        raise errors.NotFound()
    return pull


def comparison(pull: Pull) -> Comparison | None:
    """base...head of the pull (its recorded shas once closed), refreshing what it records."""
    git = pull.repo.git
    if not isinstance(git, RepoGit):
        return None
    if pull.issue.state == "open":
        pull.base_sha = git.branch_sha(pull.base) or pull.base_sha
        pull.head_sha = git.branch_sha(pull.head) or pull.head_sha
    if not pull.base_sha or not pull.head_sha:
        return None
    try:
        found = git.compare(pull.base_sha, pull.head_sha)
    except LookupError:
        return None
    pull.commits = found.ahead_by
    pull.additions = sum(f.additions for f in found.files)
    pull.deletions = sum(f.deletions for f in found.files)
    pull.changed_files = len(found.files)
    return found


def approvals(pull: Pull) -> int:
    """Approving reviews that count for protection: each reviewer's latest decisive review,
    from someone with write access who is not the author."""
    latest: dict[str, str] = {}
    for review in pull.reviews:
        if review.state in ("APPROVED", "CHANGES_REQUESTED", "DISMISSED"):
            latest[review.user.key] = review.state
    state = pull.repo
    count = 0
    for key, verdict in latest.items():
        if verdict != "APPROVED" or key == pull.issue.user.key:
            continue
        if key == state.owner.key or state.collaborators.get(key) in ("write", "maintain", "admin") \
                or _member_writes(state, key):
            count += 1
    return count


def _member_writes(repo: Repo, key: str) -> bool:
    owner = repo.owner
    members: dict[str, str] = getattr(owner, "members", {})
    if key not in members:
        return False
    if members[key] == "admin" or getattr(owner, "default_permission", "none") in ("write", "admin"):
        return True
    return any(key in team.members and team.repos.get(repo.key) in ("write", "maintain", "admin")
               for team in getattr(owner, "teams", {}).values())


def render(call: Call, pull: Pull, *, full: bool = False) -> dict[str, Any]:
    """``pull-request`` (``full``) or ``pull-request-simple``, with git-derived fields."""
    comparison(pull)
    body = pull.to_dict(call.base, full=full)
    if full and pull.issue.state == "open":
        git = pull.repo.git
        clean = isinstance(git, RepoGit) and git.mergeable(pull.base_sha, pull.head_sha)
        rule = protection(pull.repo, pull.base)
        blocked = rule is not None and bool(rule.required_reviews) and approvals(pull) < (rule.required_reviews or 0)
        body["mergeable"] = clean
        body["rebaseable"] = clean
        body["mergeable_state"] = "dirty" if not clean else "blocked" if blocked else "clean"
    return body


def _branch_name(repo: Repo, value: str) -> str:
    owner, sep, branch = value.partition(":")
    return branch if sep and owner.lower() == repo.owner.login.lower() else value


# --- list and get -------------------------------------------------------------------------------


@route("GET", "/repos/{owner}/{repo}/pulls")
def pulls_list(call: Call) -> list[dict[str, Any]]:
    repo = call.repo()
    state = call.q_enum("state", ("open", "closed", "all"), "open")
    sort = call.q_enum("sort", ("created", "updated", "popularity", "long-running"), "created")
    direction = call.q_enum("direction", ("asc", "desc"), "desc" if sort != "long-running" else "asc")
    head = call.query.get("head")
    base = call.query.get("base")
    picked: list[Pull] = []
    for pull in repo.pulls.values():
        if state != "all" and pull.issue.state != state:
            continue
        if head and _branch_name(repo, head) != pull.head:
            continue  # another owner's ``owner:branch`` names a fork: none are seeded
        if base and base != pull.base:
            continue
        picked.append(pull)
    picked.sort(key=_SORTS[sort], reverse=direction == "desc")
    return [render(call, p) for p in call.page(picked)]


@route("GET", "/repos/{owner}/{repo}/pulls/{pull_number}")
def pulls_get(call: Call) -> dict[str, Any]:
    repo = call.repo()
    return render(call, the_pull(call, repo), full=True)


# --- create and update --------------------------------------------------------------------------


def _open_pull(call: Call, repo: Repo, git: RepoGit, head: str, base: str) -> None:
    """GitHub's checks before a pull opens: both branches exist, head has commits base lacks,
    and no open pull has the same head and base."""
    if git.branch_sha(base) is None:
        raise errors.ValidationFailed({"resource": "PullRequest", "field": "base", "code": "invalid"})
    head_sha = git.branch_sha(head)
    if head_sha is None:
        raise errors.ValidationFailed({"resource": "PullRequest", "field": "head", "code": "invalid"})
    found = git.compare(base, head)
    if found.ahead_by == 0:
        raise errors.ValidationFailed({"resource": "PullRequest", "code": "custom",
                                       "message": f"No commits between {base} and {head}"})
    for other in repo.pulls.values():
        if other.issue.state == "open" and other.head == head and other.base == base:
            raise errors.ValidationFailed({"resource": "PullRequest", "code": "custom",
                                           "message": f"A pull request already exists for "
                                                      f"{repo.owner.login}:{head}."})


@route("POST", "/repos/{owner}/{repo}/pulls", partial="no pulls from forks")
def pulls_create(call: Call) -> Reply:
    repo, git = repo_git(call)
    call.user  # noqa: B018  (anonymous callers get 401 before validation)
    issue_number = call.body.get("issue")
    for name in ("head", "base"):
        if call.field_str(name) is None:
            raise errors.missing_field("PullRequest", name)
    head = _branch_name(repo, call.field_str("head") or "")
    base = call.field_str("base") or ""
    title = call.field_str("title")
    draft = bool(call.field_bool("draft", False))
    can_modify = call.field_bool("maintainer_can_modify", True)
    existing: Issue | None = None
    if issue_number is not None:
        if isinstance(issue_number, bool) or not isinstance(issue_number, int | str) \
                or not is_plain_int(str(issue_number)):
            raise errors.invalid_request(f"For 'issue', {issue_number!r} is not an integer.")
        existing = repo.issues.get(int(issue_number))
        if existing is None or existing.is_pull:
            raise errors.ValidationFailed({"resource": "PullRequest", "field": "issue", "code": "invalid"})
        if existing.user.key != call.user.key and not call.can(repo, "triage"):
            raise errors.MustHavePush()
    elif title is None or not title.strip():
        raise errors.missing_field("PullRequest", "title")
    _open_pull(call, repo, git, head, base)
    at = call.now()
    if existing is None:
        issue = Issue(repo, call.state.ids.next("issue"), repo.new_number(), title or "", call.user, at,
                      body=call.field_str("body"), actor=call.actor)
    else:
        issue = existing
        issue.updated_at = at
    pull = Pull(issue, call.state.ids.next("pull"), head, base, draft=draft)
    pull.maintainer_can_modify = bool(can_modify)
    repo.pulls[issue.number] = pull
    if existing is None:
        changes.open_issue(call, issue)
    comparison(pull)
    changes.publish(call, "pull_opened", issue, title=issue.title, head=head, base=base, draft=draft)
    return created(render(call, pull, full=True), f"{call.base}/repos/{repo.full_name}/pulls/{issue.number}")


@route("PATCH", "/repos/{owner}/{repo}/pulls/{pull_number}")
def pulls_update(call: Call) -> dict[str, Any]:
    repo, git = repo_git(call)
    pull = the_pull(call, repo)
    issue = pull.issue
    if call.user.key != issue.user.key and not call.can(repo, "write"):
        raise errors.MustHavePush()
    title = call.field_str("title", allow_none=False)
    state = call.field_str("state", allow_none=False)
    if state is not None and state not in ("open", "closed"):
        raise errors.invalid_field("PullRequest", "state", state)
    base = call.field_str("base", allow_none=False)
    if base is not None and (git.branch_sha(base) is None or base == pull.head):
        raise errors.ValidationFailed({"resource": "PullRequest", "field": "base", "code": "invalid"})
    if state == "open" and issue.state == "closed":
        if pull.merged:
            raise errors.ValidationFailed({"resource": "PullRequest", "code": "custom",
                                           "message": "Cannot reopen a merged pull request"})
        if git.branch_sha(pull.head) is None:
            raise errors.ValidationFailed({"resource": "PullRequest", "field": "state", "code": "invalid"})
    can_modify = call.field_bool("maintainer_can_modify")
    if can_modify is not None:
        pull.maintainer_can_modify = can_modify
    if title is not None or "body" in call.body:
        changes.edit(call, issue, title=title, body=call.field_str("body"), body_given="body" in call.body)
    if base is not None and base != pull.base:
        previous = pull.base
        pull.base = base
        changes.log(call, issue, "base_ref_changed", call.now())
        changes.touch(issue, call.now())
        changes.publish(call, "pull_edited", issue, changes={"base": {"ref": {"from": previous}}})
    if state is not None:
        comparison(pull)  # record the shas an open pull has now, before it closes
        changes.set_state(call, issue, state)  # publishes pull_closed / pull_reopened
    return render(call, pull, full=True)


# --- commits and files --------------------------------------------------------------------------


@route("GET", "/repos/{owner}/{repo}/pulls/{pull_number}/commits")
def pulls_list_commits(call: Call) -> list[dict[str, Any]]:
    repo = call.repo()
    found = comparison(the_pull(call, repo))
    items = found.commits[:MAX_COMMITS] if found is not None else []
    accounts = Accounts(call.state)
    return [commit(call.base, repo, info, accounts) for info in call.page(items)]


@route("GET", "/repos/{owner}/{repo}/pulls/{pull_number}/files")
def pulls_list_files(call: Call) -> list[dict[str, Any]]:
    repo = call.repo()
    pull = the_pull(call, repo)
    found = comparison(pull)
    items = found.files[:MAX_FILES] if found is not None else []
    return [diff_entry(call.base, repo, f, pull.head_sha) for f in call.page(items)]
