"""Issues and pull requests: their fields, and the repository's lists and lookups of them.

A pull request is the REST core's ``Pull``; its conversation (title, body, labels,
comments, state) is ``pull.issue``, so ``_conv`` reads both kinds the same way.
"""

from __future__ import annotations

from typing import Any

from graphql import GraphQLResolveInfo

from ancha.world.tools.github.graphql.connections import Page, paginate, pagination_args
from ancha.world.tools.github.graphql.context import ctx
from ancha.world.tools.github.graphql.errors import NotFound
from ancha.world.tools.github.graphql.registry import plain, resolver
from ancha.world.tools.github.graphql.resolvers.filters import (
    filter_issues,
    issue_state,
    order_issues,
    pull_state,
)
from ancha.world.tools.github.models import Issue, IssueComment, Label, Milestone, Pull, Repo, iso
from ancha.world.tools.github.models.wire import web_base

PAGE = ("first", "after", "last", "before")


def _conv(item: Issue | Pull) -> Issue:
    return item.issue if isinstance(item, Pull) else item


def _html(item: Issue | Pull) -> str:
    issue = _conv(item)
    kind = "pull" if issue.pull is not None else "issues"
    return f"{web_base()}/{issue.repo.full_name}/{kind}/{issue.number}"


# --- Issue and PullRequest ---------------------------------------------------------------------

plain("Issue PullRequest",
      id="node_id", databaseId="id", number=lambda i: _conv(i).number, title=lambda i: _conv(i).title,
      body=lambda i: _conv(i).body or "", bodyText=lambda i: _conv(i).body or "",
      url=_html, resourcePath=lambda i: _html(i).removeprefix(web_base()), author=lambda i: _conv(i).user,
      authorAssociation=lambda i: _conv(i).repo.association(_conv(i).user),
      createdAt=lambda i: iso(_conv(i).created_at), updatedAt=lambda i: iso(_conv(i).updated_at),
      closedAt=lambda i: iso(_conv(i).closed_at), closed=lambda i: _conv(i).state == "closed",
      locked=lambda i: _conv(i).locked, milestone=lambda i: _conv(i).milestone, repository=lambda i: _conv(i).repo,
      activeLockReason=lambda i: (_conv(i).active_lock_reason or "").upper() or None)
plain("Issue", state=issue_state, stateReason=lambda i: (i.state_reason or "").upper() or None)
plain("PullRequest", state=pull_state, headRefName="head", baseRefName="base", merged="merged",
      mergedAt=lambda p: iso(p.merged_at), mergedBy="merged_by", isDraft="draft", additions="additions",
      deletions="deletions", changedFiles="changed_files", permalink=_html, isCrossRepository=lambda p: False,
      maintainerCanModify="maintainer_can_modify",
      totalCommentsCount=lambda p: len(p.issue.comments) + len(p.review_comments),
      headRefOid=lambda p: _branch_sha(p, p.head, p.head_sha), baseRefOid=lambda p: _branch_sha(p, p.base, p.base_sha))


@resolver("Issue.viewerDidAuthor PullRequest.viewerDidAuthor IssueComment.viewerDidAuthor "
          "PullRequestReview.viewerDidAuthor")
def viewer_did_author(item: Any, info: GraphQLResolveInfo) -> bool:
    author = _conv(item).user if isinstance(item, Issue | Pull) else item.user
    return bool(author.key == ctx(info).viewer.key)


@resolver("Issue.comments PullRequest.comments", args=(*PAGE, "orderBy"))
def comments(item: Issue | Pull, info: GraphQLResolveInfo, orderBy: dict[str, Any] | None = None,  # noqa: N803
             **args: Any) -> Page:
    found = list(_conv(item).comments)
    if orderBy and orderBy.get("direction") == "DESC":
        found.reverse()
    return paginate(found, "comments", **pagination_args(args))


@resolver("Issue.labels PullRequest.labels", args=(*PAGE, "orderBy"))
def item_labels(item: Issue | Pull, info: GraphQLResolveInfo, orderBy: dict[str, Any] | None = None,  # noqa: N803
                **args: Any) -> Page:
    return paginate(_order_labels(list(_conv(item).labels), orderBy), "labels", **pagination_args(args))


@resolver("Issue.assignees PullRequest.assignees", args=PAGE)
def assignees(item: Issue | Pull, info: GraphQLResolveInfo, **args: Any) -> Page:
    return paginate(list(_conv(item).assignees), "assignees", **pagination_args(args))


