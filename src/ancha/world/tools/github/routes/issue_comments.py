"""Issue comments (the conversation of issues and pull requests)."""

from __future__ import annotations

from typing import Any

from ancha.world.tools.github import changes, errors
from ancha.world.tools.github.call import Call, Reply, created, no_content
from ancha.world.tools.github.models import IssueComment, Repo
from ancha.world.tools.github.models.wire import RawJSON, raw_list
from ancha.world.tools.github.router import route

MAX_BODY = 65536


def _body(call: Call) -> str:
    if "body" not in call.body:
        raise errors.invalid_request('"body" wasn\'t supplied.')
    body = call.field_str("body", resource="IssueComment", required=True) or ""
    if not body.strip():
        raise errors.missing_field("IssueComment", "body")
    if len(body) > MAX_BODY:
        raise errors.ValidationFailed({"resource": "IssueComment", "code": "custom", "field": "body",
                                       "message": "body is too long (maximum is 65536 characters)"})
    return body


def _comment(call: Call, repo: Repo) -> IssueComment:
    comment = call.state.comments.get(call.number("comment_id"))
    if comment is None or comment.issue.repo is not repo:
        raise errors.NotFound()
    return comment


def _since(call: Call, comments: list[IssueComment]) -> list[IssueComment]:
    since = call.q_time("since")
    return [c for c in comments if since is None or c.updated_at >= since]


@route("GET", "/repos/{owner}/{repo}/issues/{issue_number}/comments")
def issues_list_comments(call: Call) -> RawJSON:
    repo = call.repo()
    issue = call.issue(repo)
    return raw_list(c.wire(call.base) for c in call.page(_since(call, issue.comments)))


@route("GET", "/repos/{owner}/{repo}/issues/comments")
def issues_list_comments_for_repo(call: Call) -> RawJSON:
    repo = call.repo()
    sort = call.q_enum("sort", ("created", "updated"), "created")
    direction = call.q_enum("direction", ("asc", "desc"), "asc")
    comments = [c for issue in repo.issues.values() for c in issue.comments]
    comments.sort(key=(lambda c: c.created_at) if sort == "created" else (lambda c: c.updated_at),
                  reverse=direction == "desc")
    return raw_list(c.wire(call.base) for c in call.page(_since(call, comments)))


@route("POST", "/repos/{owner}/{repo}/issues/{issue_number}/comments")
def issues_create_comment(call: Call) -> Reply:
    repo = call.repo()
    issue = call.issue(repo)
    call.user  # noqa: B018  (401 before validation)
    body = _body(call)
    if issue.locked and not call.can(repo, "write"):
        raise errors.Forbidden("Unable to create comment because issue is locked.")
    comment = changes.add_comment(call, issue, body)
    return created(comment.to_dict(call.base), f"{call.base}/repos/{repo.full_name}/issues/comments/{comment.id}")


@route("GET", "/repos/{owner}/{repo}/issues/comments/{comment_id}")
def issues_get_comment(call: Call) -> RawJSON:
    return RawJSON(_comment(call, call.repo()).wire(call.base))


@route("PATCH", "/repos/{owner}/{repo}/issues/comments/{comment_id}")
def issues_update_comment(call: Call) -> dict[str, Any]:
    repo = call.repo()
    comment = _comment(call, repo)
    if comment.user.key != call.user.key and not call.can(repo, "write"):
        raise errors.MustHavePush()
    changes.edit_comment(call, comment, _body(call))
    return comment.to_dict(call.base)


@route("DELETE", "/repos/{owner}/{repo}/issues/comments/{comment_id}")
def issues_delete_comment(call: Call) -> Reply:
    repo = call.repo()
    comment = _comment(call, repo)
    if comment.user.key != call.user.key and not call.can(repo, "write"):
        raise errors.MustHavePush()
    changes.delete_comment(call, comment)
    return no_content()
