"""``world.github``: one model, as a scene file writes it and as it resolves.

Refs: ``agent.ref`` and ``users[].ref`` declare users (kind ``user``), ``repos[].ref``
repositories, ``commits[].ref`` commits, ``issues[].ref`` issues and ``pulls[].ref``
pulls. Where a user is expected (authors, assignees, members, reviewers, permission
keys) a scene writes ``$ref`` or a plain login. ``files_dir`` is read into ``files``
(and into the scene's content hash); seed times are ISO or offsets from clock.start.

``build_world`` resolves the written section in place: refs made bare (``$gh_laura`` is
``gh_laura``), pointers to commits resolved, ``files_dir`` read, times absolute UTC
datetimes; the same classes then validate the resolved data (labels, milestones and
protected branches written as a name become their model), and the replica is built from
them (``GitHubFile.parse``). A field written one way and kept another says so with
``Written`` (``ancha.scene.field_forms``). A field that names a user holds a user's ref or
a login: the replica resolves a seeded user's ref first, else takes the value as a login.
A time left out (``None``) is filled deterministically when the replica seeds its state:
seeded items are spaced before ``clock.start`` in seed order.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError, field_validator
from pydantic.json_schema import SkipJsonSchema

from ancha.config.validation import Expect, FileModel, join
from ancha.scene.field_forms import written
from ancha.scene.file_model import RefName, Time
from ancha.scene.refs import Declared
from ancha.scene.sections import SectionContext
from ancha.scene.sources import parse_time

TOOL = "github"
MAX_FILES_DIR_BYTES = 64 * 1024 * 1024
UserRef = Annotated[str, Expect("a user ref such as $gh_laura, or a login")]
SeedTime = Annotated[datetime | None, written(Time | None)]
"""Written as an ISO time or an offset from clock.start (``-3d``), kept as a UTC datetime."""
Permission = Literal["read", "triage", "write", "maintain", "admin"]
"""Repository roles, weakest first (GitHub's API also says pull/push for read/write)."""


class _File(FileModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class AgentFile(_File):
    # the agent's own account; its token is ``{{github.token}}``
    ref: RefName = "github_agent"
    login: str = "ancha-agent"
    name: str | None = None
    email: str | None = None


class UserFile(_File):
    unsupported_fields: ClassVar[dict[str, str]] = {
        "person": "link the user from its person instead: people.<name>.accounts.github: $ref"}
    ref: RefName | None = None
    login: str
    name: str | None = None
    email: str | None = None
    type: Literal["User", "Bot"] = "User"
    person: SkipJsonSchema[str | None] = Field(default=None, exclude=True)
    """The scene person who acts through the account: a seed built by hand may name one here;
    a scene file links the user from its person (``people.<p>.accounts.github``)."""


class TeamFile(_File):
    # a team of an organization: its members get ``permission`` on ``repos``
    name: str
    slug: str | None = None
    """Default: the name, lower-cased, with runs of non-alphanumerics as ``-``."""
    description: str | None = None
    members: list[UserRef] = Field(default_factory=list)
    maintainers: list[UserRef] = Field(default_factory=list)
    privacy: Literal["closed", "secret"] = "closed"
    permission: Permission = "read"
    repos: list[str] | dict[str, Permission] = Field(default_factory=list)
    """Repository names (``owner/repo`` or bare ``repo`` of the org) or repo refs: a list gives
    each ``permission``; a mapping sets one per repo."""


class OrgFile(_File):
    # members read its repos unless a repo's ``permissions`` say more; ``admins`` are owners
    login: str
    name: str | None = None
    description: str | None = None
    members: list[UserRef] = Field(default_factory=list)
    admins: list[UserRef] = Field(default_factory=list)
    default_permission: Literal["none", "read", "write", "admin"] = "read"
    teams: list[TeamFile] = Field(default_factory=list)


class LabelFile(_File):
    name: str
    color: str = "ededed"
    description: str | None = None


class MilestoneFile(_File):
    title: str
    description: str | None = None
    state: Literal["open", "closed"] = "open"
    due_on: SeedTime = None
    at: SeedTime = None


class CommentFile(_File):
    # a comment on an issue or pull request's conversation; with ``path`` (pulls only) a
    # review comment on that file's ``line``
    author: UserRef
    body: str
    at: SeedTime = None
    path: str | None = None
    line: int | None = None


class IssueFile(_File):
    ref: RefName | None = None
    number: Annotated[int, Field(ge=1)] | None = None
    """None: the next free number in the repository (issues and pulls share numbers)."""
    title: str
    body: str | None = None
    author: UserRef | None = None
    """Default: the repository's owner, or the first org admin/member, or the agent."""
    labels: list[str] = Field(default_factory=list)
    """Label names; a label the repo does not list is created with a default colour."""
    assignees: list[UserRef] = Field(default_factory=list)
    milestone: str | None = None
    """A milestone title of the repository."""
    state: Literal["open", "closed"] = "open"
    state_reason: Literal["completed", "not_planned"] | None = None
    locked: bool = False
    at: SeedTime = None
    closed_at: SeedTime = None
    comments: list[CommentFile] = Field(default_factory=list)


class ReviewFile(_File):
    author: UserRef
    state: Literal["APPROVED", "CHANGES_REQUESTED", "COMMENTED", "PENDING", "DISMISSED"] = "COMMENTED"
    body: str = ""
    at: SeedTime = None


class PullFile(_File):
    ref: RefName | None = None
    number: Annotated[int, Field(ge=1)] | None = None
    title: str
    body: str | None = None
    author: UserRef | None = None
    head: str
    """Branch name in the same repository (``owner:branch`` for a fork is not seeded)."""
    base: str | None = None
    """Default: the repository's default branch."""
    state: Literal["open", "closed"] = "open"
    draft: bool = False
    merged: bool = False
    labels: list[str] = Field(default_factory=list)
    assignees: list[UserRef] = Field(default_factory=list)
    reviewers: list[UserRef] = Field(default_factory=list)
    """Requested reviewers (user refs or logins)."""
    at: SeedTime = None
    reviews: list[ReviewFile] = Field(default_factory=list)
    comments: list[CommentFile] = Field(default_factory=list)


class CommitFile(_File):
    # a commit on ``branch`` (created from the default branch when new): ``files`` maps a
    # path to its new text, or ``None`` to delete it
    ref: RefName | None = None
    branch: str | None = None
    message: str
    author: UserRef | None = None
    at: SeedTime = None
    files: dict[str, str | None] = Field(default_factory=dict)


class BranchFile(_File):
    from_: Annotated[str, Expect("a branch, a commit ref such as $fix or a SHA")] | None = Field(
        default=None, alias="from")
    """A branch name, a commit ref (bare, once resolved) or a SHA; default: the default branch."""


class ProtectionFile(_File):
    branch: str
    required_reviews: Annotated[int, Field(ge=0, le=6)] = 0
    required_checks: list[str] = Field(default_factory=list)
    enforce_admins: bool = False


class RepoFile(_File):
    ref: RefName | None = None
    name: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$"),
                    Expect("a repository name such as acme/orders")]
    """``owner/repo``; the owner is a seeded user or org (a new user is made otherwise)."""
    private: bool = False
    description: str | None = None
    default_branch: str = "main"
    files: dict[str, str] = Field(default_factory=dict)
    files_dir: str | None = Field(default=None, description="a folder beside the scene: its files, as they are")
    """Read into ``files`` when the scene resolves (None from then on)."""
    commits: list[CommitFile] = Field(default_factory=list)
    branches: dict[str, BranchFile | None] = Field(default_factory=dict)
    """Resolved, every branch is a ``BranchFile``."""
    permissions: dict[str, Permission] = Field(default_factory=dict)
    """Direct collaborators: user ref or login -> role."""
    labels: list[Annotated[LabelFile, written(LabelFile | str)]] = Field(default_factory=list)
    milestones: list[Annotated[MilestoneFile, written(MilestoneFile | str)]] = Field(default_factory=list)
    issues: list[IssueFile] = Field(default_factory=list)
    pulls: list[PullFile] = Field(default_factory=list)
    protected_branches: list[Annotated[ProtectionFile, written(ProtectionFile | str)]] = Field(
        default_factory=list)
    """Branch protection; a bare branch name protects it with the defaults."""
    production: Annotated[str, Expect("a branch, a commit ref such as $good or a SHA")] | None = None
    """What runs in production: a branch, a commit ref (bare, once resolved) or a SHA."""
    at: SeedTime = None

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


class GitHubFile(_File):
    # the whole section; every list is optional, the agent's account always exists
    # (no docstring: it would show in ``ancha schema scene``)
    agent: AgentFile = Field(default_factory=AgentFile)
    users: list[UserFile] = Field(default_factory=list)
    orgs: list[OrgFile] = Field(default_factory=list)
    repos: list[RepoFile] = Field(default_factory=list)

    @classmethod
    def parse(cls, seed: GitHubFile | dict[str, Any] | None) -> GitHubFile:
        """The resolved seed a replica is built from, given it or its JSON form (none: only
        the agent's account)."""
        if seed is None:
            return cls()
        if isinstance(seed, GitHubFile):
            return seed
        if isinstance(seed, BaseModel):
            return cls.model_validate(seed.model_dump(mode="json", by_alias=True))
        return cls.model_validate(seed)


# --- resolving -------------------------------------------------------------------------

_USER_FIELDS = {"author", "assignees", "members", "admins", "maintainers", "reviewers"}
_TIME_FIELDS = {"at", "due_on", "closed_at"}


class _Resolution:
    def __init__(self, ctx: SectionContext) -> None:
        self.ctx = ctx
        self.ok = True

    def declare(self, name: object, kind: str, path: str, extra: dict[str, str] | None = None) -> None:
        if isinstance(name, str):
            self.ctx.refs.declare(name, Declared(kind, self.ctx.source.line_of(path), 0, extra or {}, tool=TOOL),
                                  self.ctx.source.reporter(path))

    def user(self, value: str, path: str) -> str | None:
        """A ``$ref`` of a GitHub user (bare), or a login as written."""
        if not value.startswith("$"):
            return value
        name = self.ctx.refs.resolve(value, "user", self.ctx.source.reporter(path), tool=TOOL)
        self.ok = self.ok and name is not None
        return name

    def revision(self, value: str, path: str) -> str | None:
        """``$commit_ref`` (bare), or a branch or SHA as written."""
        if not value.startswith("$"):
            return value
        name = self.ctx.refs.resolve(value, "commit", self.ctx.source.reporter(path), tool=TOOL)
        self.ok = self.ok and name is not None
        return name

    def time(self, value: Any, path: str) -> datetime | None:
        try:
            return parse_time(value, self.ctx.start)
        except (ValueError, OverflowError) as exc:
            self.ctx.source.add(path, str(exc), "write an ISO time, or -3d for three days before clock.start")
            self.ok = False
            return None

    def walk(self, value: Any, path: str) -> Any:
        """Users and times resolved anywhere in the tree (refs of records stay as declared)."""
        if isinstance(value, dict):
            out: dict[str, Any] = {}
            for key, item in value.items():
                sub = join(path, key.rstrip("_"))
                if key in _USER_FIELDS and isinstance(item, str):
                    out[key] = self.user(item, sub)
                elif key in _USER_FIELDS and isinstance(item, list):
                    out[key] = [self.user(u, join(sub, j)) if isinstance(u, str) else u for j, u in enumerate(item)]
                elif key in _TIME_FIELDS and item is not None:
                    out[key] = self.time(item, sub)
                else:
                    out[key] = self.walk(item, sub)
            return out
        if isinstance(value, list):
            return [self.walk(item, join(path, j)) for j, item in enumerate(value)]
        return value


def build_world(clean: dict[str, Any], ctx: SectionContext) -> GitHubFile | None:
    """``world.github``: declare every ref, read ``files_dir``, resolve users, revisions and times
    in place, then validate the resolved data with the same models."""
    run = _Resolution(ctx)
    base = ctx.path
    agent = clean.get("agent") or {}
    run.declare(agent.get("ref", "github_agent"), "user", f"{base}.agent.ref")
    for i, user in enumerate(clean.get("users") or []):
        if user is not None:
            run.declare(user.get("ref"), "user", f"{base}.users[{i}].ref")
    repos = [(i, r) for i, r in enumerate(clean.get("repos") or []) if r is not None]
    for i, repo in repos:
        path = f"{base}.repos[{i}]"
        run.declare(repo.get("ref"), "repo", f"{path}.ref")
        for kind, field in (("commit", "commits"), ("issue", "issues"), ("pull", "pulls")):
            for j, item in enumerate(repo.get(field) or []):
                if item is not None:
                    run.declare(item.get("ref"), kind, f"{path}.{field}[{j}].ref", {"repo": repo.get("ref") or ""})
    resolved_repos = []
    for i, repo in repos:
        path = f"{base}.repos[{i}]"
        data = run.walk({k: v for k, v in repo.items() if k not in ("permissions", "branches", "production")}, path)
        data["permissions"] = {}
        for login, role in (repo.get("permissions") or {}).items():
            user = run.user(login, join(join(path, "permissions"), login))
            if user is not None:
                data["permissions"][user] = role
        data["branches"] = {}
        for name, branch in (repo.get("branches") or {}).items():
            start = (branch or {}).get("from_", (branch or {}).get("from"))
            data["branches"][name] = {"from": run.revision(start, join(join(path, "branches"), name) + ".from")
                                      if start else None}
        if repo.get("production"):
            data["production"] = run.revision(repo["production"], f"{path}.production")
        if repo.get("files_dir"):
            data["files"] = {**_read_dir(repo["files_dir"], f"{path}.files_dir", ctx, run), **data.get("files", {})}
        data.pop("files_dir", None)  # read here, once and checked; the world never opens it again
        resolved_repos.append(data)
    if not run.ok:
        return None
    world = {"agent": agent, "users": [u for u in clean.get("users") or [] if u is not None],
             "orgs": run.walk([o for o in clean.get("orgs") or [] if o is not None], f"{base}.orgs"),
             "repos": resolved_repos}
    try:
        return GitHubFile.model_validate(world)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = join(base, ".".join(str(p) for p in error["loc"]))
        ctx.source.add(where, error["msg"].removeprefix("Value error, "), "see the github seed in scenes.md")
        return None


def _read_dir(name: str, path: str, ctx: SectionContext, run: _Resolution) -> dict[str, str]:
    """Every file under ``name`` (beside the scene), by its path there; text as UTF-8.
    Read through ``ctx.read_tree``: inside the scene's folder, regular files, capped."""
    tree = ctx.read_tree(name, path, MAX_FILES_DIR_BYTES)
    if tree is None:
        run.ok = False
        return {}
    files: dict[str, str] = {}
    for rel, (data, _mode) in tree.items():
        ctx.digest.update(rel.encode() + b"\0" + data)
        files[rel] = data.decode("utf-8", errors="replace")
    return files
