"""Pull request reviews (list, get, create, update, submit, dismiss, delete pending) and
requested reviewers (list, request, remove).

A review created without ``event`` is PENDING: only its author sees it until it is
submitted. Submitting a review takes its author off the requested reviewers, as on
GitHub. Approving or requesting changes on your own pull is refused (422).
"""

from __future__ import annotations

from typing import Any, cast

from ancha.world.tools.github import changes, errors
from ancha.world.tools.github.call import Call, Reply, created
from ancha.world.tools.github.models import Account, Pull, Repo, Review, ReviewComment
from ancha.world.tools.github.router import route
from ancha.world.tools.github.routes.pull_comments import NotInDiff, new_comment
from ancha.world.tools.github.routes.pulls import comparison, render, the_pull

EVENTS = {"APPROVE": "APPROVED", "REQUEST_CHANGES": "CHANGES_REQUESTED", "COMMENT": "COMMENTED"}


def refused(message: str) -> errors.Unprocessable:
    """GitHub's 422 whose ``errors`` is a list of sentences."""
    return errors.Unprocessable("Unprocessable Entity", errors=cast(list[dict[str, Any]], [message]))


def _visible(call: Call, review: Review) -> bool:
    return review.state != "PENDING" or (call.caller is not None and call.caller.user.key == review.user.key)


def _review(call: Call, pull: Pull) -> Review:
    wanted = call.number("review_id")
    for review in pull.reviews:
        if review.id == wanted and _visible(call, review):
            return review
    raise errors.NotFound()


def _event(call: Call, pull: Pull, *, required: bool, inline: bool = False) -> str | None:
    event = call.field_str("event", allow_none=not required)
    if event is None:
        if required:
            raise errors.invalid_request('"event" wasn\'t supplied.')
        return None
    if event not in EVENTS:
        raise errors.invalid_request(f"For 'event', \"{event}\" is not one of {', '.join(EVENTS)}.")
    body = call.field_str("body") or ""
    if event != "APPROVE" and call.user.key == pull.issue.user.key and event == "REQUEST_CHANGES":
        raise refused("Can not request changes on your own pull request")
    if event == "APPROVE" and call.user.key == pull.issue.user.key:
        raise refused("Can not approve your own pull request")
    if event in ("REQUEST_CHANGES", "COMMENT") and not body.strip() and not (inline or call.body.get("comments")):
        raise refused(f"Review Body is required when using the {event} event")
    return event


def _submit(call: Call, pull: Pull, review: Review, event: str) -> None:
    review.state = EVENTS[event]
    review.submitted_at = call.now()
    pull.requested_reviewers = [a for a in pull.requested_reviewers if a.key != review.user.key]
    changes.log(call, pull.issue, "reviewed", review.submitted_at)
    changes.touch(pull.issue, review.submitted_at)
    changes.publish(call, "pull_review_submitted", pull.issue, review_id=review.id, state=review.state,
                    body=review.body)


@route("GET", "/repos/{owner}/{repo}/pulls/{pull_number}/reviews")
def pulls_list_reviews(call: Call) -> list[dict[str, Any]]:
    repo = call.repo()
    pull = the_pull(call, repo)
    return [r.to_dict(call.base) for r in call.page([r for r in pull.reviews if _visible(call, r)])]


@route("GET", "/repos/{owner}/{repo}/pulls/{pull_number}/reviews/{review_id}")
def pulls_get_review(call: Call) -> dict[str, Any]:
    repo = call.repo()
    return _review(call, the_pull(call, repo)).to_dict(call.base)


@route("POST", "/repos/{owner}/{repo}/pulls/{pull_number}/reviews",
       partial="comments take path with line or position; multi-line ranges are not kept")
