"""The object store one trial's repository reads and writes.

``OverlayObjectStore`` reads the seeded objects every trial shares (``git_seed``) and
keeps what this trial writes (API commits, pushed packs, merges) in its own memory, so
the shared objects are never copied and never changed. It is a dulwich
``MemoryObjectStore``, so dulwich's smart-protocol handlers pack from it and unpack
pushes into it unchanged.

Objects it returns may be the shared instances: callers must not mutate them (build a
new ``Tree``/``Commit`` instead, as ``git_trees`` does).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import chain
from typing import Any

from dulwich.object_store import MemoryObjectStore
from dulwich.objects import Commit, ObjectID, RawObjectID, ShaFile
from dulwich.refs import DictRefsContainer, Ref

from ancha.world.tools.github.git_seed import Identity


class OverlayObjectStore(MemoryObjectStore):
    """Shared seeded objects below, this trial's own objects on top."""

    def __init__(self, shared: Mapping[bytes, ShaFile]) -> None:
        super().__init__()
        self.shared = shared

    def contains_loose(self, sha: ObjectID | RawObjectID) -> bool:
        hexsha = self._to_hexsha(sha)
        return hexsha in self._data or hexsha in self.shared

    def __iter__(self) -> Iterator[ObjectID]:
        return chain(self.shared.keys(), (sha for sha in self._data if sha not in self.shared))  # type: ignore[arg-type]

    def __getitem__(self, name: ObjectID | RawObjectID) -> ShaFile:
        # No copy (MemoryObjectStore copies every read): see the module's note.
        hexsha = self._to_hexsha(name)
        found = self._data.get(hexsha)
        return found if found is not None else self.shared[hexsha]

    def add_object(self, obj: ShaFile) -> None:
        if obj.id not in self.shared and obj.id not in self._data:
            self._data[obj.id] = obj

    def own_count(self) -> int:
        """How many objects this trial added."""
        return len(self._data)

    def get(self, sha: bytes) -> ShaFile | None:
        """The object, or None when there is none (or ``sha`` is not a sha)."""
        try:
            return self[sha]  # type: ignore[index]
        except (KeyError, ValueError):
            return None


@dataclass(frozen=True, slots=True)
class Signature:
    """An author or committer line: who, and when (epoch seconds, offset in seconds)."""

    name: str
    email: str
    time: int
    offset: int = 0

    @property
    def date(self) -> datetime:
        return datetime.fromtimestamp(self.time, UTC)

    @property
    def iso(self) -> str:
        """GitHub's form: ``2024-01-02T03:04:05Z``."""
        return self.date.strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True, slots=True)
class CommitInfo:
    """What the REST API shows of a commit."""

    sha: str
    tree: str
    parents: tuple[str, ...]
    message: str
    author: Signature
    committer: Signature


def parse_identity(raw: bytes) -> tuple[str, str]:
    """``b"Name <email>"`` -> (name, email)."""
    text = raw.decode("utf-8", "replace")
    name, _, rest = text.partition("<")
    return name.strip(), rest.rstrip().removesuffix(">")


def commit_info(commit: Commit) -> CommitInfo:
    author_name, author_email = parse_identity(commit.author)
    committer_name, committer_email = parse_identity(commit.committer)
    return CommitInfo(
        sha=commit.id.decode(),
        tree=commit.tree.decode(),
        parents=tuple(p.decode() for p in commit.parents),
        message=commit.message.decode("utf-8", "replace").rstrip("\n"),
        author=Signature(author_name, author_email, commit.author_time, commit.author_timezone),
        committer=Signature(committer_name, committer_email, commit.commit_time, commit.commit_timezone),
    )


def new_commit(tree: bytes, parents: list[bytes], message: str, author: Identity, at: float,
               committer: Identity | None = None, committed_at: float | None = None) -> Commit:
    """A commit object (not yet stored) in UTC, its message as given."""
    commit = Commit()
    commit.tree = ObjectID(tree)
    commit.parents = [ObjectID(p) for p in parents]
    commit.author = f"{author.name} <{author.email}>".encode()
    who = committer or author
    commit.committer = f"{who.name} <{who.email}>".encode()
    commit.author_time = int(at)
    commit.commit_time = int(at if committed_at is None else committed_at)
    commit.author_timezone = commit.commit_timezone = 0
    commit.message = message.encode()
    return commit


class TrackedRefs(DictRefsContainer):
    """dulwich refs that remember every move, so pushes report them too."""

    def __init__(self, refs: dict[Ref, bytes]) -> None:
        super().__init__(refs)
        self.moved: list[tuple[bytes, bytes | None, bytes | None]] = []

    def set_if_equals(self, name: Ref, old_ref: ObjectID | None, new_ref: ObjectID, *args: Any,
                      **kwargs: Any) -> bool:
        before = self._refs.get(name)
        done = super().set_if_equals(name, old_ref, new_ref, *args, **kwargs)
        if done and before != new_ref:
            self.moved.append((name, before, new_ref))
        return done

    def add_if_new(self, name: Ref, ref: ObjectID, *args: Any, **kwargs: Any) -> bool:
        done = super().add_if_new(name, ref, *args, **kwargs)
        if done:
            self.moved.append((name, None, ref))
        return done

    def remove_if_equals(self, name: Ref, old_ref: ObjectID | None, *args: Any, **kwargs: Any) -> bool:
        before = self._refs.get(name)
        done = super().remove_if_equals(name, old_ref, *args, **kwargs)
        if done and before is not None:
            self.moved.append((name, before, None))
        return done
