"""Pull requests, their reviews and review comments.

A ``Pull`` is the code side of a number whose conversation is ``pull.issue`` (title,
body, labels, assignees, milestone, comments and open/closed state live there, so the
Issues API and the Pulls API always agree). ``head_sha``/``base_sha`` are filled from
the repository's git store by whoever creates or updates the pull.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ancha.world.tools.github.models.issues import Issue
from ancha.world.tools.github.models.reactions import rollup
from ancha.world.tools.github.models.users import Account
from ancha.world.tools.github.models.wire import JSONDict, iso, node_id, web_url

if TYPE_CHECKING:
    from ancha.world.tools.github.models.repos import Repo


class Review:
    def __init__(self, pull: Pull, id: int, user: Account, state: str, body: str, submitted_at: float | None,
                 commit_id: str = "") -> None:
        self.pull = pull
        self.id = id
        self.node_id = node_id("PullRequestReview", id)
        self.user = user
        self.state = state
        """APPROVED, CHANGES_REQUESTED, COMMENTED, PENDING or DISMISSED."""
        self.body = body
        self.submitted_at = submitted_at
        self.commit_id = commit_id

    def to_dict(self, base: str) -> JSONDict:
        repo = self.pull.repo
        html = f"{web_url(base)}/{repo.full_name}/pull/{self.pull.number}#pullrequestreview-{self.id}"
        body: JSONDict = {
            "id": self.id, "node_id": self.node_id, "user": self.user.simple(base), "body": self.body,
            "state": self.state, "html_url": html,
            "pull_request_url": f"{base}/repos/{repo.full_name}/pulls/{self.pull.number}",
            "author_association": repo.association(self.user),
            "_links": {"html": {"href": html},
                       "pull_request": {"href": f"{base}/repos/{repo.full_name}/pulls/{self.pull.number}"}},
            "commit_id": self.commit_id or None,
        }
        if self.submitted_at is not None:
            body["submitted_at"] = iso(self.submitted_at)
        return body


class ReviewComment:
    def __init__(self, pull: Pull, id: int, user: Account, body: str, path: str, created_at: float, *,
                 line: int | None = None, side: str = "RIGHT", commit_id: str = "", review_id: int | None = None,
                 in_reply_to: int | None = None, diff_hunk: str = "") -> None:
        self.pull = pull
        self.id = id
        self.node_id = node_id("PullRequestReviewComment", id)
        self.user = user
        self.body = body
        self.path = path
        self.line = line
        self.side = side
        self.commit_id = commit_id
        self.review_id = review_id
        self.in_reply_to = in_reply_to
        self.diff_hunk = diff_hunk
        self.created_at = created_at
        self.updated_at = created_at

    def to_dict(self, base: str) -> JSONDict:
        repo = self.pull.repo
        u = f"{base}/repos/{repo.full_name}/pulls/comments/{self.id}"
        pull_url = f"{base}/repos/{repo.full_name}/pulls/{self.pull.number}"
        html = f"{web_url(base)}/{repo.full_name}/pull/{self.pull.number}#discussion_r{self.id}"
        body: JSONDict = {
            "url": u, "pull_request_review_id": self.review_id, "id": self.id, "node_id": self.node_id,
            "diff_hunk": self.diff_hunk, "path": self.path, "commit_id": self.commit_id,
            "original_commit_id": self.commit_id, "user": self.user.simple(base), "body": self.body,
            "created_at": iso(self.created_at), "updated_at": iso(self.updated_at), "html_url": html,
            "pull_request_url": pull_url, "author_association": repo.association(self.user),
            "_links": {"self": {"href": u}, "html": {"href": html}, "pull_request": {"href": pull_url}},
            "reactions": rollup(repo, ("review_comment", self.id), u), "start_line": None, "original_start_line": None, "start_side": None,
            "line": self.line, "original_line": self.line, "side": self.side, "subject_type": "line",
        }
        if self.in_reply_to is not None:
            body["in_reply_to_id"] = self.in_reply_to
        return body


class Pull:
    def __init__(self, issue: Issue, id: int, head: str, base: str, *, draft: bool = False) -> None:
        self.issue = issue
        issue.pull = self
        self.id = id
        self.node_id = node_id("PullRequest", id)
        self.head = head
        self.base = base
        self.head_sha = ""
        self.base_sha = ""
        self.draft = draft
        self.merged_at: float | None = None
        self.merged_by: Account | None = None
        self.merge_commit_sha: str | None = None
        self.requested_reviewers: list[Account] = []
        self.reviews: list[Review] = []
        self.review_comments: list[ReviewComment] = []
        self.maintainer_can_modify = False
        self.commits = 0
        self.additions = 0
        self.deletions = 0
        self.changed_files = 0

    @property
    def repo(self) -> Repo:
        return self.issue.repo

    @property
    def number(self) -> int:
        return self.issue.number

    @property
    def merged(self) -> bool:
        return self.merged_at is not None

    def _branch(self, base: str, ref: str, sha: str) -> JSONDict:
        repo = self.repo
        return {"label": f"{repo.owner.login}:{ref}", "ref": ref, "sha": sha, "user": repo.owner.simple(base),
                "repo": repo.to_dict(base)}

    def to_dict(self, base: str, *, full: bool = False) -> JSONDict:
        """``pull-request-simple`` (lists), or ``pull-request`` with ``full``."""
        issue, repo = self.issue, self.repo
        r = f"{base}/repos/{repo.full_name}"
        u = f"{r}/pulls/{self.number}"
        html = f"{web_url(base)}/{repo.full_name}/pull/{self.number}"
        issue_url = f"{r}/issues/{self.number}"
        body: JSONDict = {
            "url": u, "id": self.id, "node_id": self.node_id, "html_url": html, "diff_url": f"{html}.diff",
            "patch_url": f"{html}.patch", "issue_url": issue_url, "number": self.number, "state": issue.state,
            "locked": issue.locked, "title": issue.title, "user": issue.user.simple(base), "body": issue.body,
            "created_at": iso(issue.created_at), "updated_at": iso(issue.updated_at),
            "closed_at": iso(issue.closed_at), "merged_at": iso(self.merged_at),
            "merge_commit_sha": self.merge_commit_sha,
            "assignee": issue.assignees[0].simple(base) if issue.assignees else None,
            "assignees": [a.simple(base) for a in issue.assignees],
            "requested_reviewers": [a.simple(base) for a in self.requested_reviewers], "requested_teams": [],
            "labels": [label.to_dict(base) for label in issue.labels],
            "milestone": issue.milestone.to_dict(base) if issue.milestone is not None else None,
            "draft": self.draft, "commits_url": f"{u}/commits", "review_comments_url": f"{u}/comments",
            "review_comment_url": f"{r}/pulls/comments{{/number}}", "comments_url": f"{issue_url}/comments",
            "statuses_url": f"{r}/statuses/{self.head_sha}",
            "head": self._branch(base, self.head, self.head_sha), "base": self._branch(base, self.base, self.base_sha),
            "_links": {"self": {"href": u}, "html": {"href": html}, "issue": {"href": issue_url},
                       "comments": {"href": f"{issue_url}/comments"},
                       "review_comments": {"href": f"{u}/comments"},
                       "review_comment": {"href": f"{r}/pulls/comments{{/number}}"},
                       "commits": {"href": f"{u}/commits"}, "statuses": {"href": f"{r}/statuses/{self.head_sha}"}},
            "author_association": repo.association(issue.user), "auto_merge": None,
            "active_lock_reason": issue.active_lock_reason,
        }
        if full:
            open_ = issue.state == "open"
            body.update({
                "merged": self.merged, "mergeable": True if open_ else None, "rebaseable": True if open_ else None,
                "mergeable_state": "clean" if open_ else "unknown",
                "merged_by": self.merged_by.simple(base) if self.merged_by is not None else None,
                "comments": len(issue.comments), "review_comments": len(self.review_comments),
                "maintainer_can_modify": self.maintainer_can_modify, "commits": self.commits,
                "additions": self.additions, "deletions": self.deletions, "changed_files": self.changed_files,
            })
        return body
