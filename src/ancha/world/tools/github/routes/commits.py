"""Commits: list (by sha, path, author, committer, time), get one with its files, compare
``base...head``, and the combined status of a ref.

History is walked newest first from the repository's ``RepoGit``.
"""

from __future__ import annotations

from typing import Any

from ancha.world.tools.github import errors
from ancha.world.tools.github.call import Call
from ancha.world.tools.github.git_calls import commit_of, repo_git
from ancha.world.tools.github.git_objects import CommitInfo
from ancha.world.tools.github.git_store import UnknownRevision
from ancha.world.tools.github.git_wire import Accounts, commit, diff_entry
from ancha.world.tools.github.models.wire import web_url
from ancha.world.tools.github.router import route

COMPARE_PER_PAGE = 250


def _people(call: Call, name: str) -> set[str] | None:
    """The emails a login or email in ``author``/``committer`` stands for."""
    value = call.query.get(name)
    if not value:
        return None
    emails = {value.lower()}
    user = call.state.user(value)
    if user is not None:
        emails.add(f"{user.id}+{user.login}@users.noreply.github.com".lower())
        emails.add(f"{user.login}@users.noreply.github.com".lower())
        if user.email:
            emails.add(user.email.lower())
    return emails


@route("GET", "/repos/{owner}/{repo}/commits")
def repos_list_commits(call: Call) -> Any:
    repo, git = repo_git(call)
    if not git.branches():
        raise errors.Conflict("Git Repository is empty.")
    sha = call.query.get("sha") or None
    if sha is not None and git.resolve(sha) is None:
        raise errors.NotFound(f"No commit found for SHA: {sha}")
    authors, committers = _people(call, "author"), _people(call, "committer")

    def wanted(info: CommitInfo) -> bool:
        return ((authors is None or info.author.email.lower() in authors or info.author.name.lower() in authors)
                and (committers is None or info.committer.email.lower() in committers))

    path = call.query.get("path", "").strip("/") or None
    history = git.log(sha or git.default_branch, path=path, since=call.q_time("since"),
                      until=call.q_time("until"), author=wanted)
    window = call.page(list(history))
    accounts = Accounts(call.state)
    return [commit(call.base, repo, info, accounts) for info in window]


@route("GET", "/repos/{owner}/{repo}/commits/{ref}",
       partial="no diff/patch media types; files are not paginated past 300")
def repos_get_commit(call: Call) -> dict[str, Any]:
    repo, git = repo_git(call)
    ref = call.params["ref"]
    sha = git.resolve(ref)
    info = git.commit_info(sha) if sha is not None else None
    if info is None:
        raise errors.Unprocessable(f"No commit found for SHA: {ref}")
    before = git.commit_info(info.parents[0]) if info.parents else None
    files = git.diff(before.tree if before is not None else None, info.tree)[:300]
    return commit(call.base, repo, info, Accounts(call.state), files)


@route("GET", "/repos/{owner}/{repo}/compare/{basehead}", partial="no diff/patch media types; same-repository refs only")
@route("GET", "/repos/{owner}/{repo}/compare/{base}...{head}",
       partial="no diff/patch media types; same-repository refs only")
def repos_compare_commits(call: Call) -> dict[str, Any]:
    repo, git = repo_git(call)
    basehead = call.params.get("basehead", "")
    base, sep, head = basehead.partition("...")
    if not sep:
        base, sep, head = basehead.partition("..")
    if not sep or not base or not head:
        raise errors.NotFound()
    try:
        comparison = git.compare(base, head)
    except UnknownRevision:
        raise errors.NotFound() from None
    if comparison.merge_base is None:
        raise errors.NotFound(f"No common ancestor between {base} and {head}.")
    accounts = Accounts(call.state)
    base_info = git.commit_info(comparison.base)
    merge_base = git.commit_info(comparison.merge_base)
    assert base_info is not None and merge_base is not None
    full = repo.full_name
    per_page = call.q_int("per_page", COMPARE_PER_PAGE, 1, COMPARE_PER_PAGE)
    page = call.q_int("page", 1, 1)
    shown = comparison.commits[(page - 1) * per_page:page * per_page]
    return {
        "url": f"{call.base}/repos/{full}/compare/{basehead}",
        "html_url": f"{web_url(call.base)}/{full}/compare/{basehead}",
        "permalink_url": f"{web_url(call.base)}/{full}/compare/{full.split('/')[0]}:{comparison.base[:7]}..."
                         f"{full.split('/')[0]}:{comparison.head[:7]}",
        "diff_url": f"{web_url(call.base)}/{full}/compare/{basehead}.diff",
        "patch_url": f"{web_url(call.base)}/{full}/compare/{basehead}.patch",
        "base_commit": commit(call.base, repo, base_info, accounts),
        "merge_base_commit": commit(call.base, repo, merge_base, accounts),
        "status": comparison.status, "ahead_by": comparison.ahead_by, "behind_by": comparison.behind_by,
        "total_commits": comparison.ahead_by,
        "commits": [commit(call.base, repo, info, accounts) for info in shown],
        "files": [diff_entry(call.base, repo, f, comparison.head) for f in comparison.files[:300]],
    }


@route("GET", "/repos/{owner}/{repo}/commits/{ref}/status",
       partial="reads statuses other routes keep in Repo.extra['statuses']; none are created here")
def repos_get_combined_status_for_ref(call: Call) -> dict[str, Any]:
    repo, git = repo_git(call)
    ref, sha = commit_of(call, git, call.params.get("ref"))
    kept = repo.extra.get("statuses", [])
    latest: dict[str, dict[str, Any]] = {}
    for status in kept if isinstance(kept, list) else []:
        if isinstance(status, dict) and status.get("sha") == sha:
            latest[str(status.get("context", "default"))] = status
    states = [s.get("state") for s in latest.values()]
    if not states:
        combined = "pending"
    elif any(s in ("error", "failure") for s in states):
        combined = "failure"
    elif all(s == "success" for s in states):
        combined = "success"
    else:
        combined = "pending"
    full = repo.full_name
    return {"state": combined, "statuses": [{k: v for k, v in s.items() if k != "sha"} for s in latest.values()],
            "sha": sha, "total_count": len(latest),
            "repository": repo.to_dict(call.base),
            "commit_url": f"{call.base}/repos/{full}/commits/{sha}",
            "url": f"{call.base}/repos/{full}/commits/{sha}/status"}
