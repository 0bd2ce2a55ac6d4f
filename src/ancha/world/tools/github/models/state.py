"""The whole GitHub world of one trial: accounts, repositories, and who may do what."""

from __future__ import annotations

from ancha.world.tools.github.models.issues import IssueComment
from ancha.world.tools.github.models.repos import Repo
from ancha.world.tools.github.models.users import Account, Org, User, stronger
from ancha.world.tools.github.models.wire import Ids


class GitHubState:
    """Accounts by lower-case login, repositories by lower-case ``owner/name``."""

    def __init__(self, ids: Ids) -> None:
        self.ids = ids
        self.users: dict[str, User] = {}
        self.orgs: dict[str, Org] = {}
        self.repos: dict[str, Repo] = {}
        self.repos_by_id: dict[int, Repo] = {}
        self.comments: dict[int, IssueComment] = {}
        """Issue comments by id (ids are global on GitHub)."""
        self.renamed: dict[str, int] = {}
        """A renamed repository's old ``owner/name`` (lower-case) -> its id: the old name redirects."""

    # --- accounts -------------------------------------------------------------------------

    def add_user(self, user: User) -> User:
        self.users[user.key] = user
        return user

    def add_org(self, org: Org) -> Org:
        self.orgs[org.key] = org
        return org

    def account(self, login: str) -> Account | None:
        key = login.lower()
        return self.users.get(key) or self.orgs.get(key)

    def user(self, login: str) -> User | None:
        return self.users.get(login.lower())

    # --- repositories ---------------------------------------------------------------------

    def add_repo(self, repo: Repo) -> Repo:
        self.repos[repo.key] = repo
        self.repos_by_id[repo.id] = repo
        return repo

    def remove_repo(self, repo: Repo) -> None:
        self.repos.pop(repo.key, None)
        self.repos_by_id.pop(repo.id, None)
        for issue in repo.issues.values():
            for comment in issue.comments:
                self.comments.pop(comment.id, None)

    def repo(self, owner: str, name: str) -> Repo | None:
        return self.repos.get(f"{owner}/{name}".lower())

    def repos_of(self, owner: Account) -> list[Repo]:
        return [r for r in self.repos.values() if r.owner.key == owner.key]

    # --- permissions ------------------------------------------------------------------------

    def role(self, repo: Repo, account: Account | None) -> str | None:
        """The effective role of ``account`` on ``repo`` (read .. admin), or None for no access.

        The strongest of: owning the repository (admin), being an org owner (admin), a
        direct collaborator's role, the roles of the account's teams, the org's base role
        for members, and read on any public repository.
        """
        best: str | None = None if repo.private else "read"
        if account is None:
            return best
        key = account.key
        if key == repo.owner.key:
            return "admin"
        best = stronger(best, repo.collaborators.get(key))
        owner = repo.owner
        if isinstance(owner, Org) and key in owner.members:
            if owner.members[key] == "admin":
                return "admin"
            if owner.default_permission != "none":
                best = stronger(best, owner.default_permission)
            for team in owner.teams.values():
                if key in team.members and repo.key in team.repos:
                    best = stronger(best, team.repos[repo.key])
        return best

    def orgs_of(self, account: Account) -> list[Org]:
        return [org for org in self.orgs.values() if account.key in org.members]
