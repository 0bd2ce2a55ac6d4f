"""One trial's git repository: real objects, real SHAs, refs that move.

``build_repo_git(repo_seed, start)`` gives a ``RepoGit`` whose seeded history is shared
with every other trial of the same seed (``git_seed``: built once per process) and whose
writes stay in this trial (``git_objects.OverlayObjectStore``). Shas are hex ``str``.

The API the rest of the replica uses:

- reading: ``resolve(rev)`` (branch, tag, ``refs/...``, full or short sha, ``HEAD``,
  a seeded commit's ``$ref``) -> commit sha or None; ``branches()``, ``tags()``,
  ``refs(prefix)``, ``branch_sha(name)``, ``ref_sha(ref)``; ``object(sha)``,
  ``read_file(commit, path)`` -> bytes or None, ``entry(commit, path)``,
  ``list_dir(commit, path)`` -> [DirEntry] or None; ``commit_info(sha)`` ->
  ``CommitInfo`` or None; ``log(rev, path, since, until, author)`` (lazy, newest first);
  ``commits_between(old, new)``; ``is_ancestor``; ``compare(base, head)`` ->
  ``Comparison``; ``mergeable(base, head)``.
- writing: ``add_blob``/``add_object``; ``write_files(branch, {path: bytes | None},
  message, author, at, ...)`` commits on a branch (contents API, world actions);
  ``commit_tree`` makes a commit without moving a ref (git data API);
  ``create_ref``/``set_ref``/``delete_ref`` with old-value checks and fast-forward
  rules; ``rename_branch``; ``merge(base_branch, head, method, ...)`` with methods
  ``merge``/``squash``/``rebase``, raising ``MergeConflict``.
- events: ``on_ref_update(updates)`` is called after any ref moves (API, merge, push
  through ``smart_http``) with ``RefUpdate(ref, old, new, actor)``; None for a created
  or deleted ref's missing side.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from dulwich.objects import Blob, Commit, ObjectID, ShaFile, Tag, Tree
from dulwich.refs import SYMREF, ZERO_SHA, Ref, check_ref_format
from dulwich.repo import MemoryRepo

from ancha.world.tools.github import git_history
from ancha.world.tools.github.git_history import Comparison
from ancha.world.tools.github.git_merge import MergeConflict, merge_trees, replay_commits
from ancha.world.tools.github.git_objects import (
    CommitInfo,
    OverlayObjectStore,
    TrackedRefs,
    commit_info,
    new_commit,
)
from ancha.world.tools.github.git_seed import Identity, SeededRepo, seeded_repo
from ancha.world.tools.github.git_trees import (
    LINK_MODE,
    SUBMODULE_MODE,
    Change,
    Entry,
    InvalidPath,
    apply_changes,
    iter_entries,
    lookup,
)

__all__ = ["Comparison", "CommitInfo", "DirEntry", "Identity", "InvalidPath", "MergeConflict", "NotFastForward", "RefConflict",
           "RefError", "RefUpdate", "RepoGit", "UnknownRevision", "build_repo_git"]

_HEX = re.compile(r"^[0-9a-f]{4,40}$")


@dataclass(frozen=True, slots=True)
class RefUpdate:
    ref: str
    """Full name: ``refs/heads/main``."""
    old: str | None
    new: str | None
    actor: str


@dataclass(frozen=True, slots=True)
class DirEntry:
    name: str
    path: str
    type: str
    """GitHub's contents type: ``file``, ``dir``, ``symlink`` or ``submodule``."""
    mode: int
    sha: str
    size: int


class RefError(Exception):
    """A ref cannot be changed as asked."""


class RefConflict(RefError):
    """The ref is not where the caller expected (it moved, exists already, or is missing)."""


class NotFastForward(RefError):
    """A non-forced update that would drop commits."""


class InvalidRef(RefError):
    """Not a name git allows for a ref."""


class UnknownRevision(LookupError):
    """No branch, tag or commit by that name."""


def build_repo_git(repo_seed: Any, start: datetime, identities: Mapping[str, Identity] | None = None,
                   *, empty: bool = False) -> RepoGit:
    """A trial's repository from the scene's seed (see ``git_seed.seeded_repo``). ``empty``
    gives a repository with no commits at all (``POST /user/repos`` without ``auto_init``):
    its default branch is unborn until the first push."""
    if empty:
        branch = str(getattr(repo_seed, "default_branch", None) or (repo_seed.get("default_branch") if
                     isinstance(repo_seed, Mapping) else None) or "main")
        return RepoGit(SeededRepo(key="empty", objects={}, refs={}, default_branch=branch, commits={}))
    return RepoGit(seeded_repo(repo_seed, start, identities))