def _branch_sha(pull: Pull, branch: str, recorded: str) -> str:
    git = pull.repo.git
    if pull.issue.state == "open" and git is not None:
        return git.branch_sha(branch) or recorded
    return recorded


@resolver("PullRequest.mergeable")
def mergeable(pull: Pull, info: GraphQLResolveInfo) -> str:
    git = pull.repo.git
    if pull.issue.state != "open" or git is None:
        return "UNKNOWN"
    return "MERGEABLE" if git.mergeable(pull.base, pull.head) else "CONFLICTING"


@resolver("PullRequest.reviews", args=(*PAGE, "states", "author"))
def reviews(pull: Pull, info: GraphQLResolveInfo, states: list[str] | None = None, author: str | None = None,
            **args: Any) -> Page:
    found = [r for r in pull.reviews if (not states or r.state in states)
             and (author is None or r.user.key == author.lower())]
    return paginate(found, "reviews", **pagination_args(args))


@resolver("PullRequest.latestReviews", args=PAGE)
def latest_reviews(pull: Pull, info: GraphQLResolveInfo, **args: Any) -> Page:
    latest: dict[str, Any] = {}
    for review in pull.reviews:
        if review.state != "PENDING":
            latest[review.user.key] = review
    return paginate(list(latest.values()), "latestReviews", **pagination_args(args))


@resolver("PullRequest.reviewDecision")
def review_decision(pull: Pull, info: GraphQLResolveInfo) -> str | None:
    latest: dict[str, str] = {}
    for review in pull.reviews:
        if review.state in ("APPROVED", "CHANGES_REQUESTED", "DISMISSED"):
            latest[review.user.key] = review.state
    if "CHANGES_REQUESTED" in latest.values():
        return "CHANGES_REQUESTED"
    protection = pull.repo.protected_branches.get(pull.base)
    required = getattr(protection, "required_reviews", None)
    if required is None and isinstance(protection, dict):
        required = protection.get("required_reviews")
    approvals = sum(1 for state in latest.values() if state == "APPROVED")
    if required:
        return "APPROVED" if approvals >= required else "REVIEW_REQUIRED"
    return "APPROVED" if approvals else None


class ReviewRequest:
    graphql_type = "ReviewRequest"

    def __init__(self, pull: Pull, reviewer: Any) -> None:
        self.pull = pull
        self.reviewer = reviewer


@resolver("PullRequest.reviewRequests", args=PAGE)
def review_requests(pull: Pull, info: GraphQLResolveInfo, **args: Any) -> Page:
    found = [ReviewRequest(pull, account) for account in pull.requested_reviewers]
    return paginate(found, "reviewRequests", **pagination_args(args))


plain("ReviewRequest", requestedReviewer="reviewer", pullRequest="pull", asCodeOwner=lambda r: False,
      id=lambda r: _review_request_id(r))


def _review_request_id(request: ReviewRequest) -> str:
    from ancha.world.tools.github.graphql.ids import string_node_id

    return string_node_id("ReviewRequest", request.pull.id, request.reviewer.login)


# --- comments, reviews, labels, milestones ------------------------------------------------------

plain("IssueComment", id="node_id", databaseId="id", body="body", bodyText="body", author="user",
      createdAt=lambda c: iso(c.created_at), updatedAt=lambda c: iso(c.updated_at),
      url=lambda c: f"{_html(c.issue)}#issuecomment-{c.id}", repository=lambda c: c.issue.repo,
      authorAssociation=lambda c: c.issue.repo.association(c.user))


@resolver("IssueComment.issue")
def comment_issue(comment: IssueComment, info: GraphQLResolveInfo) -> Issue:
    return comment.issue


@resolver("IssueComment.pullRequest")
def comment_pull(comment: IssueComment, info: GraphQLResolveInfo) -> Pull | None:
    return comment.issue.pull


plain("PullRequestReview", id="node_id", databaseId="id", body="body", bodyText="body", state="state",
      author="user", submittedAt=lambda r: iso(r.submitted_at), createdAt=lambda r: iso(r.submitted_at),
      url=lambda r: f"{_html(r.pull)}#pullrequestreview-{r.id}", pullRequest="pull",
      repository=lambda r: r.pull.repo, authorAssociation=lambda r: r.pull.repo.association(r.user))

plain("Label", id="node_id", name="name", color="color", description="description", isDefault="default",
      url=lambda label: f"{web_base()}/{label.repo.full_name}/labels/{label.name}", repository="repo")
