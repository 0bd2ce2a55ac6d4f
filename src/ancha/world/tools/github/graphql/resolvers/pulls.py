"""A pull request's code side: its commits and changed files, from the repository's git.

An open pull compares its branches as they are now; a closed or merged one compares
the shas it recorded, so its commits and files stay what they were at merge.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from graphql import GraphQLResolveInfo

from ancha.world.tools.github.git_history import Comparison, FileChange
from ancha.world.tools.github.graphql.connections import Page, paginate, pagination_args
from ancha.world.tools.github.graphql.ids import string_node_id
from ancha.world.tools.github.graphql.registry import plain, resolver
from ancha.world.tools.github.graphql.resolvers.git import git_object
from ancha.world.tools.github.models import Pull
from ancha.world.tools.github.models.wire import web_base

PAGE = ("first", "after", "last", "before")
_CHANGE_TYPES = {"added": "ADDED", "removed": "DELETED", "modified": "MODIFIED", "renamed": "RENAMED"}


@dataclass(frozen=True, slots=True)
class PullCommit:
    graphql_type: ClassVar[str] = "PullRequestCommit"
    pull: Pull
    sha: str


def comparison(pull: Pull) -> Comparison | None:
    git = pull.repo.git
    if git is None:
        return None
    if pull.issue.state == "open":
        base, head = git.branch_sha(pull.base) or pull.base_sha, git.branch_sha(pull.head) or pull.head_sha
    else:
        base, head = pull.base_sha, pull.head_sha
    if not base or not head:
        return None
    try:
        return git.compare(base, head)  # type: ignore[no-any-return]
    except LookupError:
        return None


@resolver("PullRequest.commits", args=PAGE)
def commits(pull: Pull, info: GraphQLResolveInfo, **args: Any) -> Page:
    found = comparison(pull)
    items = [PullCommit(pull, c.sha) for c in found.commits] if found is not None else []
    return paginate(items, "commits", **pagination_args(args))


@resolver("PullRequest.files", args=PAGE)
def files(pull: Pull, info: GraphQLResolveInfo, **args: Any) -> Page:
    found = comparison(pull)
    return paginate(found.files if found is not None else [], "files", **pagination_args(args))


plain("PullRequestCommit", commit=lambda c: git_object(c.pull.repo, c.sha), pullRequest="pull",
      id=lambda c: string_node_id("PullRequestCommit", c.pull.id, c.sha),
      url=lambda c: f"{web_base()}/{c.pull.repo.full_name}/pull/{c.pull.number}/commits/{c.sha}",
      resourcePath=lambda c: f"/{c.pull.repo.full_name}/pull/{c.pull.number}/commits/{c.sha}")


def _change_type(change: FileChange) -> str:
    return _CHANGE_TYPES.get(change.status, "CHANGED")


plain("PullRequestChangedFile", path="filename", additions="additions", deletions="deletions",
      changeType=_change_type)
for _kind in ("PullRequestCommit", "PullRequestChangedFile"):
    plain(f"{_kind}Connection", nodes="nodes", edges="edges", pageInfo="page_info",
          totalCount=lambda page: len(page.items))
    plain(f"{_kind}Edge", cursor="cursor", node="node")
