"""Accounts: users (people, bots, the agent), organizations and their teams."""

from __future__ import annotations

import re

from ancha.world.tools.github.models.wire import JSONDict, avatar_url, iso, node_id, web_url

ROLE_ORDER = ("read", "triage", "write", "maintain", "admin")
"""Repository roles, weakest first."""


def role_rank(role: str | None) -> int:
    """0 for no access, then 1 (read) .. 5 (admin); GitHub's ``pull``/``push`` are read/write."""
    if role is None:
        return 0
    role = {"pull": "read", "push": "write"}.get(role, role)
    return ROLE_ORDER.index(role) + 1 if role in ROLE_ORDER else 0


def stronger(a: str | None, b: str | None) -> str | None:
    return a if role_rank(a) >= role_rank(b) else b


class Account:
    """What users and organizations share: a login, an id and the simple-user shape."""

    kind = "User"
    type = "User"

    def __init__(self, login: str, id: int, *, name: str | None = None, email: str | None = None,
                 created_at: float = 0.0) -> None:
        self.login = login
        self.id = id
        self.node_id = node_id(self.kind, id)
        self.name = name
        self.email = email
        self.created_at = created_at
        self.updated_at = created_at

    @property
    def key(self) -> str:
        return self.login.lower()

    def simple(self, base: str) -> JSONDict:
        """GitHub's ``simple-user`` (owners, authors, assignees, actors)."""
        u = f"{base}/users/{self.login}"
        return {
            "login": self.login, "id": self.id, "node_id": self.node_id,
            "avatar_url": avatar_url(base, self.id), "gravatar_id": "", "url": u,
            "html_url": f"{web_url(base)}/{self.login}", "followers_url": f"{u}/followers",
            "following_url": f"{u}/following{{/other_user}}", "gists_url": f"{u}/gists{{/gist_id}}",
            "starred_url": f"{u}/starred{{/owner}}{{/repo}}", "subscriptions_url": f"{u}/subscriptions",
            "organizations_url": f"{u}/orgs", "repos_url": f"{u}/repos", "events_url": f"{u}/events{{/privacy}}",
            "received_events_url": f"{u}/received_events", "type": self.type, "user_view_type": "public",
            "site_admin": False,
        }


class User(Account):
    """A person's, a bot's or the agent's account."""

    def __init__(self, login: str, id: int, *, name: str | None = None, email: str | None = None,
                 type: str = "User", ref: str | None = None, person: str | None = None,
                 created_at: float = 0.0) -> None:
        super().__init__(login, id, name=name, email=email, created_at=created_at)
        self.type = type
        self.kind = "Bot" if type == "Bot" else "User"
        self.node_id = node_id(self.kind, id)
        self.ref = ref
        self.person = person

    def public(self, base: str, *, public_repos: int = 0) -> JSONDict:
        """``public-user``: ``GET /users/{username}``."""
        return {**self.simple(base), "name": self.name, "company": None, "blog": "", "location": None,
                "email": self.email, "hireable": None, "bio": None, "twitter_username": None,
                "public_repos": public_repos, "public_gists": 0, "followers": 0, "following": 0,
                "created_at": iso(self.created_at), "updated_at": iso(self.updated_at)}

    def private(self, base: str, *, public_repos: int = 0, private_repos: int = 0) -> JSONDict:
        """``private-user``: ``GET /user`` for the caller themself."""
        return {**self.public(base, public_repos=public_repos), "private_gists": 0,
                "total_private_repos": private_repos, "owned_private_repos": private_repos,
                "disk_usage": 0, "collaborators": 0, "two_factor_authentication": True,
                "plan": {"name": "pro", "space": 976562499, "collaborators": 0, "private_repos": 9999}}


class Team:
    """An org team: members (and maintainers) get ``repos[full_name]`` on those repositories."""

    def __init__(self, org: Org, id: int, name: str, slug: str | None = None, *, description: str | None = None,
                 privacy: str = "closed", permission: str = "read", created_at: float = 0.0) -> None:
        self.org = org
        self.id = id
        self.node_id = node_id("Team", id)
        self.name = name
        self.slug = slug or re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or str(id)
        self.description = description
        self.privacy = privacy
        self.permission = permission
        self.members: dict[str, str] = {}
        """Login key -> ``member`` or ``maintainer``."""
        self.repos: dict[str, str] = {}
        """Repository full name (lower-case) -> role."""
        self.created_at = created_at
        self.updated_at = created_at

    def to_dict(self, base: str) -> JSONDict:
        """``team`` (lists) shape."""
        # GitHub's own url is /organizations/{id}/team/{id}; the org/slug form serves the same
        # team through the documented routes, so clients following it stay on served paths.
        u = f"{base}/orgs/{self.org.login}/teams/{self.slug}"
        return {"id": self.id, "node_id": self.node_id, "url": u,
                "html_url": f"{web_url(base)}/orgs/{self.org.login}/teams/{self.slug}", "name": self.name,
                "slug": self.slug, "description": self.description, "privacy": self.privacy,
                "notification_setting": "notifications_enabled",
                "permission": {"read": "pull", "write": "push"}.get(self.permission, self.permission),
                "members_url": f"{u}/members{{/member}}", "repositories_url": f"{u}/repos",
                "type": "organization", "organization_id": self.org.id, "parent": None}

    def full(self, base: str) -> JSONDict:
        """``team-full``: ``GET /orgs/{org}/teams/{team_slug}``."""
        return {**self.to_dict(base), "members_count": len(self.members), "repos_count": len(self.repos),
                "created_at": iso(self.created_at), "updated_at": iso(self.updated_at),
                "organization": self.org.full(base)}


class Org(Account):
    """An organization: members (``admin`` role for owners), teams, a base repo role."""

    kind = "Organization"
    type = "Organization"

    def __init__(self, login: str, id: int, *, name: str | None = None, description: str | None = None,
                 default_permission: str = "read", created_at: float = 0.0) -> None:
        super().__init__(login, id, name=name, created_at=created_at)
        self.node_id = node_id("Organization", id)
        self.description = description
        self.default_permission = default_permission
        self.members: dict[str, str] = {}
        """Login key -> ``member`` or ``admin``."""
        self.teams: dict[str, Team] = {}
        """Slug -> team."""

    def simple_org(self, base: str) -> JSONDict:
        """``organization-simple``: ``GET /user/orgs``, ``/users/{u}/orgs``."""
        u = f"{base}/orgs/{self.login}"
        return {"login": self.login, "id": self.id, "node_id": self.node_id, "url": u,
                "repos_url": f"{u}/repos", "events_url": f"{u}/events", "hooks_url": f"{u}/hooks",
                "issues_url": f"{u}/issues", "members_url": f"{u}/members{{/member}}",
                "public_members_url": f"{u}/public_members{{/member}}",
                "avatar_url": avatar_url(base, self.id), "description": self.description}

    def full(self, base: str, *, public_repos: int = 0) -> JSONDict:
        """``organization-full``: ``GET /orgs/{org}``."""
        # GitHub leaves out company, email, location and twitter_username when an org has none.
        return {**self.simple_org(base), "name": self.name or self.login, "blog": "", "is_verified": False,
                "has_organization_projects": True, "has_repository_projects": True,
                "public_repos": public_repos, "public_gists": 0, "followers": 0, "following": 0,
                "html_url": f"{web_url(base)}/{self.login}", "type": "Organization",
                "created_at": iso(self.created_at), "updated_at": iso(self.updated_at), "archived_at": None}
