"""Reactions on issues (and pull requests), issue comments, review comments and releases.

Anyone who can read a repository may react; reacting again with the same content gives
the existing reaction back with 200 instead of 201, as GitHub does. A reaction is
deleted by whoever made it (or a repository admin). State is ``models.reactions``, kept
per repository; what the subjects' JSON shows as their ``reactions`` rollup follows from it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ancha.world.tools.github import errors
from ancha.world.tools.github.call import Call, Reply, created, no_content
from ancha.world.tools.github.models import Repo
from ancha.world.tools.github.models.reactions import CONTENTS, Subject, reactions_of
from ancha.world.tools.github.router import route
from ancha.world.tools.github.routes.releases import releases_of

RELEASE_CONTENTS = ("+1", "laugh", "heart", "hooray", "rocket", "eyes")
"""Releases take fewer reactions than issues and comments."""

Find = Callable[[Call, Repo], Subject]


def _issue(call: Call, repo: Repo) -> Subject:
    return "issue", call.issue(repo).id


def _issue_comment(call: Call, repo: Repo) -> Subject:
    comment = call.state.comments.get(call.number("comment_id"))
    if comment is None or comment.issue.repo is not repo:
        raise errors.NotFound()
    return "issue_comment", comment.id


def _review_comment(call: Call, repo: Repo) -> Subject:
    wanted = call.number("comment_id")
    for pull in repo.pulls.values():
        if any(c.id == wanted for c in pull.review_comments):
            return "review_comment", wanted
    raise errors.NotFound()


def _release(call: Call, repo: Repo) -> Subject:
    wanted = call.number("release_id")
    release = next((r for r in releases_of(repo) if r.id == wanted and (not r.draft or call.can(repo, "write"))), None)
    if release is None:
        raise errors.NotFound()
    return "release", release.id


def _list(call: Call, find: Find, allowed: tuple[str, ...]) -> list[dict[str, Any]]:
    repo = call.repo()
    subject = find(call, repo)
    content = call.q_enum("content", allowed, "") if call.query.get("content") else None
    return [r.to_dict(call.base) for r in call.page(reactions_of(repo).of(subject, content))]


def _create(call: Call, find: Find, allowed: tuple[str, ...]) -> Reply:
    user = call.user
    repo = call.repo()
    subject = find(call, repo)
    content = call.field_str("content", resource="Reaction", required=True)
    if content not in allowed:
        raise errors.invalid_request(f"For 'content', \"{content}\" is not one of {', '.join(allowed)}.")
    reaction, new = reactions_of(repo).add(subject, user, content, call.now(), call.state.ids.next("reaction"))
    body = reaction.to_dict(call.base)
    return created(body) if new else Reply(200, body)


def _delete(call: Call, find: Find) -> Reply:
    user = call.user
    repo = call.repo()
    subject = find(call, repo)
    store = reactions_of(repo)
    reaction = store.find(subject, call.number("reaction_id"))
    if reaction is None:
        raise errors.NotFound()
    if reaction.user.key != user.key and not call.can(repo, "admin"):
        raise errors.Forbidden("You can only delete your own reactions.")
    store.remove(subject, reaction)
    return no_content()


_ISSUE = "/repos/{owner}/{repo}/issues/{issue_number}/reactions"
_COMMENT = "/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions"
_REVIEW = "/repos/{owner}/{repo}/pulls/comments/{comment_id}/reactions"
_RELEASE = "/repos/{owner}/{repo}/releases/{release_id}/reactions"


@route("GET", _ISSUE)
def reactions_list_for_issue(call: Call) -> list[dict[str, Any]]:
    return _list(call, _issue, CONTENTS)


@route("POST", _ISSUE)
def reactions_create_for_issue(call: Call) -> Reply:
    return _create(call, _issue, CONTENTS)


@route("DELETE", _ISSUE + "/{reaction_id}")
def reactions_delete_for_issue(call: Call) -> Reply:
    return _delete(call, _issue)


@route("GET", _COMMENT)
def reactions_list_for_issue_comment(call: Call) -> list[dict[str, Any]]:
    return _list(call, _issue_comment, CONTENTS)


@route("POST", _COMMENT)
def reactions_create_for_issue_comment(call: Call) -> Reply:
    return _create(call, _issue_comment, CONTENTS)


@route("DELETE", _COMMENT + "/{reaction_id}")
def reactions_delete_for_issue_comment(call: Call) -> Reply:
    return _delete(call, _issue_comment)


@route("GET", _REVIEW)
def reactions_list_for_pull_request_review_comment(call: Call) -> list[dict[str, Any]]:
    return _list(call, _review_comment, CONTENTS)


@route("POST", _REVIEW)
def reactions_create_for_pull_request_review_comment(call: Call) -> Reply:
    return _create(call, _review_comment, CONTENTS)


@route("DELETE", _REVIEW + "/{reaction_id}")
def reactions_delete_for_pull_request_comment(call: Call) -> Reply:
    return _delete(call, _review_comment)


@route("GET", _RELEASE)
def reactions_list_for_release(call: Call) -> list[dict[str, Any]]:
    return _list(call, _release, RELEASE_CONTENTS)


@route("POST", _RELEASE)
def reactions_create_for_release(call: Call) -> Reply:
    return _create(call, _release, RELEASE_CONTENTS)


@route("DELETE", _RELEASE + "/{reaction_id}")
def reactions_delete_for_release(call: Call) -> Reply:
    return _delete(call, _release)
