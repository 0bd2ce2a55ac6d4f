"""Mutations: each turns its input's node ids into the REST call GitHub's API would take.

Ids resolve with the viewer's visibility (an id the viewer cannot see is
``NOT_FOUND``); the write itself is the REST handler's (``rest.py``). An input field
the REST API has no counterpart for (``projectIds``, ``issueTemplate``, ...) given a
value answers ``NOT_IMPLEMENTED`` before anything changes.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypeVar

from graphql import GraphQLResolveInfo

from ancha.world.tools.github.graphql.connections import Edge, encode_cursor
from ancha.world.tools.github.graphql.context import Context, ctx
from ancha.world.tools.github.graphql.errors import NotFound, NotImplementedHere, not_found_node
from ancha.world.tools.github.graphql.registry import plain, resolver
from ancha.world.tools.github.graphql.resolvers.repository import find_node
from ancha.world.tools.github.graphql.rest import rest_call
from ancha.world.tools.github.models import Account, Issue, Label, Milestone, Pull, Repo, Team

X = TypeVar("X")


def _node(context: Context, global_id: str, kind: type[X]) -> X:
    found = find_node(context, global_id)
    if not isinstance(found, kind):
        raise not_found_node(global_id)
    return found


def _subject(context: Context, global_id: str) -> Issue | Pull:
    """An issue or pull request: what comments and labels attach to."""
    found = find_node(context, global_id)
    if not isinstance(found, Issue | Pull):
        raise not_found_node(global_id)
    return found


def _nodes(context: Context, ids: Iterable[str] | None, kind: type[X]) -> list[X]:
    return [_node(context, one, kind) for one in ids or ()]


def _unsupported(mutation: str, data: dict[str, Any], *names: str) -> None:
    for name in names:
        if data.get(name) not in (None, [], False):
            raise NotImplementedHere(f"Input field '{name}' of '{mutation}' is not implemented by this replica")


def _issue_path(issue: Issue) -> str:
    return f"/repos/{issue.repo.full_name}/issues/{issue.number}"


def _conversation(item: Issue | Pull) -> Issue:
    return item.issue if isinstance(item, Pull) else item


def _issue_only(context: Context, global_id: str) -> Issue:
    found = _node(context, global_id, Issue)
    if found.pull is not None:
        raise not_found_node(global_id)
    return found


def _payload(data: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {"clientMutationId": data.get("clientMutationId"), **fields}


def _labels_of(repo: Repo, labels: list[Label], global_ids: list[str]) -> list[str]:
    for label, global_id in zip(labels, global_ids, strict=True):
        if label.repo is not repo:
            raise not_found_node(global_id)
    return [label.name for label in labels]


# --- issues ---------------------------------------------------------------------------------------

@resolver("Mutation.createIssue", args=("input",))
def create_issue(_: Any, info: GraphQLResolveInfo, input: dict[str, Any]) -> dict[str, Any]:
    context = ctx(info)
    _unsupported("createIssue", input, "projectIds", "issueTemplate", "parentIssueId")
    repo = _node(context, input["repositoryId"], Repo)
    body: dict[str, Any] = {"title": input["title"]}
    if input.get("body") is not None:
        body["body"] = input["body"]
    body["assignees"] = [a.login for a in _nodes(context, input.get("assigneeIds"), Account)]
    body["labels"] = _labels_of(repo, _nodes(context, input.get("labelIds"), Label), input.get("labelIds") or [])
    if input.get("milestoneId") is not None:
        body["milestone"] = _node(context, input["milestoneId"], Milestone).number
    answer = rest_call(context, "createIssue", "POST", f"/repos/{repo.full_name}/issues", body)
    return _payload(input, issue=repo.issues[answer["number"]])


@resolver("Mutation.updateIssue", args=("input",))
def update_issue(_: Any, info: GraphQLResolveInfo, input: dict[str, Any]) -> dict[str, Any]:
    context = ctx(info)
    _unsupported("updateIssue", input, "projectIds")
    issue = _issue_only(context, input["id"])
    body: dict[str, Any] = {key: input[key] for key in ("title", "body") if input.get(key) is not None}
    if input.get("state") is not None:
        body["state"] = input["state"].lower()
    if input.get("assigneeIds") is not None:
        body["assignees"] = [a.login for a in _nodes(context, input["assigneeIds"], Account)]
    if input.get("labelIds") is not None:
        body["labels"] = _labels_of(issue.repo, _nodes(context, input["labelIds"], Label), input["labelIds"])
    if "milestoneId" in input:
        milestone = input["milestoneId"]
        body["milestone"] = _node(context, milestone, Milestone).number if milestone is not None else None
    rest_call(context, "updateIssue", "PATCH", _issue_path(issue), body)
    return _payload(input, issue=issue, actor=context.viewer)


@resolver("Mutation.closeIssue", args=("input",))
def close_issue(_: Any, info: GraphQLResolveInfo, input: dict[str, Any]) -> dict[str, Any]:
    context = ctx(info)
    _unsupported("closeIssue", input, "duplicateIssueId")
    issue = _issue_only(context, input["issueId"])
    reason = (input.get("stateReason") or "COMPLETED").lower()
    rest_call(context, "closeIssue", "PATCH", _issue_path(issue), {"state": "closed", "state_reason": reason})
    return _payload(input, issue=issue)


@resolver("Mutation.reopenIssue", args=("input",))
def reopen_issue(_: Any, info: GraphQLResolveInfo, input: dict[str, Any]) -> dict[str, Any]:
    context = ctx(info)
    issue = _issue_only(context, input["issueId"])
    rest_call(context, "reopenIssue", "PATCH", _issue_path(issue), {"state": "open"})
    return _payload(input, issue=issue)


@resolver("Mutation.addComment", args=("input",))
def add_comment(_: Any, info: GraphQLResolveInfo, input: dict[str, Any]) -> dict[str, Any]:
    context = ctx(info)
    subject = _subject(context, input["subjectId"])
    issue = _conversation(subject)
    answer = rest_call(context, "addComment", "POST", f"{_issue_path(issue)}/comments", {"body": input["body"]})
    comment = context.state.comments[answer["id"]]
    edge = Edge(encode_cursor(len(issue.comments) - 1), comment)
    return _payload(input, subject=subject, commentEdge=edge)


@resolver("Mutation.addLabelsToLabelable", args=("input",))
def add_labels(_: Any, info: GraphQLResolveInfo, input: dict[str, Any]) -> dict[str, Any]:
    context = ctx(info)
    labelable = _subject(context, input["labelableId"])
    issue = _conversation(labelable)
    names = _labels_of(issue.repo, _nodes(context, input["labelIds"], Label), input["labelIds"])
    rest_call(context, "addLabelsToLabelable", "POST", f"{_issue_path(issue)}/labels", {"labels": names})
    return _payload(input, labelable=labelable)


@resolver("Mutation.removeLabelsFromLabelable", args=("input",))
def remove_labels(_: Any, info: GraphQLResolveInfo, input: dict[str, Any]) -> dict[str, Any]:
    context = ctx(info)
    labelable = _subject(context, input["labelableId"])
    issue = _conversation(labelable)
    names = _labels_of(issue.repo, _nodes(context, input["labelIds"], Label), input["labelIds"])
    for name in names:
        if any(label.name == name for label in issue.labels):  # GraphQL ignores labels not set
            rest_call(context, "removeLabelsFromLabelable", "DELETE",
                      f"{_issue_path(issue)}/labels/{name}")
    return _payload(input, labelable=labelable)


# --- pull requests --------------------------------------------------------------------------------

def _pull_path(pull: Pull) -> str:
    return f"/repos/{pull.repo.full_name}/pulls/{pull.number}"


@resolver("Mutation.mergePullRequest", args=("input",))
def merge_pull_request(_: Any, info: GraphQLResolveInfo, input: dict[str, Any]) -> dict[str, Any]:
    context = ctx(info)
    _unsupported("mergePullRequest", input, "authorEmail")
    pull = _node(context, input["pullRequestId"], Pull)
    body: dict[str, Any] = {"merge_method": (input.get("mergeMethod") or "MERGE").lower()}
    for source, target in (("commitHeadline", "commit_title"), ("commitBody", "commit_message"),
                           ("expectedHeadOid", "sha")):
        if input.get(source) is not None:
            body[target] = input[source]
    rest_call(context, "mergePullRequest", "PUT", f"{_pull_path(pull)}/merge", body)
    return _payload(input, pullRequest=pull, actor=context.viewer)


@resolver("Mutation.addPullRequestReview", args=("input",))
def add_pull_request_review(_: Any, info: GraphQLResolveInfo, input: dict[str, Any]) -> dict[str, Any]:
    context = ctx(info)
    pull = _node(context, input["pullRequestId"], Pull)
    body: dict[str, Any] = {}
    if input.get("body") is not None:
        body["body"] = input["body"]
    if input.get("event") is not None:
        body["event"] = input["event"]
    if input.get("commitOID") is not None:
        body["commit_id"] = input["commitOID"]
    comments = [{key: c[key] for key in ("path", "position", "body") if c.get(key) is not None}
                for c in input.get("comments") or () if c is not None]
    comments += [_thread(t) for t in input.get("threads") or () if t is not None]
    if comments:
        body["comments"] = comments
    answer = rest_call(context, "addPullRequestReview", "POST", f"{_pull_path(pull)}/reviews", body)
    review = next((r for r in pull.reviews if r.id == answer["id"]), None)
    if review is None:
        raise NotFound("Could not resolve to a PullRequestReview")
    edge = Edge(encode_cursor(pull.reviews.index(review)), review)
    return _payload(input, pullRequestReview=review, reviewEdge=edge)


def _thread(thread: dict[str, Any]) -> dict[str, Any]:
    names = {"path": "path", "line": "line", "side": "side", "startLine": "start_line",
             "startSide": "start_side", "body": "body"}
    return {rest: thread[key] for key, rest in names.items() if thread.get(key) is not None}


@resolver("Mutation.requestReviews", args=("input",))
def request_reviews(_: Any, info: GraphQLResolveInfo, input: dict[str, Any]) -> dict[str, Any]:
    context = ctx(info)
    pull = _node(context, input["pullRequestId"], Pull)
    users = [a.login for a in _nodes(context, input.get("userIds"), Account)]
    teams = [t.slug for t in _nodes(context, input.get("teamIds"), Team)]
    path = f"{_pull_path(pull)}/requested_reviewers"
    dropped = [a.login for a in pull.requested_reviewers if a.login not in users]
    if users or teams:  # first, so that a refused reviewer leaves the requests as they were
        rest_call(context, "requestReviews", "POST", path, {"reviewers": users, "team_reviewers": teams})
    if dropped and not input.get("union"):  # without union the given set replaces the requested one
        rest_call(context, "requestReviews", "DELETE", path, {"reviewers": dropped})
    return _payload(input, pullRequest=pull, actor=context.viewer)


plain("CreateIssuePayload ReopenIssuePayload CloseIssuePayload", issue="issue",
      clientMutationId="clientMutationId")
plain("UpdateIssuePayload", issue="issue", actor="actor", clientMutationId="clientMutationId")
plain("AddCommentPayload", subject="subject", commentEdge="commentEdge", clientMutationId="clientMutationId")
plain("AddLabelsToLabelablePayload RemoveLabelsFromLabelablePayload", labelable="labelable",
      clientMutationId="clientMutationId")
plain("MergePullRequestPayload RequestReviewsPayload", pullRequest="pullRequest", actor="actor",
      clientMutationId="clientMutationId")
plain("AddPullRequestReviewPayload", pullRequestReview="pullRequestReview", reviewEdge="reviewEdge",
      clientMutationId="clientMutationId")
