"""The GitHub state checks and predicates as scene files write them, and resolved.

A body whose written and resolved forms differ only in its refs (bare once resolved) has
one model (``*File``), resolved in place; ``github.file_at`` (written as a list) and
``github.issue`` (texts written as one string or a list) resolve into models of their own.

``github.file_at: [repo, revision, path]`` with ``contains`` or ``equals`` beside it;
``github.pull: {pull, merged}``; ``github.production: {repo, commit}``;
``github.issue: {repo, title_contains, body_contains, labels, state, count | count_gte | count_lte}``;
``github.permission: {repo, user}`` with ``is`` beside it (or inside); predicates ``issue_labeled: {repo, labels}`` and
``pull_merged: {repo, pull}``. Refs come out bare.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ancha.config.validation import Expect, FileModel, join
from ancha.scene.file_model import Ref
from ancha.scene.predicates import Resolver

TOOL = "github"
SPECIAL_REVISIONS = ("default", "production")

Texts = Annotated[str | list[str], Expect("a string, or a list of strings that must all appear")]


class _File(FileModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


FileAtFile = Annotated[list[str], Expect("[repo, revision, path], e.g. [$orders, main, docs/runbook.md]")]


class PullFile(_File):
    pull: Ref
    merged: bool


class ProductionFile(_File):
    repo: Ref
    commit: Ref


class IssueFile(_File):
    repo: Ref
    title_contains: Texts | None = None
    body_contains: Texts | None = None
    labels: list[str] | None = None
    state: Literal["open", "closed"] | None = None
    count: Annotated[int, Field(ge=0)] | None = None
    count_gte: Annotated[int, Field(ge=0)] | None = None
    count_lte: Annotated[int, Field(ge=0)] | None = None


Access = Literal["read", "write", "admin", "none"]
PERMISSION_SIBLINGS: dict[str, Any] = {"is": Access}
"""``is`` written beside ``github.permission``, as the reference writes ``{ repo, user }, then is``."""


class PermissionBodyFile(_File):
    """``github.permission``'s body as written: ``is`` beside the key, or inside the body."""

    repo: Ref
    user: Ref
    is_: Access | None = Field(default=None, alias="is")


class PermissionFile(_File):
    repo: Ref
    user: Ref
    is_: Access = Field(alias="is")


class IssueLabeledFile(_File):
    repo: Ref
    labels: list[str]


class PullMergedFile(_File):
    repo: Ref | None = None
    pull: Ref


class FileAt(_Model):
    repo: str
    revision: str
    """A branch name, a commit ref (``commit`` set), ``default`` or ``production``."""
    commit: bool = False
    """``revision`` is a commit ref."""
    path: str
    contains: str | None = None
    equals: str | None = None


class IssueMatch(_Model):
    repo: str
    title_contains: list[str] = Field(default_factory=list)
    body_contains: list[str] = Field(default_factory=list)
    labels: list[str] = Field(default_factory=list)
    state: Literal["open", "closed"] | None = None
    count: int | None = None
    count_gte: int | None = None
    count_lte: int | None = None


def _ref(resolver: Resolver, value: Any, kind: str, path: str) -> str | None:
    return resolver.refs.resolve(value, kind, resolver.source.reporter(path), tool=TOOL)


def resolve_file_at(data: dict[str, Any], path: str, resolver: Resolver) -> FileAt | None:
    value = data["value"]
    if len(value) != 3:
        resolver.add(path, f"expected [repo, revision, path], got {len(value)} items",
                     "for example [$orders, main, docs/runbook.md]")
        return None
    given = [name for name in ("contains", "equals") if data.get(name) is not None]
    parent = path.rsplit(".", 2)[0]
    if len(given) != 1:
        resolver.add(parent, "github.file_at needs exactly one of contains or equals" if not given else
                     "github.file_at takes one of contains or equals, not both",
                     'for example contains: "verified health check"')
        return None
    repo = _ref(resolver, value[0], "repo", join(path, 0))
    revision, file_path = value[1], value[2]
    commit = isinstance(revision, str) and revision.startswith("$")
    if commit:
        revision = _ref(resolver, revision, "commit", join(path, 1))
    if repo is None or revision is None:
        return None
    if not file_path or file_path.startswith("/"):
        resolver.add(join(path, 2), f"expected a path in the repository such as docs/runbook.md, got {file_path!r}")
        return None
    return FileAt(repo=repo, revision=revision, commit=commit, path=file_path, contains=data.get("contains"),
                  equals=data.get("equals"))