plain("Milestone", id="node_id", number="number", title="title", description="description",
      state=lambda m: m.state.upper(), closed=lambda m: m.state == "closed", dueOn=lambda m: iso(m.due_on),
      createdAt=lambda m: iso(m.created_at), updatedAt=lambda m: iso(m.updated_at),
      closedAt=lambda m: iso(m.closed_at), creator="creator", repository="repo",
      url=lambda m: f"{web_base()}/{m.repo.full_name}/milestone/{m.number}")


def _order_labels(labels: list[Label], order_by: dict[str, Any] | None) -> list[Label]:
    if order_by and order_by.get("field") == "NAME":
        labels = sorted(labels, key=lambda label: label.name.lower())
    if order_by and order_by.get("direction") == "DESC":
        labels.reverse()
    return labels


# --- the repository's lists -------------------------------------------------------------------------

@resolver("Repository.issues", args=(*PAGE, "states", "labels", "orderBy", "filterBy"))
def repo_issues(repo: Repo, info: GraphQLResolveInfo, states: list[str] | None = None,
                labels: list[str] | None = None, orderBy: dict[str, Any] | None = None,  # noqa: N803
                filterBy: dict[str, Any] | None = None, **args: Any) -> Page:  # noqa: N803
    found = filter_issues([i for i in repo.issues.values() if i.pull is None], states=states, labels=labels,
                          filter_by=filterBy)
    return paginate(order_issues(found, orderBy), "issues", **pagination_args(args))


@resolver("Repository.pullRequests", args=(*PAGE, "states", "labels", "orderBy", "baseRefName", "headRefName"))
def repo_pulls(repo: Repo, info: GraphQLResolveInfo, states: list[str] | None = None,
               labels: list[str] | None = None, orderBy: dict[str, Any] | None = None,  # noqa: N803
               baseRefName: str | None = None, headRefName: str | None = None, **args: Any) -> Page:  # noqa: N803
    wanted = {name.lower() for name in labels or ()}
    found = [p for p in repo.pulls.values() if (not states or pull_state(p) in states)
             and (not wanted or any(label.name.lower() in wanted for label in p.issue.labels))
             and (baseRefName is None or p.base == baseRefName) and (headRefName is None or p.head == headRefName)]
    return paginate(order_issues(found, orderBy), "pullRequests", **pagination_args(args))


@resolver("Repository.issue", args=("number",))
def repo_issue(repo: Repo, info: GraphQLResolveInfo, number: int) -> Issue:
    found = repo.issues.get(number)
    if found is None or found.pull is not None:
        raise NotFound(f"Could not resolve to an Issue with the number of {number}.")
    return found


@resolver("Repository.pullRequest", args=("number",))
def repo_pull(repo: Repo, info: GraphQLResolveInfo, number: int) -> Pull:
    found = repo.pulls.get(number)
    if found is None:
        raise NotFound(f"Could not resolve to a PullRequest with the number of {number}.")
    return found


@resolver("Repository.issueOrPullRequest", args=("number",))
def repo_issue_or_pull(repo: Repo, info: GraphQLResolveInfo, number: int) -> Issue | Pull:
    found = repo.issues.get(number)
    if found is None:
        raise NotFound(f"Could not resolve to an issue or pull request with the number of {number}.")
    return found.pull if found.pull is not None else found


@resolver("Repository.labels", args=(*PAGE, "query", "orderBy"))
def repo_labels(repo: Repo, info: GraphQLResolveInfo, query: str | None = None,
                orderBy: dict[str, Any] | None = None, **args: Any) -> Page:  # noqa: N803
    found = list(repo.labels.values())
    if query:
        needle = query.lower()
        found = [label for label in found if needle in label.name.lower()
                 or needle in (label.description or "").lower()]
    return paginate(_order_labels(found, orderBy), "labels", **pagination_args(args))


@resolver("Repository.label", args=("name",))
def repo_label(repo: Repo, info: GraphQLResolveInfo, name: str) -> Label | None:
    return repo.labels.get(name.lower())


@resolver("Repository.milestones", args=(*PAGE, "states", "query"))
def repo_milestones(repo: Repo, info: GraphQLResolveInfo, states: list[str] | None = None,
                    query: str | None = None, **args: Any) -> Page:
    found: list[Milestone] = [m for m in repo.milestones.values() if (not states or m.state.upper() in states)
                              and (not query or query.lower() in m.title.lower())]
    return paginate(found, "milestones", **pagination_args(args))


@resolver("Repository.milestone", args=("number",))
def repo_milestone(repo: Repo, info: GraphQLResolveInfo, number: int) -> Milestone | None:
    return repo.milestones.get(number)
