"""What a ref move sends: ``push``, ``create``/``delete``, and ``pull_request`` ``synchronize``.

Every ref that moves (a ``git push``, the contents or git data API, a merge) sends one
``push``; a branch or tag that did not exist before also sends ``create``, one that
is gone ``delete``; a branch that is the head of open pull requests sends each of them
``synchronize``. GitHub's ``push`` has a repository shape of its own: ``created_at``
and ``pushed_at`` as epoch seconds, ``stargazers``, ``master_branch`` and, for an
organization's repository, ``organization`` as its login.
"""

from __future__ import annotations

from typing import Any

from ancha.world.tools.github.git_objects import moment
from ancha.world.tools.github.models import Account, GitHubState, Org, Repo
from ancha.world.tools.github.models.wire import JSONDict, web_url
from ancha.world.tools.github.webhooks import Webhook, envelope, pull_request, repository

ZERO = "0" * 40
MAX_COMMITS = 2048
"""GitHub lists at most this many commits in one push webhook."""


def ref_webhooks(state: GitHubState, repo: Repo, pusher: Account, base: str, ref: str, before: str | None,
                 after: str | None, at: float) -> list[Webhook]:
    """The webhooks for ``ref`` moving from ``before`` to ``after`` (None: absent)."""
    git = repo.git
    if git is None or (before is None and after is None) or before == after:
        return []
    created, deleted = before is None, after is None
    kind, short = _kind(ref)
    out: list[Webhook] = [("push", push(state, repo, pusher, base, ref, before, after, at))]
    if created and kind is not None:
        out.append(("create", envelope(None, repo, pusher, base, ref=short, ref_type=kind,
                                       master_branch=repo.default_branch, description=repo.description,
                                       pusher_type="user")))
    if deleted and kind is not None:
        out.append(("delete", envelope(None, repo, pusher, base, ref=short, ref_type=kind, pusher_type="user")))
    if kind == "branch" and before is not None and after is not None:
        for pull in repo.pulls.values():
            if pull.head == short and pull.issue.state == "open":
                body = pull_request(pull, base)
                body["head"]["sha"] = after
                out.append(("pull_request", envelope("synchronize", repo, pusher, base, number=pull.number,
                                                     before=before, after=after, pull_request=body)))
    return out


def _kind(ref: str) -> tuple[str | None, str]:
    if ref.startswith("refs/heads/"):
        return "branch", ref.removeprefix("refs/heads/")
    if ref.startswith("refs/tags/"):
        return "tag", ref.removeprefix("refs/tags/")
    return None, ref


def push(state: GitHubState, repo: Repo, pusher: Account, base: str, ref: str, before: str | None,
         after: str | None, at: float) -> JSONDict:
    git = repo.git
    created, deleted = before is None, after is None
    head = git.resolve(after) if after is not None else None
    commits: list[Any] = []
    forced = False
    if head is not None:
        if created:
            default = git.branch_sha(repo.default_branch)
            shown = default if default is not None and ref != "refs/heads/" + repo.default_branch else None
            commits = git.commits_between(shown, head) if shown != head else []
        else:
            old = git.resolve(before) if before is not None else None
            forced = old is not None and not git.is_ancestor(old, head)
            commits = git.commits_between(old, head)
    commits = commits[-MAX_COMMITS:]
    head_info = git.commit_info(head) if head is not None else None
    body: JSONDict = {"ref": ref, "before": before or ZERO, "after": after or ZERO}
    repo_body = repository(repo, base)
    repo_body.update({"created_at": int(repo.created_at), "pushed_at": int(at), "stargazers": 0,
                      "master_branch": repo.default_branch})
    if isinstance(repo.owner, Org):
        repo_body["organization"] = repo.owner.login
    body["repository"] = repo_body
    body["pusher"] = {"name": pusher.login, "email": pusher.email}
    rest = envelope(None, repo, pusher, base)
    if "organization" in rest:
        body["organization"] = rest["organization"]
    body["sender"] = rest["sender"]
    body.update({"created": created, "deleted": deleted, "forced": forced, "base_ref": None,
                 "compare": _compare(base, repo, ref, before, after, created),
                 "commits": [_commit(state, repo, c, base) for c in commits],
                 "head_commit": _commit(state, repo, head_info, base) if head_info is not None else None})
    return body


def _compare(base: str, repo: Repo, ref: str, before: str | None, after: str | None, created: bool) -> str:
    web = f"{web_url(base)}/{repo.full_name}"
    if created:
        return f"{web}/compare/{_kind(ref)[1]}"
    return f"{web}/compare/{(before or ZERO)[:12]}...{(after or ZERO)[:12]}"


def _commit(state: GitHubState, repo: Repo, info: Any, base: str) -> JSONDict:
    parent_tree = None
    if info.parents:
        parent = repo.git.commit_info(info.parents[0])
        parent_tree = parent.tree if parent is not None else None
    added: list[str] = []
    removed: list[str] = []
    modified: list[str] = []
    for change in repo.git.diff(parent_tree, info.tree):
        if change.status == "added":
            added.append(change.filename)
        elif change.status == "removed":
            removed.append(change.filename)
        elif change.status == "renamed":
            added.append(change.filename)
            if change.previous_filename:
                removed.append(change.previous_filename)
        else:
            modified.append(change.filename)
    return {"id": info.sha, "tree_id": info.tree, "distinct": True, "message": info.message,
            "timestamp": _timestamp(info.committer.time, info.committer.offset),
            "url": f"{web_url(base)}/{repo.full_name}/commit/{info.sha}",
            "author": _person(state, info.author), "committer": _person(state, info.committer),
            "added": added, "removed": removed, "modified": modified}


def _person(state: GitHubState, signature: Any) -> JSONDict:
    body: JSONDict = {"name": signature.name, "email": signature.email}
    email = (signature.email or "").lower()
    for account in state.users.values():
        if account.email and account.email.lower() == email:
            body["username"] = account.login
            break
    return body


def _timestamp(seconds: int, offset: int) -> str:
    """ISO 8601 in the committer's own offset, as GitHub writes it (``...T10:00:00+02:00``)."""
    text = moment(seconds, offset).isoformat()
    return text.replace("+00:00", "Z")
