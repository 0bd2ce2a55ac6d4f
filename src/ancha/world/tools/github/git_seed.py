"""Seeded repositories, built once per process and shared by every trial.

A repository seed (files, commits, branches) becomes real git objects
exactly once: ``seeded_repo`` keys it by a hash of everything that decides its objects
(content, authors' names and emails, times, the clock's start) and keeps the result in
a small process-wide LRU cache. Trials read these objects through an overlay
(``git_store.OverlayObjectStore``) and never change them, so a 1,000-file repository
costs its build once, not once per trial.

History, in order: an initial commit holding ``files`` on ``default_branch``; then each
seeded commit applies its ``files`` (null deletes) on its ``branch``, creating the
branch first (from its ``branches[name].from`` when declared, else from the default
branch); then the declared branches not made yet. An undated commit is dated an hour
before the next commit in seed order (the last, an hour before ``clock.start``), so an
undated initial commit predates the dated ones.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from dulwich.objects import Commit, ObjectID, ShaFile

from ancha.world.tools.github.git_trees import apply_changes, build_tree

CACHE_SIZE = 32
UNDATED_SPACING = 3600.0


class SeedError(ValueError):
    """A repository seed that cannot become a history (an unknown branch or commit ref)."""


@dataclass(frozen=True, slots=True)
class Identity:
    """A git author or committer."""

    name: str
    email: str


@dataclass(frozen=True, slots=True)
class SeededRepo:
    """The immutable part every trial of a repository shares."""

    key: str
    objects: Mapping[bytes, ShaFile]
    """Every git object of the seeded history, by hex sha. Never mutated."""
    refs: Mapping[bytes, bytes]
    """``refs/heads/NAME`` -> commit sha, as seeded."""
    default_branch: str
    commits: Mapping[str, str]
    """Seeded commit ref (without ``$``) -> sha."""


@dataclass(slots=True)
class _Step:
    branch: str
    message: str
    author: Identity
    at: float
    files: dict[str, bytes | None]
    ref: str | None
    modes: dict[str, int] = field(default_factory=dict)


_cache: OrderedDict[str, SeededRepo] = OrderedDict()
_lock = threading.Lock()


def seeded_repo(seed: Any, start: datetime, identities: Mapping[str, Identity] | None = None) -> SeededRepo:
    """The shared history of a repository seed, built on first use.

    ``seed`` is the scene's repository (the pydantic model or its JSON form: ``name``,
    ``default_branch``, ``files``, ``commits``, ``branches``; ``files_dir`` is never opened here).
    ``identities`` maps an author as the seed names it (a user ref, with or without
    ``$``, or a login) to its git identity; others get ``LOGIN@users.noreply.github.com``."""
    plan, key = _plan(seed, start, identities or {})
    with _lock:
        found = _cache.get(key)
        if found is not None:
            _cache.move_to_end(key)
            return found
    built = _build(plan, key)
    with _lock:
        found = _cache.setdefault(key, built)
        _cache.move_to_end(key)
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return found


def clear_cache() -> None:
    """Forget every shared repository (tests and benchmarks measure a cold build)."""
    with _lock:
        _cache.clear()


def _field(obj: Any, *names: str) -> Any:
    for name in names:
        if isinstance(obj, Mapping):
            if name in obj:
                return obj[name]
        elif getattr(obj, name, None) is not None:
            return getattr(obj, name)
    return None


def _timestamp(at: Any, start: float) -> float | None:
    if at is None:
        return None
    if isinstance(at, datetime):
        return (at if at.tzinfo else at.replace(tzinfo=UTC)).timestamp()
    if isinstance(at, int | float):
        return start + float(at)  # seconds after clock.start, as the scene's other times
    if isinstance(at, str):
        parsed = datetime.fromisoformat(at.replace("Z", "+00:00"))
        return (parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).timestamp()
    raise SeedError(f"cannot read a time from {at!r}")


def _identity(author: Any, identities: Mapping[str, Identity], fallback: str) -> Identity:
    name = str(author) if author else fallback
    bare = name.removeprefix("$")
    found = identities.get(name) or identities.get(bare) or identities.get("$" + bare)
    return found or Identity(bare, f"{bare}@users.noreply.github.com")


def _text(content: Any) -> bytes | None:
    if content is None:
        return None
    return content if isinstance(content, bytes) else str(content).encode()


def _plan(seed: Any, start: datetime, identities: Mapping[str, Identity]) -> tuple[dict[str, Any], str]:
    start_ts = start.timestamp()
    name = str(_field(seed, "name") or "")
    owner = name.partition("/")[0] or "github"
    default_branch = str(_field(seed, "default_branch") or "main")
    files = {str(p): _text(c) or b"" for p, c in (_field(seed, "files") or {}).items()}
    modes: dict[str, int] = {}
    marks: list[Any] = []
    # ``files_dir`` is read by the scene loader (inside the scene's folder, checked and capped)
    # into ``files``; the world never opens a path a seed names, whoever sent the seed.
    steps: list[_Step] = [_Step(default_branch, "Initial commit", _identity(None, identities, owner), -1.0,
                                dict(files), None, modes)]
    for commit in _field(seed, "commits") or []:
        ref = _field(commit, "ref")
        steps.append(_Step(
            str(_field(commit, "branch") or default_branch),
            str(_field(commit, "message") or "Update files"),
            _identity(_field(commit, "author"), identities, owner),
            _timestamp(_field(commit, "at"), start_ts) or -1.0,
            {str(p): _text(c) for p, c in (_field(commit, "files") or {}).items()},
            str(ref).removeprefix("$") if ref else None,
        ))
    dated = [None, *(_timestamp(_field(c, "at"), start_ts) for c in _field(seed, "commits") or [])]
    limit = start_ts
    for step, at in zip(reversed(steps), reversed(dated), strict=True):
        if at is None:  # an hour before whatever comes next, so history reads in order
            step.at = limit = limit - UNDATED_SPACING
        else:
            limit = min(limit, at)
    branches = {str(b): str(_field(spec, "from_", "from") or default_branch).removeprefix("$")
                for b, spec in (_field(seed, "branches") or {}).items()}
    plan = {"default_branch": default_branch, "steps": steps, "branches": branches}
    digest = hashlib.sha256()
    digest.update(json.dumps({"v": 1, "default_branch": default_branch, "branches": branches,
                              "folder": marks}, sort_keys=True).encode())
    for step in steps:
        header = [step.branch, step.message, step.author.name, step.author.email, step.at, step.ref,
                  []]
        digest.update(json.dumps(header).encode())
        for path, content in sorted(step.files.items()):
            digest.update(b"\0%d:%s\0" % (len(path), path.encode()))
            digest.update(b"-" if content is None else b"%d:" % len(content) + content)
    return plan, digest.hexdigest()


def _build(plan: dict[str, Any], key: str) -> SeededRepo:
    objects: dict[bytes, ShaFile] = {}

    def add(obj: ShaFile) -> None:
        objects[obj.id] = obj

    def get(sha: bytes) -> ShaFile:
        return objects[sha]

    default_branch: str = plan["default_branch"]
    declared: dict[str, str] = plan["branches"]
    heads: dict[str, bytes] = {}
    commits: dict[str, str] = {}

    def resolve(name: str, chain: tuple[str, ...] = ()) -> bytes:
        if name in heads:
            return heads[name]
        if name in commits:
            return commits[name].encode()
        if name in declared and name not in chain:
            heads[name] = resolve(declared[name], (*chain, name))
            return heads[name]
        raise SeedError(f"branches: {name!r} is neither a branch nor a seeded commit ref")

    for index, step in enumerate(plan["steps"]):
        parent: bytes | None
        if index == 0:
            parent = None
            tree = build_tree({p: c for p, c in step.files.items() if c is not None}, add, step.modes)
        else:
            if step.branch not in heads:
                heads[step.branch] = resolve(declared.get(step.branch, default_branch))
            parent = heads[step.branch]
            parent_commit = objects[parent]
            assert isinstance(parent_commit, Commit)
            tree = apply_changes(get, add, parent_commit.tree, step.files)
        commit = Commit()
        commit.tree = ObjectID(tree)
        commit.parents = [ObjectID(parent)] if parent is not None else []
        commit.author = commit.committer = f"{step.author.name} <{step.author.email}>".encode()
        commit.author_time = commit.commit_time = int(step.at)
        commit.author_timezone = commit.commit_timezone = 0
        commit.message = step.message.encode() + (b"" if step.message.endswith("\n") else b"\n")
        add(commit)
        heads[step.branch] = commit.id
        if step.ref is not None:
            commits[step.ref] = commit.id.decode()
    for name in declared:
        resolve(name)
    return SeededRepo(key=key, objects=objects,
                      refs={b"refs/heads/" + name.encode(): sha for name, sha in heads.items()},
                      default_branch=default_branch, commits=commits)
