"""What every resolver reaches through ``info.context``: the replica, the caller, the state.

Parents handed between resolvers are the REST core's own model objects (``Repo``,
``Issue``, ``Pull``, ``User``, ...) or the small git views of ``gitobjects.py``;
``type_of`` names the GraphQL object type of each, for interfaces and unions.
"""

from __future__ import annotations

from typing import Any

from graphql import GraphQLResolveInfo

from ancha.world.tools.github.graphql.errors import NotFound
from ancha.world.tools.github.models import Account, GitHubState, Issue, Pull, Repo


class Context:
    """One GraphQL request: ``coverage_gap`` is set when a resolver met an unserved field."""

    def __init__(self, replica: Any, caller: Any) -> None:
        self.replica = replica
        self.caller = caller
        self.state: GitHubState = replica.state
        self.coverage_gap = False
        self.cost: Any = None
        """The query's ``limits.Cost`` (node count and points), set before execution."""
        self.resolutions = 0
        """Fields resolved so far, against ``limits.MAX_RESOLUTIONS``."""

    @property
    def viewer(self) -> Account:
        """The account the token acts as."""
        caller = self.caller
        account = getattr(caller, "account", None) or getattr(caller, "user", None)
        if isinstance(account, Account):
            return account
        login = getattr(caller, "login", None)
        found = self.state.account(login) if isinstance(login, str) else None
        if found is None:
            raise NotFound("Could not resolve the viewer")
        return found

    def role(self, repo: Repo) -> str | None:
        return self.state.role(repo, self.viewer)

    def can_see(self, repo: Repo) -> bool:
        return self.role(repo) is not None

    def repo(self, owner: str, name: str) -> Repo:
        """A repository the viewer can see, or GitHub's NOT_FOUND."""
        found = self.state.repo(owner, name)
        if found is None or not self.can_see(found):
            raise NotFound(f"Could not resolve to a Repository with the name '{owner}/{name}'.")
        return found


def ctx(info: GraphQLResolveInfo) -> Context:
    context: Context = info.context
    return context


def conversation(issue: Issue) -> Issue | Pull:
    """An issue number as GraphQL sees it: a pull request's conversation is the ``PullRequest``."""
    return issue.pull if issue.pull is not None else issue


_TYPE_NAMES: dict[str, str] = {
    "Repo": "Repository", "Issue": "Issue", "Pull": "PullRequest", "IssueComment": "IssueComment",
    "Label": "Label", "Milestone": "Milestone", "Review": "PullRequestReview",
    "ReviewComment": "PullRequestReviewComment", "Team": "Team",
}


def type_of(value: Any) -> str | None:
    """The GraphQL object type of a parent value."""
    if isinstance(value, Account):
        return value.kind  # User, Bot or Organization
    named = getattr(value, "graphql_type", None)
    if isinstance(named, str):
        return named
    return _TYPE_NAMES.get(type(value).__name__)