def pulls_create_review(call: Call) -> dict[str, Any]:
    repo = call.repo()
    pull = the_pull(call, repo)
    user = call.user
    event = _event(call, pull, required=False)
    if event is None and any(r.state == "PENDING" and r.user.key == user.key for r in pull.reviews):
        raise refused("User can only have one pending review per pull request")
    if (pull.merged or pull.issue.state != "open") and event in ("APPROVE", "REQUEST_CHANGES"):
        raise refused(f"Can not {'approve' if event == 'APPROVE' else 'request changes on'} a closed "
                      "pull request")
    comparison(pull)
    commit_id = call.field_str("commit_id") or pull.head_sha
    comments = call.body.get("comments") or []
    if not isinstance(comments, list) or not all(isinstance(c, dict) for c in comments):
        raise errors.invalid_request(f"For 'comments', {comments!r} is not an array of objects.")
    review = Review(pull, call.state.ids.next("review"), user, "PENDING", call.field_str("body") or "", None,
                    commit_id)
    try:
        drafted: list[ReviewComment] = [new_comment(call, pull, c, commit_id, review.id) for c in comments]
    except NotInDiff as exc:
        what = "line must be part of the diff" if exc.field == "line" else "path is invalid"
        raise refused(f"Pull request review thread {what} and Pull request review thread diff hunk can't be "
                      "blank") from None
    pull.reviews.append(review)
    for comment in drafted:
        pull.review_comments.append(comment)
        changes.publish(call, "pull_review_comment_created", pull.issue, comment_id=comment.id,
                        path=comment.path, body=comment.body)
    if event is not None:
        _submit(call, pull, review, event)
    return review.to_dict(call.base)


@route("PUT", "/repos/{owner}/{repo}/pulls/{pull_number}/reviews/{review_id}")
def pulls_update_review(call: Call) -> dict[str, Any]:
    repo = call.repo()
    review = _review(call, the_pull(call, repo))
    if review.user.key != call.user.key:
        raise errors.Forbidden()
    body = call.field_str("body", required=True, resource="PullRequestReview")
    review.body = body or ""
    return review.to_dict(call.base)


@route("DELETE", "/repos/{owner}/{repo}/pulls/{pull_number}/reviews/{review_id}")
def pulls_delete_pending_review(call: Call) -> dict[str, Any]:
    repo = call.repo()
    pull = the_pull(call, repo)
    review = _review(call, pull)
    if review.state != "PENDING":
        raise refused("Can not delete a non-pending pull request review")
    if review.user.key != call.user.key:
        raise errors.Forbidden()
    pull.reviews = [r for r in pull.reviews if r is not review]
    pull.review_comments = [c for c in pull.review_comments if c.review_id != review.id]
    return review.to_dict(call.base)


@route("GET", "/repos/{owner}/{repo}/pulls/{pull_number}/reviews/{review_id}/comments")
def pulls_list_comments_for_review(call: Call) -> list[dict[str, Any]]:
    repo = call.repo()
    pull = the_pull(call, repo)
    review = _review(call, pull)
    return [c.to_dict(call.base) for c in call.page([c for c in pull.review_comments if c.review_id == review.id])]


@route("POST", "/repos/{owner}/{repo}/pulls/{pull_number}/reviews/{review_id}/events")
def pulls_submit_review(call: Call) -> dict[str, Any]:
    repo = call.repo()
    pull = the_pull(call, repo)
    review = _review(call, pull)
    if review.user.key != call.user.key:
        raise errors.NotFound()
    inline = any(c.review_id == review.id for c in pull.review_comments) or bool(review.body.strip())
    event = _event(call, pull, required=True, inline=inline)
    if review.state != "PENDING":
        raise refused("Can not submit a non-pending pull request review")
    if "body" in call.body:
        review.body = call.field_str("body") or ""
    assert event is not None
    _submit(call, pull, review, event)
    return review.to_dict(call.base)


