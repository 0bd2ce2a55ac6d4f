"""Merging a pull request: ``PUT .../merge`` (merge, squash or rebase) and ``GET .../merge``.

The merge moves the base branch through ``RepoGit.merge``, so git clients, the REST
contents and commits APIs, GraphQL and deployments see the new tip at once. GitHub's
refusals, in its order: the pull is closed or merged (405), the method is not allowed
here (405), ``sha`` is not the head (409), branch protection is not satisfied (405),
the branches conflict (405).
"""

from __future__ import annotations

from typing import Any

from ancha.world.tools.github import changes, errors
from ancha.world.tools.github.call import Call, Reply, no_content
from ancha.world.tools.github.git_calls import WEB_COMMITTER, identity_of, protection, repo_git
from ancha.world.tools.github.git_merge import MergeConflict
from ancha.world.tools.github.git_store import RefError, RepoGit
from ancha.world.tools.github.models import Pull
from ancha.world.tools.github.router import route
from ancha.world.tools.github.routes.pulls import approvals, comparison, the_pull

METHODS = ("merge", "squash", "rebase")
_NOT_ALLOWED = {"merge": "Merge commits are not allowed on this repository.",
                "squash": "Squash merges are not allowed on this repository.",
                "rebase": "Rebase merges are not allowed on this repository."}


@route("GET", "/repos/{owner}/{repo}/pulls/{pull_number}/merge")
def pulls_check_if_merged(call: Call) -> Reply:
    repo = call.repo()
    if not the_pull(call, repo).merged:
        raise errors.NotFound()
    return no_content()


def _checks_passing(pull: Pull, contexts: list[str]) -> str | None:
    """The first required context whose latest status or check run on the head is not a success."""
    latest: dict[str, str] = {}
    kept = pull.repo.extra.get("statuses", [])
    for status in kept if isinstance(kept, list) else []:
        if isinstance(status, dict) and status.get("sha") == pull.head_sha:
            latest[str(status.get("context"))] = str(status.get("state"))
    for run in pull.repo.extra.get("check_runs", []):
        if getattr(run, "head_sha", None) == pull.head_sha:
            latest[str(run.name)] = "success" if run.conclusion in ("success", "neutral", "skipped") else "pending"
    for context in contexts:
        if latest.get(context) != "success":
            return context
    return None


def _guard(call: Call, pull: Pull, git: RepoGit, method: str) -> None:
    repo = pull.repo
    if pull.merged or pull.issue.state != "open":
        raise errors.MethodNotAllowed("Pull Request is not mergeable")
    allowed = {"merge": repo.allow_merge_commit, "squash": repo.allow_squash_merge,
               "rebase": repo.allow_rebase_merge}[method]
    if not allowed:
        raise errors.MethodNotAllowed(_NOT_ALLOWED[method])
    sha = call.field_str("sha")
    if sha is not None and sha != pull.head_sha:
        raise errors.Conflict("Head branch was modified. Review and try the merge again.")
    rule = protection(repo, pull.base)
    bypass = rule is not None and call.role(repo) == "admin" and not rule.enforce_admins
    if rule is not None and not bypass:
        needed = rule.required_reviews or 0
        if needed and approvals(pull) < needed:
            noun = "review is" if needed == 1 else "reviews are"
            raise errors.MethodNotAllowed(f"At least {needed} approving {noun} required by reviewers with "
                                          "write access.")
        missing = _checks_passing(pull, rule.required_checks or [])
        if missing is not None:
            raise errors.MethodNotAllowed(f'Required status check "{missing}" is expected.')
    if not git.mergeable(pull.base_sha, pull.head_sha):
        raise errors.MethodNotAllowed("Pull Request is not mergeable")


def _message(call: Call, pull: Pull, git: RepoGit, method: str) -> str:
    title = call.field_str("commit_title")
    text = call.field_str("commit_message")
    if method == "merge":
        title = title or f"Merge pull request #{pull.number} from {pull.repo.owner.login}/{pull.head}"
        text = pull.issue.title if text is None else text
    else:
        title = title or f"{pull.issue.title} (#{pull.number})"
        if text is None:
            found = git.compare(pull.base_sha, pull.head_sha)
            text = "\n\n".join(f"* {c.message.strip()}" for c in found.commits)
    return f"{title}\n\n{text}" if text else title


def _delete_head(call: Call, pull: Pull, git: RepoGit) -> None:
    """The repository's ``delete_branch_on_merge``: the head branch goes, unless another
    open pull still uses it."""
    if any(p is not pull and p.issue.state == "open" and pull.head in (p.head, p.base)
           for p in pull.repo.pulls.values()):
        return
    try:
        git.delete_ref("refs/heads/" + pull.head, expected=pull.head_sha, actor=call.actor)
    except (LookupError, RefError):
        return  # moved or gone since the merge: GitHub leaves it too
    changes.log(call, pull.issue, "head_ref_deleted", call.now())


@route("PUT", "/repos/{owner}/{repo}/pulls/{pull_number}/merge")
def pulls_merge(call: Call) -> dict[str, Any]:
    repo, git = repo_git(call, need="write")
    pull = the_pull(call, repo)
    method = call.field_str("merge_method", allow_none=False) or "merge"
    if method not in METHODS:
        raise errors.invalid_request(f"For 'merge_method', \"{method}\" is not one of merge, squash, rebase.")
    comparison(pull)
    _guard(call, pull, git, method)
    message = _message(call, pull, git, method)
    at = call.now()
    try:
        sha = git.merge(pull.base, pull.head_sha, method, message, identity_of(call.user), at,
                        committer=WEB_COMMITTER, actor=call.actor)
    except MergeConflict:
        raise errors.MethodNotAllowed("Pull Request is not mergeable") from None
    except (LookupError, RefError):
        raise errors.Conflict("Base branch was modified. Review and try the merge again.") from None
    issue = pull.issue
    pull.merged_at, pull.merged_by, pull.merge_commit_sha = at, call.user, sha
    changes.log(call, issue, "merged", at, commit_id=sha)
    changes.set_state(call, issue, "closed")
    repo.pushed_at = at
    changes.publish(call, "pull_merged", issue, merge_commit_sha=sha, base=pull.base, head=pull.head,
                    merge_method=method)
    if repo.delete_branch_on_merge and pull.head != git.default_branch:
        _delete_head(call, pull, git)
    return {"sha": sha, "merged": True, "message": "Pull Request successfully merged"}
