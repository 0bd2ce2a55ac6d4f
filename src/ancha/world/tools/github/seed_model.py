"""The ``world.github`` seed, resolved: what a GitHub replica is built from.

The scene loader has already checked and stripped refs (``$gh_laura`` is ``gh_laura``
here) and turned relative times into absolute UTC datetimes. A field that names a user
(``author``, ``assignees``, org ``members``, ``permissions`` keys, reviewers) holds a
user's ref or a login: the replica resolves a seeded user's ref first, else takes the
value as a login. A time left out (``None``) is filled deterministically: seeded items
are spaced before ``clock.start`` in seed order, as the Slack seed does.

``GitHubWorld.parse`` accepts this model or its JSON form (the server hands over either).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

Permission = Literal["read", "triage", "write", "maintain", "admin"]
"""Repository roles, weakest first (GitHub's API also says pull/push for read/write)."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class GitHubAgent(_Model):
    """The agent's own account; its token is ``{{github.token}}``."""

    ref: str = "github_agent"
    login: str = "ancha-agent"
    name: str | None = None
    email: str | None = None


class GitHubUser(_Model):
    """A seeded account. ``person`` names the scene person who acts through it."""

    ref: str | None = None
    login: str
    name: str | None = None
    email: str | None = None
    type: Literal["User", "Bot"] = "User"
    person: str | None = None


class GitHubTeam(_Model):
    """A team of an organization: its members get ``permission`` on ``repos``
    (repository names, ``owner/repo`` or bare ``repo`` of the org, or repo refs)."""

    name: str
    slug: str | None = None
    """Default: the name, lower-cased, with runs of non-alphanumerics as ``-``."""
    description: str | None = None
    members: list[str] = Field(default_factory=list)
    maintainers: list[str] = Field(default_factory=list)
    privacy: Literal["closed", "secret"] = "closed"
    permission: Permission = "read"
    repos: list[str] | dict[str, Permission] = Field(default_factory=list)
    """A list gives each repo ``permission``; a mapping sets one per repo."""


class GitHubOrg(_Model):
    """An organization. Members read its repos unless a repo's ``permissions`` say more;
    ``admins`` are owners (admin on every repo)."""

    login: str
    name: str | None = None
    description: str | None = None
    members: list[str] = Field(default_factory=list)
    admins: list[str] = Field(default_factory=list)
    default_permission: Literal["none", "read", "write", "admin"] = "read"
    teams: list[GitHubTeam] = Field(default_factory=list)


class GitHubLabel(_Model):
    name: str
    color: str = "ededed"
    description: str | None = None


class GitHubMilestone(_Model):
    title: str
    description: str | None = None
    state: Literal["open", "closed"] = "open"
    due_on: datetime | None = None
    at: datetime | None = None


class GitHubComment(_Model):
    """A comment on an issue or pull request's conversation; with ``path`` (pulls only)
    a review comment on that file's ``line``."""

    author: str
    body: str
    at: datetime | None = None
    path: str | None = None
    line: int | None = None


class GitHubIssue(_Model):
    ref: str | None = None
    number: int | None = Field(default=None, ge=1)
    """None: the next free number in the repository (issues and pulls share numbers)."""
    title: str
    body: str | None = None
    author: str | None = None
    """Default: the repository's owner, or the first org admin/member, or the agent."""
    labels: list[str] = Field(default_factory=list)
    """Label names; a label the repo does not list is created with a default colour."""
    assignees: list[str] = Field(default_factory=list)
    milestone: str | None = None
    """A milestone title of the repository."""
    state: Literal["open", "closed"] = "open"
    state_reason: Literal["completed", "not_planned"] | None = None
    locked: bool = False
    at: datetime | None = None
    closed_at: datetime | None = None
    comments: list[GitHubComment] = Field(default_factory=list)


class GitHubReview(_Model):
    author: str
    state: Literal["APPROVED", "CHANGES_REQUESTED", "COMMENTED", "PENDING", "DISMISSED"] = "COMMENTED"
    body: str = ""
    at: datetime | None = None


class GitHubPull(_Model):
    ref: str | None = None
    number: int | None = Field(default=None, ge=1)
    title: str
    body: str | None = None
    author: str | None = None
    head: str
    """Branch name in the same repository (``owner:branch`` for a fork is not seeded)."""
    base: str | None = None
    """Default: the repository's default branch."""
    state: Literal["open", "closed"] = "open"
    draft: bool = False
    merged: bool = False
    labels: list[str] = Field(default_factory=list)
    assignees: list[str] = Field(default_factory=list)
    reviewers: list[str] = Field(default_factory=list)
    """Requested reviewers (user refs or logins)."""
    at: datetime | None = None
    reviews: list[GitHubReview] = Field(default_factory=list)
    comments: list[GitHubComment] = Field(default_factory=list)


class GitHubCommit(_Model):
    """A commit on ``branch`` (created from the default branch when new): ``files``
    maps a path to its new text, or ``None`` to delete it."""

    ref: str | None = None
    branch: str | None = None
    message: str
    author: str | None = None
    at: datetime | None = None
    files: dict[str, str | None] = Field(default_factory=dict)


class GitHubBranch(_Model):
    from_: str | None = Field(default=None, alias="from")
    """A branch name, a commit ref or a SHA; default: the default branch."""


class GitHubProtection(_Model):
    """Branch protection (``protected_branches`` also takes bare branch names)."""

    branch: str
    required_reviews: int = Field(default=0, ge=0, le=6)
    required_checks: list[str] = Field(default_factory=list)
    enforce_admins: bool = False


class GitHubRepo(_Model):
    ref: str | None = None
    name: str
    """``owner/repo``; the owner is a seeded user or org (a new user is made otherwise)."""
    private: bool = False
    description: str | None = None
    default_branch: str = "main"
    files: dict[str, str] = Field(default_factory=dict)
    files_dir: str | None = None
    """Loaded into ``files`` by the scene loader; kept for reference."""
    commits: list[GitHubCommit] = Field(default_factory=list)
    branches: dict[str, GitHubBranch] = Field(default_factory=dict)
    permissions: dict[str, Permission] = Field(default_factory=dict)
    """Direct collaborators: user ref or login -> role."""
    labels: list[GitHubLabel] = Field(default_factory=list)
    milestones: list[GitHubMilestone] = Field(default_factory=list)
    issues: list[GitHubIssue] = Field(default_factory=list)
    pulls: list[GitHubPull] = Field(default_factory=list)
    protected_branches: list[GitHubProtection] = Field(default_factory=list)
    production: str | None = None
    """What runs in production: a branch, a commit ref or a SHA."""
    at: datetime | None = None

    @field_validator("name")
    @classmethod
    def _owner_slash_repo(cls, value: str) -> str:
        owner, sep, repo = value.partition("/")
        if not sep or not owner or not repo or "/" in repo:
            raise ValueError("a repository name is owner/repo")
        return value

    @field_validator("labels", mode="before")
    @classmethod
    def _label_names(cls, value: Any) -> Any:
        return [{"name": v} if isinstance(v, str) else v for v in value] if isinstance(value, list) else value

    @field_validator("milestones", mode="before")
    @classmethod
    def _milestone_titles(cls, value: Any) -> Any:
        return [{"title": v} if isinstance(v, str) else v for v in value] if isinstance(value, list) else value

    @field_validator("protected_branches", mode="before")
    @classmethod
    def _branch_names(cls, value: Any) -> Any:
        return [{"branch": v} if isinstance(v, str) else v for v in value] if isinstance(value, list) else value

    @property
    def owner(self) -> str:
        return self.name.partition("/")[0]

    @property
    def repo(self) -> str:
        return self.name.partition("/")[2]


class GitHubWorld(_Model):
    """The whole seed. Every list is optional; the agent's account always exists."""

    agent: GitHubAgent = Field(default_factory=GitHubAgent)
    users: list[GitHubUser] = Field(default_factory=list)
    orgs: list[GitHubOrg] = Field(default_factory=list)
    repos: list[GitHubRepo] = Field(default_factory=list)

    @classmethod
    def parse(cls, seed: GitHubWorld | dict[str, Any] | None) -> GitHubWorld:
        if seed is None:
            return cls()
        if isinstance(seed, GitHubWorld):
            return seed
        if isinstance(seed, BaseModel):
            return cls.model_validate(seed.model_dump(mode="json", by_alias=True))
        return cls.model_validate(seed)