def resolve_pull(data: dict[str, Any], path: str, resolver: Resolver) -> PullFile | None:
    pull = _ref(resolver, data.get("pull"), "pull", join(path, "pull"))
    return None if pull is None or data.get("merged") is None else PullFile(pull=pull, merged=data["merged"])


def resolve_production(data: dict[str, Any], path: str, resolver: Resolver) -> ProductionFile | None:
    repo = _ref(resolver, data.get("repo"), "repo", join(path, "repo"))
    commit = _ref(resolver, data.get("commit"), "commit", join(path, "commit"))
    return None if repo is None or commit is None else ProductionFile(repo=repo, commit=commit)


def _texts(value: Any) -> list[str]:
    return [] if value is None else [value] if isinstance(value, str) else list(value)


def resolve_issue(data: dict[str, Any], path: str, resolver: Resolver) -> IssueMatch | None:
    repo = _ref(resolver, data.get("repo"), "repo", join(path, "repo"))
    counts = [name for name in ("count", "count_gte", "count_lte") if data.get(name) is not None]
    if "count" in counts and len(counts) > 1:
        resolver.add(join(path, "count"), "count is not used together with count_gte or count_lte",
                     "write count for an exact number, or count_gte / count_lte for a range")
        return None
    for name in ("title_contains", "body_contains"):
        if data.get(name) is not None and not all(_texts(data[name])):
            resolver.add(join(path, name), "needs non-empty text", "for example body_contains: [CSV, export]")
            return None
    if repo is None:
        return None
    return IssueMatch(repo=repo, title_contains=_texts(data.get("title_contains")),
                      body_contains=_texts(data.get("body_contains")), labels=data.get("labels") or [],
                      state=data.get("state"), count=data.get("count"), count_gte=data.get("count_gte"),
                      count_lte=data.get("count_lte"))


def resolve_permission(data: dict[str, Any], path: str, resolver: Resolver) -> PermissionFile | None:
    """``{ github.permission: { repo, user }, is: write }``, or ``is`` inside the body."""
    body, beside = data["value"], data.get("is")
    repo = _ref(resolver, body.get("repo"), "repo", join(path, "repo"))
    user = _ref(resolver, body.get("user"), "user", join(path, "user"))
    inside = body.get("is_")
    example = "for example { github.permission: { repo: $github_orders, user: $github_ben }, is: write }"
    if beside is not None and inside is not None:
        resolver.add(join(path, "is"), "github.permission takes is once: beside github.permission or inside it, "
                     "not both", example)
        return None
    if beside is None and inside is None:
        if resolver.present.isdisjoint({join(path, "is"), join(path.rsplit(".", 2)[0], "is")}):
            resolver.add(path.rsplit(".", 2)[0], "github.permission needs is: read, write, admin or none beside it",
                         example)
        return None  # otherwise an invalid is: already reported
    if repo is None or user is None:
        return None
    return PermissionFile.model_validate({"repo": repo, "user": user, "is": beside or inside})


def resolve_issue_labeled(data: dict[str, Any], path: str, resolver: Resolver) -> IssueLabeledFile | None:
    repo = _ref(resolver, data.get("repo"), "repo", join(path, "repo"))
    labels = data.get("labels") or []
    if not labels:
        resolver.add(join(path, "labels"), "needs at least one label", "for example labels: [p1]")
        return None
    return None if repo is None else IssueLabeledFile(repo=repo, labels=labels)


def resolve_pull_merged(data: dict[str, Any], path: str, resolver: Resolver) -> PullMergedFile | None:
    repo = _ref(resolver, data["repo"], "repo", join(path, "repo")) if data.get("repo") is not None else None
    pull = _ref(resolver, data.get("pull"), "pull", join(path, "pull"))
    if pull is None or (data.get("repo") is not None and repo is None):
        return None
    return PullMergedFile(repo=repo, pull=pull)
