"""World-rule actions on GitHub, made through the REST API as the ``from`` user (a token of
that account, traced with actor ``world``), so they are traced, publish the domain
events the agent's own calls would, and are visible through the API:

- ``github.comment``: ``POST /repos/{o}/{r}/issues/{n}/comments`` (issues and pulls);
- ``github.review``: ``POST /repos/{o}/{r}/pulls/{n}/reviews`` with ``event`` and ``body``;
- ``github.merge``: ``PUT /repos/{o}/{r}/pulls/{n}/merge`` with ``merge_method``;
- ``github.commit``: one commit of every file through the Git database API (ref, commit,
  tree with ``base_tree``, commit, ref update; a new branch starts at the default
  branch's tip);
- ``github.issue``: ``POST /repos/{o}/{r}/issues``.

Each answers what went wrong (``github.merge: 405 Pull Request is not mergeable``) or None.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from ancha.world.kernel.plain_numbers import is_plain_int
from ancha.world.tools.github.action_bodies import (
    CommentActionFile,
    CommitActionFile,
    IssueActionFile,
    MergeActionFile,
    ReviewActionFile,
)
from ancha.world.tools.github.actor import error_text

if TYPE_CHECKING:
    from ancha.world.kernel.port import WorldPort
    from ancha.world.tools.github.replica import GitHubReplica

ACTOR = "world"


def _id(world: WorldPort, ref: str) -> str:
    """The id a ref names (an id written as it is stays as it is: scenes built by hand)."""
    record = world.refs.get(ref.removeprefix("$").rpartition(".")[2])
    return record.id if record is not None else ref


def _number(world: WorldPort, ref: str) -> tuple[str, str]:
    """``owner/repo`` and the number of an issue or pull ref."""
    repo, _, number = _id(world, ref).rpartition("#")
    if not repo or not is_plain_int(number):
        raise LookupError(f"${ref} is not an issue or a pull request of this world")
    return repo, number


def _call(replica: GitHubReplica, login: str, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    return replica.world_actor.call(login, ACTOR, method, path, body)


def comment(body: dict[str, Any], replica: GitHubReplica, world: WorldPort) -> str | None:
    spec = CommentActionFile.model_validate(body)
    repo, number = _number(world, spec.issue)
    status, answer = _call(replica, _id(world, spec.from_), "POST", f"/repos/{repo}/issues/{number}/comments",
                           {"body": spec.body})
    return None if status == 201 else f"github.comment: {error_text(status, answer)}"


def review(body: dict[str, Any], replica: GitHubReplica, world: WorldPort) -> str | None:
    spec = ReviewActionFile.model_validate(body)
    repo, number = _number(world, spec.pull)
    payload: dict[str, Any] = {"event": spec.event}
    if spec.body:
        payload["body"] = spec.body
    status, answer = _call(replica, _id(world, spec.from_), "POST", f"/repos/{repo}/pulls/{number}/reviews", payload)
    return None if status == 200 else f"github.review: {error_text(status, answer)}"


def merge(body: dict[str, Any], replica: GitHubReplica, world: WorldPort) -> str | None:
    spec = MergeActionFile.model_validate(body)
    repo, number = _number(world, spec.pull)
    status, answer = _call(replica, _id(world, spec.from_), "PUT", f"/repos/{repo}/pulls/{number}/merge",
                           {"merge_method": spec.method})
    return None if status == 200 else f"github.merge: {error_text(status, answer)}"


def issue(body: dict[str, Any], replica: GitHubReplica, world: WorldPort) -> str | None:
    spec = IssueActionFile.model_validate(body)
    repo = _id(world, spec.repo)
    payload: dict[str, Any] = {"title": spec.title, "body": spec.body}
    if spec.labels:
        payload["labels"] = spec.labels
    if spec.assignees:
        payload["assignees"] = [_id(world, a) for a in spec.assignees]
    status, answer = _call(replica, _id(world, spec.from_), "POST", f"/repos/{repo}/issues", payload)
    return None if status == 201 else f"github.issue: {error_text(status, answer)}"


def commit(body: dict[str, Any], replica: GitHubReplica, world: WorldPort) -> str | None:
    spec = CommitActionFile.model_validate(body)
    repo, login = _id(world, spec.repo), _id(world, spec.from_)
    try:
        _commit(replica, repo, login, spec)
    except _Refused as refused:
        return f"github.commit: {refused}"
    return None


class _Refused(Exception):
    pass


def _expect(replica: GitHubReplica, login: str, method: str, path: str, body: Any, status: int) -> dict[str, Any]:
    got, answer = _call(replica, login, method, path, body)
    if got != status or not isinstance(answer, dict):
        raise _Refused(f"{method} {path}: {error_text(got, answer)}")
    return answer


def _commit(replica: GitHubReplica, repo: str, login: str, spec: CommitActionFile) -> str:
    """Commit ``spec.files`` on ``spec.branch`` through the Git database API; the new SHA."""
    base = f"/repos/{repo}"
    branch = spec.branch
    if branch is None:
        branch = str(_expect(replica, login, "GET", base, None, 200).get("default_branch") or "main")
    status, tip_ref = _call(replica, login, "GET", f"{base}/git/ref/heads/{quote(branch)}")
    is_new = status == 404
    if is_new:
        default = str(_expect(replica, login, "GET", base, None, 200).get("default_branch") or "main")
        tip_ref = _expect(replica, login, "GET", f"{base}/git/ref/heads/{quote(default)}", None, 200)
    elif status != 200 or not isinstance(tip_ref, dict):
        raise _Refused(f"GET {base}/git/ref/heads/{branch}: {error_text(status, tip_ref)}")
    tip = str(tip_ref["object"]["sha"])
    parent = _expect(replica, login, "GET", f"{base}/git/commits/{tip}", None, 200)
    entries = [{"path": path, "mode": "100644", "type": "blob", "content": text} if text is not None
               else {"path": path, "mode": "100644", "type": "blob", "sha": None}
               for path, text in spec.files.items()]
    tree = _expect(replica, login, "POST", f"{base}/git/trees",
                   {"base_tree": parent["tree"]["sha"], "tree": entries}, 201)
    made = _expect(replica, login, "POST", f"{base}/git/commits",
                   {"message": spec.message, "tree": tree["sha"], "parents": [tip]}, 201)
    sha = str(made["sha"])
    if is_new:
        _expect(replica, login, "POST", f"{base}/git/refs", {"ref": f"refs/heads/{branch}", "sha": sha}, 201)
    else:
        _expect(replica, login, "PATCH", f"{base}/git/refs/heads/{quote(branch)}", {"sha": sha}, 200)
    return sha