@route("PUT", "/repos/{owner}/{repo}/pulls/{pull_number}/reviews/{review_id}/dismissals")
def pulls_dismiss_review(call: Call) -> dict[str, Any]:
    repo = call.repo(need="write")
    pull = the_pull(call, repo)
    review = _review(call, pull)
    message = call.field_str("message", required=True, resource="PullRequestReview")
    if call.body.get("event") not in (None, "DISMISS"):
        raise errors.invalid_request(f"For 'event', {call.body.get('event')!r} is not DISMISS.")
    if review.state not in ("APPROVED", "CHANGES_REQUESTED"):
        raise refused(f"Can not dismiss a {review.state.lower()} pull request review")
    at = call.now()
    review.state = "DISMISSED"
    changes.log(call, pull.issue, "review_dismissed", at,
                dismissed_review={"state": "approved", "review_id": review.id, "dismissal_message": message})
    changes.touch(pull.issue, at)
    changes.publish(call, "pull_review_submitted", pull.issue, review_id=review.id, state="DISMISSED",
                    body=message or "")
    return review.to_dict(call.base)


# --- requested reviewers ------------------------------------------------------------------------


@route("GET", "/repos/{owner}/{repo}/pulls/{pull_number}/requested_reviewers")
def pulls_list_requested_reviewers(call: Call) -> dict[str, Any]:
    repo = call.repo()
    pull = the_pull(call, repo)
    return {"users": [a.simple(call.base) for a in pull.requested_reviewers], "teams": []}


def _reviewers(call: Call, repo: Repo, pull: Pull) -> list[Account]:
    names = call.field_list("reviewers") or []
    teams = call.field_list("team_reviewers") or []
    if not names and not teams and "reviewers" not in call.body and "team_reviewers" not in call.body:
        raise errors.invalid_request("No subschema in \"anyOf\" matched.")
    found: list[Account] = []
    for name in names:
        account = call.state.user(name)
        if account is not None and account.key == pull.issue.user.key:
            raise refused("Review cannot be requested from pull request author.")
        if account is None or call.state.role(repo, account) is None or (
                repo.private is False and call.state.role(repo, account) == "read"
                and account.key not in repo.collaborators and account.key != repo.owner.key
                and account.key not in getattr(repo.owner, "members", {})):
            raise refused(f"Reviews may only be requested from collaborators. One or more of the users or teams "
                          f"you specified is not a collaborator of the {repo.full_name} repository.")
        if all(a.key != account.key for a in found):
            found.append(account)
    return found


@route("POST", "/repos/{owner}/{repo}/pulls/{pull_number}/requested_reviewers",
       partial="team_reviewers are accepted but not kept")
def pulls_request_reviewers(call: Call) -> Reply:
    repo = call.repo(need="triage")
    pull = the_pull(call, repo)
    added = [a for a in _reviewers(call, repo, pull) if all(r.key != a.key for r in pull.requested_reviewers)]
    if added:
        at = call.now()
        pull.requested_reviewers.extend(added)
        for account in added:
            changes.log(call, pull.issue, "review_requested", at, requested_reviewer=account,
                        review_requester=call.user)
        changes.touch(pull.issue, at)
        changes.publish(call, "review_requested", pull.issue, reviewers=[a.login for a in added])
    return created(render(call, pull))


@route("DELETE", "/repos/{owner}/{repo}/pulls/{pull_number}/requested_reviewers")
def pulls_remove_requested_reviewers(call: Call) -> dict[str, Any]:
    repo = call.repo(need="triage")
    pull = the_pull(call, repo)
    if "reviewers" not in call.body:
        raise errors.invalid_request('"reviewers" wasn\'t supplied.')
    names = {n.lower() for n in call.field_list("reviewers") or []}
    removed = [a for a in pull.requested_reviewers if a.key in names]
    if removed:
        at = call.now()
        pull.requested_reviewers = [a for a in pull.requested_reviewers if a.key not in names]
        for account in removed:
            changes.log(call, pull.issue, "review_request_removed", at, requested_reviewer=account,
                        review_requester=call.user)
        changes.touch(pull.issue, at)
    return render(call, pull)
