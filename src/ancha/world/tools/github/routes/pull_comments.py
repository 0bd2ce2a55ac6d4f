"""Pull request review comments: on a line of a changed file, or replies in a thread.

A new thread names a ``path`` the pull changes and a ``line`` (or the older
``position``); its ``diff_hunk`` is that file's patch up to the line. A reply
(``in_reply_to`` or ``.../comments/{id}/replies``) joins the thread of the comment
it answers, on the same path and line.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ancha.world.tools.github import changes, errors
from ancha.world.tools.github.call import Call, Reply, created, no_content
from ancha.world.tools.github.git_store import RepoGit
from ancha.world.tools.github.models import Pull, Repo, ReviewComment
from ancha.world.tools.github.router import route
from ancha.world.tools.github.routes.pulls import comparison, the_pull

RESOURCE = "PullRequestReviewComment"
_HUNK = re.compile(r"^@@ -(?P<old>\d+)(?:,\d+)? \+(?P<new>\d+)(?:,\d+)? @@")


def _int(data: dict[str, Any], name: str) -> int | None:
    value = data.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise errors.invalid_request(f"For '{name}', {json.dumps(value)} is not an integer.")
    return value


def _text(data: dict[str, Any], name: str) -> str | None:
    value = data.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise errors.invalid_request(f"For '{name}', {json.dumps(value)} is not a string.")
    return value


def hunk_for(patch: str, line: int, side: str) -> str | None:
    """The diff hunk from its header down to ``line`` (new-file numbering on RIGHT, old on
    LEFT), or None when the line is not part of the diff."""
    lines = patch.splitlines()
    start = 0
    old = new = 0
    for i, text in enumerate(lines):
        match = _HUNK.match(text)
        if match:
            start, old, new = i, int(match["old"]), int(match["new"])
            continue
        if text.startswith("-"):
            here, old = (old, old + 1)
            if side == "LEFT" and here == line:
                return "\n".join(lines[start:i + 1])
        elif text.startswith("+"):
            here, new = (new, new + 1)
            if side == "RIGHT" and here == line:
                return "\n".join(lines[start:i + 1])
        else:
            if (side == "RIGHT" and new == line) or (side == "LEFT" and old == line):
                return "\n".join(lines[start:i + 1])
            old, new = old + 1, new + 1
    return None


class NotInDiff(Exception):
    """A comment's path or line is not part of the pull's diff (``field`` says which)."""

    def __init__(self, field: str) -> None:
        super().__init__(field)
        self.field = field


def new_comment(call: Call, pull: Pull, data: dict[str, Any], commit_id: str, review_id: int | None,
                ) -> ReviewComment:
    """A comment on a file line of the pull's diff (not stored yet); ``NotInDiff`` when the
    path or line is not in it."""
    body = _text(data, "body")
    path = _text(data, "path")
    if body is None or not body.strip():
        raise errors.missing_field(RESOURCE, "body")
    if path is None:
        raise errors.missing_field(RESOURCE, "path")
    line = _int(data, "line")
    position = _int(data, "position")
    side = _text(data, "side") or "RIGHT"
    if side not in ("LEFT", "RIGHT"):
        raise errors.invalid_field(RESOURCE, "side", side)
    found = comparison(pull)
    change = next((f for f in found.files if f.filename == path), None) if found is not None else None
    if change is None:
        raise NotInDiff("path")
    patch = change.patch or ""
    if position is not None and line is None:
        if position < 1 or position >= len(patch.splitlines()):
            raise NotInDiff("line")
        hunk: str | None = "\n".join(patch.splitlines()[:position + 1])
    elif line is not None:
        hunk = hunk_for(patch, line, side)
        if hunk is None:
            raise NotInDiff("line")
    elif data.get("subject_type") == "file":
        hunk = ""
    else:
        raise errors.missing_field(RESOURCE, "line")
    return ReviewComment(pull, call.state.ids.next("review_comment"), call.user, body, path, call.now(),
                         line=line if line is not None else position, side=side, commit_id=commit_id,
                         review_id=review_id, diff_hunk=hunk or "")


def _store(call: Call, pull: Pull, comment: ReviewComment) -> Reply:
    pull.review_comments.append(comment)
    changes.touch(pull.issue, comment.created_at)
    changes.publish(call, "pull_review_comment_created", pull.issue, comment_id=comment.id, path=comment.path,
                    body=comment.body)
    return created(comment.to_dict(call.base), f"{call.base}/repos/{pull.repo.full_name}/pulls/comments/{comment.id}")


def _reply(call: Call, pull: Pull, to: ReviewComment, body: str | None) -> ReviewComment:
    if body is None or not body.strip():
        raise errors.missing_field(RESOURCE, "body")
    root = to.in_reply_to if to.in_reply_to is not None else to.id
    return ReviewComment(pull, call.state.ids.next("review_comment"), call.user, body, to.path, call.now(),
                         line=to.line, side=to.side, commit_id=to.commit_id, review_id=to.review_id,
                         in_reply_to=root, diff_hunk=to.diff_hunk)


def _find(repo: Repo, comment_id: int) -> ReviewComment:
    for pull in repo.pulls.values():
        for comment in pull.review_comments:
            if comment.id == comment_id:
                return comment
    raise errors.NotFound()


def _sorted(call: Call, comments: list[ReviewComment]) -> list[ReviewComment]:
    sort = call.q_enum("sort", ("created", "updated", "created_at"), "created")
    direction = call.q_enum("direction", ("asc", "desc"), "asc")
    since = call.q_time("since")
    picked = [c for c in comments if since is None or c.updated_at >= since]
    key = (lambda c: c.updated_at) if sort == "updated" else (lambda c: c.created_at)
    return sorted(picked, key=key, reverse=direction == "desc")


@route("GET", "/repos/{owner}/{repo}/pulls/{pull_number}/comments")
def pulls_list_review_comments(call: Call) -> list[dict[str, Any]]:
    repo = call.repo()
    pull = the_pull(call, repo)
    return [c.to_dict(call.base) for c in call.page(_sorted(call, list(pull.review_comments)))]


@route("GET", "/repos/{owner}/{repo}/pulls/comments")
def pulls_list_review_comments_for_repo(call: Call) -> list[dict[str, Any]]:
    repo = call.repo()
    everything = [c for p in repo.pulls.values() for c in p.review_comments]
    return [{**c.to_dict(call.base), "position": c.line, "original_position": c.line}
            for c in call.page(_sorted(call, everything))]


@route("GET", "/repos/{owner}/{repo}/pulls/comments/{comment_id}")
def pulls_get_review_comment(call: Call) -> dict[str, Any]:
    repo = call.repo()
    return _find(repo, call.number("comment_id")).to_dict(call.base)


@route("POST", "/repos/{owner}/{repo}/pulls/{pull_number}/comments",
       partial="multi-line ranges (start_line) are not kept; line is not checked against the hunk")
def pulls_create_review_comment(call: Call) -> Reply:
    repo = call.repo()
    pull = the_pull(call, repo)
    call.user  # noqa: B018
    to = call.body.get("in_reply_to")
    if to is not None:
        if isinstance(to, bool) or not isinstance(to, int):
            raise errors.invalid_request(f"For 'in_reply_to', {json.dumps(to)} is not an integer.")
        original = next((c for c in pull.review_comments if c.id == to), None)
        if original is None:
            raise errors.NotFound()
        return _store(call, pull, _reply(call, pull, original, call.field_str("body")))
    comparison(pull)
    commit_id = call.field_str("commit_id") or pull.head_sha
    if isinstance(repo.git, RepoGit) and repo.git.resolve(commit_id) is None:
        raise errors.ValidationFailed({"resource": RESOURCE, "code": "invalid", "field": "commit_id"})
    try:
        comment = new_comment(call, pull, call.body, commit_id, None)
    except NotInDiff as exc:
        field = f"pull_request_review_thread.{exc.field}"
        raise errors.ValidationFailed({"resource": RESOURCE, "code": "custom", "field": field,
                                       "message": f"{field} " + ("must be part of the diff" if exc.field == "line"
                                                                 else "could not be resolved")}) from None
    return _store(call, pull, comment)


@route("POST", "/repos/{owner}/{repo}/pulls/{pull_number}/comments/{comment_id}/replies")
def pulls_create_reply_for_review_comment(call: Call) -> Reply:
    repo = call.repo()
    pull = the_pull(call, repo)
    call.user  # noqa: B018
    original = next((c for c in pull.review_comments if c.id == call.number("comment_id")), None)
    if original is None:
        raise errors.NotFound()
    return _store(call, pull, _reply(call, pull, original, call.field_str("body")))


@route("PATCH", "/repos/{owner}/{repo}/pulls/comments/{comment_id}")
def pulls_update_review_comment(call: Call) -> dict[str, Any]:
    repo = call.repo()
    comment = _find(repo, call.number("comment_id"))
    if comment.user.key != call.user.key and not call.can(repo, "write"):
        raise errors.MustHavePush()
    body = call.field_str("body", required=True, resource=RESOURCE)
    comment.body = body or ""
    comment.updated_at = call.now()
    return comment.to_dict(call.base)


@route("DELETE", "/repos/{owner}/{repo}/pulls/comments/{comment_id}")
def pulls_delete_review_comment(call: Call) -> Reply:
    repo = call.repo()
    comment = _find(repo, call.number("comment_id"))
    if comment.user.key != call.user.key and not call.can(repo, "write"):
        raise errors.MustHavePush()
    comment.pull.review_comments = [c for c in comment.pull.review_comments if c is not comment]
    return no_content()