class RepoGit:
    """One repository in one trial."""

    def __init__(self, seeded: SeededRepo) -> None:
        self.seeded = seeded
        self.store = OverlayObjectStore(seeded.objects)
        head = SYMREF + b"refs/heads/" + seeded.default_branch.encode()
        self._refs = TrackedRefs({Ref(b"HEAD"): head, **{Ref(k): v for k, v in seeded.refs.items()}})
        self.repo = MemoryRepo()
        """dulwich's view for the smart protocol handlers (``smart_http``)."""
        self.repo.object_store = self.store
        self.repo.refs = self._refs
        self.commits: dict[str, str] = dict(seeded.commits)
        self.on_ref_update: Callable[[list[RefUpdate]], None] | None = None

    # --- refs ---------------------------------------------------------------------------

    @property
    def default_branch(self) -> str:
        target = self._refs.read_loose_ref(Ref(b"HEAD")) or b""
        return target.removeprefix(SYMREF).removeprefix(b"refs/heads/").decode()

    def set_default_branch(self, name: str) -> None:
        if self.branch_sha(name) is None:
            raise UnknownRevision(name)
        self._refs.set_symbolic_ref(Ref(b"HEAD"), Ref(b"refs/heads/" + name.encode()))

    def refs(self, prefix: str = "refs/") -> list[tuple[str, str]]:
        """(full name, sha as stored) under a prefix, sorted by name."""
        wanted = prefix.encode()
        return sorted((name.decode(), sha.decode()) for name, sha in self._refs._refs.items()
                      if name.startswith(wanted) and not sha.startswith(SYMREF))

    def branches(self) -> list[tuple[str, str]]:
        return [(name.removeprefix("refs/heads/"), sha) for name, sha in self.refs("refs/heads/")]

    def tags(self) -> list[tuple[str, str]]:
        return [(name.removeprefix("refs/tags/"), sha) for name, sha in self.refs("refs/tags/")]

    def ref_sha(self, ref: str) -> str | None:
        value = self._refs._refs.get(Ref(ref.encode()))
        return None if value is None or value.startswith(SYMREF) else value.decode()

    def branch_sha(self, name: str) -> str | None:
        return self.ref_sha("refs/heads/" + name)

    def resolve(self, rev: str) -> str | None:
        """The commit a revision names, or None."""
        if not rev or any(c in rev for c in " \t\n\0~^:"):
            return None
        if rev == "HEAD":
            return self.branch_sha(self.default_branch)
        if rev.startswith("$"):
            return self.commits.get(rev[1:])
        for ref in (rev, "refs/heads/" + rev, "refs/tags/" + rev, "refs/" + rev):
            if ref.startswith("refs/") and (sha := self.ref_sha(ref)) is not None:
                return self._peel(sha)
        if _HEX.match(rev):
            return self._by_prefix(rev)
        return None

    def _peel(self, sha: str) -> str | None:
        obj = self.store.get(sha.encode())
        while isinstance(obj, Tag):
            obj = self.store.get(obj.object[1])
        return obj.id.decode() if isinstance(obj, Commit) else None

    def _by_prefix(self, prefix: str) -> str | None:
        if len(prefix) == 40:
            return self._peel(prefix)
        found = {sha for sha in self.store if sha.startswith(prefix.encode())}
        commits = [sha for sha in found if isinstance(self.store.get(sha), Commit)]
        return commits[0].decode() if len(commits) == 1 else None

    def create_ref(self, ref: str, sha: str, actor: str = "agent") -> RefUpdate:
        self._check_target(ref, sha)
        if not self._refs.add_if_new(Ref(ref.encode()), ObjectID(sha.encode())):
            raise RefConflict("Reference already exists")
        return self._flush(actor)[0]

    def set_ref(self, ref: str, sha: str, *, expected: str | None = None, force: bool = True,
                actor: str = "agent") -> RefUpdate | None:
        """Move an existing ref; ``expected`` is the sha it must be at now. None when it
        was there already."""
        self._check_target(ref, sha)
        current = self.ref_sha(ref)
        if current is None:
            raise UnknownRevision(ref)
        if expected is not None and current != expected:
            raise RefConflict(f"{ref} is at {current}, not {expected}")
        if current == sha:
            return None
        if not force and not self.is_ancestor(current, sha):
            raise NotFastForward("Update is not a fast forward")
        if not self._refs.set_if_equals(Ref(ref.encode()), ObjectID(current.encode()), ObjectID(sha.encode())):
            raise RefConflict(f"{ref} moved")
        return self._flush(actor)[0]

    def delete_ref(self, ref: str, expected: str | None = None, actor: str = "agent") -> RefUpdate:
        current = self.ref_sha(ref)
        if current is None:
            raise UnknownRevision(ref)
        if expected is not None and current != expected:
            raise RefConflict(f"{ref} is at {current}, not {expected}")
        if ref == "refs/heads/" + self.default_branch:
            raise RefConflict("Cannot delete the default branch")
        self._refs.remove_if_equals(Ref(ref.encode()), ObjectID(current.encode()))
        return self._flush(actor)[0]

    def rename_branch(self, old: str, new: str, actor: str = "agent") -> list[RefUpdate]:
        sha = self.branch_sha(old)
        if sha is None:
            raise UnknownRevision(old)
        self._check_target("refs/heads/" + new, sha)
        if not self._refs.add_if_new(Ref(b"refs/heads/" + new.encode()), ObjectID(sha.encode())):
            raise RefConflict("Reference already exists")
        if old == self.default_branch:
            self._refs.set_symbolic_ref(Ref(b"HEAD"), Ref(b"refs/heads/" + new.encode()))
        self._refs.remove_if_equals(Ref(b"refs/heads/" + old.encode()), ObjectID(sha.encode()))
        return self._flush(actor)

    def flush_ref_updates(self, actor: str) -> list[RefUpdate]:
        """Report the moves not reported yet (pushes) to ``on_ref_update``."""
        return self._flush(actor)

    def _check_target(self, ref: str, sha: str) -> None:
        if not ref.startswith("refs/") or not check_ref_format(Ref(ref.encode())):
            raise InvalidRef(f"{ref!r} is not a valid ref name")
        if not isinstance(self.store.get(sha.encode()), Commit | Tag):
            raise UnknownRevision(sha)

    def _flush(self, actor: str) -> list[RefUpdate]:
        moved, self._refs.moved = self._refs.moved, []
        updates = [RefUpdate(name.decode(), old.decode() if old and old != ZERO_SHA else None,
                             new.decode() if new else None, actor) for name, old, new in moved]
        if updates and self.on_ref_update is not None:
            self.on_ref_update(updates)
        return updates

    # --- objects ------------------------------------------------------------------------

    def object(self, sha: str) -> ShaFile | None:
        return self.store.get(sha.encode())

    def add_object(self, obj: ShaFile) -> str:
        self.store.add_object(obj)
        return obj.id.decode()

    def add_blob(self, data: bytes) -> str:
        return self.add_object(Blob.from_string(data))

    def commit_info(self, sha: str) -> CommitInfo | None:
        obj = self.store.get(sha.encode())
        return commit_info(obj) if isinstance(obj, Commit) else None

    def entry(self, commit_sha: str, path: str) -> Entry | None:
        commit = self.store.get(commit_sha.encode())
        if not isinstance(commit, Commit):
            return None
        return lookup(self._get, commit.tree, path)

    def read_file(self, commit_sha: str, path: str) -> bytes | None:
        found = self.entry(commit_sha, path)
        blob = self.store.get(found.sha) if found is not None and found.kind == "blob" else None
        return blob.data if isinstance(blob, Blob) else None

    def list_dir(self, commit_sha: str, path: str) -> list[DirEntry] | None:
        found = self.entry(commit_sha, path)
        if found is None or not found.is_dir:
            return None
        prefix = path.strip("/") + "/" if path.strip("/") else ""
        result = []
        for rel, item in iter_entries(self._get, found.sha):
            kind = ("dir" if item.is_dir else "submodule" if item.mode == SUBMODULE_MODE
                    else "symlink" if item.mode == LINK_MODE else "file")
            blob = self.store.get(item.sha) if kind in ("file", "symlink") else None
            size = len(blob.data) if isinstance(blob, Blob) else 0
            result.append(DirEntry(rel, prefix + rel, kind, item.mode, item.sha.decode(), size))
        return result

    def tree_entries(self, tree_sha: str, recursive: bool = False) -> list[tuple[str, Entry]] | None:
        if not isinstance(self.store.get(tree_sha.encode()), Tree):
            return None
        return list(iter_entries(self._get, tree_sha.encode(), recursive=recursive))

    def _get(self, sha: bytes) -> ShaFile:
        return self.store[ObjectID(sha)]

    # --- history ------------------------------------------------------------------------

    def log(self, rev: str, path: str | None = None, since: float | None = None, until: float | None = None,
            author: Callable[[CommitInfo], bool] | str | None = None) -> Iterator[CommitInfo]:
        """Newest first. ``author`` matches a name or email (case-insensitive) or is a test."""
        sha = self.resolve(rev)
        if sha is None:
            raise UnknownRevision(rev)
        if isinstance(author, str):
            wanted = author.lower()

            def test(info: CommitInfo) -> bool:
                return wanted in (info.author.name.lower(), info.author.email.lower())

            return git_history.log(self._get, sha.encode(), path, since, until, test)
        return git_history.log(self._get, sha.encode(), path, since, until, author)

    def commits_between(self, old: str | None, new: str) -> list[CommitInfo]:
        """Commits reachable from ``new`` and not from ``old``, oldest first."""
        hidden = git_history.ancestors(self._get, old.encode()) if old else set()
        return [commit_info(c) for c in reversed(list(git_history.walk(self._get, [new.encode()], hidden)))]

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        return git_history.is_ancestor(self._get, ancestor.encode(), descendant.encode())

    def merge_base(self, a: str, b: str) -> str | None:
        found = git_history.merge_base(self._get, a.encode(), b.encode())
        return found.decode() if found else None

    def compare(self, base: str, head: str) -> Comparison:
        base_sha, head_sha = self.resolve(base), self.resolve(head)
        if base_sha is None or head_sha is None:
            raise UnknownRevision(base if base_sha is None else head)
        return git_history.compare(self._get, base_sha.encode(), head_sha.encode())

    def diff(self, old_tree: str | None, new_tree: str | None) -> list[git_history.FileChange]:
        return git_history.diff_trees(self._get, old_tree.encode() if old_tree else None,
                                      new_tree.encode() if new_tree else None)

    # --- writing ------------------------------------------------------------------------

    def commit_tree(self, tree: str, parents: list[str], message: str, author: Identity, at: float,
                    committer: Identity | None = None, committed_at: float | None = None) -> str:
        """Store a commit without moving any ref (the git data API)."""
        return self.add_object(new_commit(tree.encode(), [p.encode() for p in parents], message, author, at,
                                          committer, committed_at))

    def write_files(self, branch: str, changes: Mapping[str, Change], message: str, author: Identity,
                    at: float, committer: Identity | None = None, expected_parent: str | None = None,
                    actor: str = "agent", committed_at: float | None = None) -> str:
        """Commit ``changes`` ({path: content, or None to delete}) on top of a branch."""
        tip = self.branch_sha(branch)
        if tip is None:
            raise UnknownRevision(branch)
        if expected_parent is not None and tip != expected_parent:
            raise RefConflict(f"{branch} is at {tip}, not {expected_parent}")
        parent = self.store[ObjectID(tip.encode())]
        assert isinstance(parent, Commit)
        tree = apply_changes(self._get, self.store.add_object, parent.tree, changes)
        sha = self.commit_tree(tree.decode(), [tip], message, author, at, committer, committed_at)
        self.set_ref("refs/heads/" + branch, sha, expected=tip, actor=actor)
        return sha

    def mergeable(self, base: str, head: str) -> bool:
        base_sha, head_sha = self.resolve(base), self.resolve(head)
        if base_sha is None or head_sha is None:
            return False
        try:
            self._merged_tree(base_sha, head_sha, lambda obj: None)
        except MergeConflict:
            return False
        return True

    def _merged_tree(self, base_sha: str, head_sha: str, add: Callable[[ShaFile], None]) -> bytes:
        mb = git_history.merge_base(self._get, base_sha.encode(), head_sha.encode())
        ours, theirs = self.store[ObjectID(base_sha.encode())], self.store[ObjectID(head_sha.encode())]
        assert isinstance(ours, Commit) and isinstance(theirs, Commit)
        base = self.store[ObjectID(mb)] if mb is not None else None
        base_tree = base.tree if isinstance(base, Commit) else None
        return merge_trees(self._get, add, base_tree, ours.tree, theirs.tree)

    def merge(self, base_branch: str, head: str, method: str, message: str, author: Identity, at: float,
              committer: Identity | None = None, actor: str = "agent") -> str:
        """Merge ``head`` into a branch (``merge``, ``squash`` or ``rebase``); the new tip."""
        tip = self.branch_sha(base_branch)
        head_sha = self.resolve(head)
        if tip is None or head_sha is None:
            raise UnknownRevision(base_branch if tip is None else head)
        if method == "rebase":
            new = self._rebase(tip, head_sha, committer or author, at)
        else:
            tree = self._merged_tree(tip, head_sha, self.store.add_object)
            parents = [tip, head_sha] if method == "merge" else [tip]
            new = self.commit_tree(tree.decode(), parents, message, author, at, committer)
        self.set_ref("refs/heads/" + base_branch, new, expected=tip, actor=actor)
        return new

    def _rebase(self, tip: str, head: str, committer: Identity, at: float) -> str:
        hidden = git_history.ancestors(self._get, tip.encode())
        replay = [c for c in reversed(list(git_history.walk(self._get, [head.encode()], hidden)))
                  if len(c.parents) == 1]
        return replay_commits(self._get, self.store.add_object, tip.encode(), replay, committer, at).decode()

    # --- state ----------------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        return {"default_branch": self.default_branch, "branches": dict(self.branches()),
                "tags": dict(self.tags()), "objects_added": self.store.own_count()}
