"""The object store one trial's repository reads and writes.

``OverlayObjectStore`` reads the seeded objects every trial shares (``git_seed``) and
keeps what this trial writes (API commits, pushed packs, merges) in its own memory, so
the shared objects are never copied and never changed. It is a dulwich
``MemoryObjectStore``, so dulwich's smart-protocol handlers pack from it and unpack
pushes into it unchanged.

Objects it returns may be the shared instances: callers must not mutate them (build a
new ``Tree``/``Commit`` instead, as ``git_trees`` does).

A pack (only pushes bring one) is taken whole or not at all: every object in it is
checked as GitHub's fsck checks it (``git_fsck``) before any is stored, and the first
one refused raises ``PackRefused`` with git's reasons.
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from io import BytesIO
from itertools import chain
from tempfile import SpooledTemporaryFile
from typing import Any, BinaryIO

from dulwich.object_store import MemoryObjectStore
from dulwich.objects import Commit, ObjectID, RawObjectID, ShaFile, object_class
from dulwich.pack import PACK_SPOOL_FILE_MAX_SIZE, PackData, PackInflater, UnpackedObject
from dulwich.refs import DictRefsContainer, Ref

from ancha.world.tools.github.git_fsck import fsck_problems
from ancha.world.tools.github.git_seed import Identity

UNPACK_LIMIT = 100
"""git's ``transfer.unpackLimit``: a pack of fewer objects goes to ``unpack-objects``,
a larger one to ``index-pack`` (which names the failure a push reports)."""


class PackRefused(Exception):
    """A pushed pack holding an object git's strict fsck refuses: nothing of it was stored."""

    def __init__(self, sha: str, problems: list[str], count: int = 0) -> None:
        super().__init__("fsck error in packed object")
        self.sha = sha
        self.problems = problems
        self.count = count
        """Objects in the pack."""

    @property
    def unpacker(self) -> str:
        """The git program whose failure the push reports (by the pack's size)."""
        return "unpack-objects" if self.count < UNPACK_LIMIT else "index-pack"


MAX_OBJECT = 100 * 1024 * 1024
"""The largest object a push may carry, inflated: GitHub's file size limit."""
MAX_INFLATED = 512 * 1024 * 1024
"""The most a push's objects may inflate to, together: a small pack of highly compressed
objects (a zlib bomb, or deltas that repeat a base) must not make the trial hold more."""
_STEP = 1024 * 1024


class PackTooLarge(Exception):
    """A pushed pack whose objects inflate past ``MAX_OBJECT`` or ``MAX_INFLATED``."""


def _varint(data: bytes, at: int) -> tuple[int, int]:
    """A delta header's size (7 bits a byte, least significant first) and where it ends."""
    value = shift = 0
    while True:
        if at >= len(data):
            raise ValueError("truncated delta header")
        byte = data[at]
        value |= (byte & 0x7F) << shift
        shift += 7
        at += 1
        if not byte & 0x80:
            return value, at


def check_pack_sizes(pack: bytes) -> None:
    """Raise ``PackTooLarge`` when a pack's objects would inflate past the limits, reading
    only each object's declared size (a delta's: the size of what it builds) and inflating
    no stream past it, a MiB at a time, with nothing kept. A malformed pack is left for
    dulwich to refuse."""
    if len(pack) < 12 or pack[:4] != b"PACK":
        return
    count = int.from_bytes(pack[8:12], "big")
    at, total = 12, 0
    for _ in range(count):
        if at >= len(pack):
            return
        byte = pack[at]
        kind, size, shift = (byte >> 4) & 7, byte & 0x0F, 4
        at += 1
        while byte & 0x80:
            if at >= len(pack):
                return
            byte = pack[at]
            size |= (byte & 0x7F) << shift
            shift += 7
            at += 1
        if kind == 6:  # OFS_DELTA: a base offset, then the delta
            while at < len(pack) and pack[at] & 0x80:
                at += 1
            at += 1
        elif kind == 7:  # REF_DELTA: a base sha, then the delta
            at += 20
        if size > (2 * MAX_OBJECT if kind in (6, 7) else MAX_OBJECT):
            raise PackTooLarge(f"an object of {size} bytes")
        inflater = zlib.decompressobj()
        head, produced = b"", 0
        pending = memoryview(pack)[at:at + _STEP]
        at += len(pending)
        while not inflater.eof:
            out = inflater.decompress(pending, _STEP)
            produced += len(out)
            if produced > size:
                return  # more than declared: corrupt, dulwich refuses it
            if len(head) < 32:
                head += out[:32]
            pending = memoryview(inflater.unconsumed_tail)
            if not pending:
                if at >= len(pack):
                    return
                pending = memoryview(pack)[at:at + _STEP]
                at += len(pending)
        at -= len(inflater.unused_data)
        built = size
        if kind in (6, 7):
            try:
                _, end = _varint(head, 0)
                built, _ = _varint(head, end)
            except ValueError:
                return
        if built > MAX_OBJECT:
            raise PackTooLarge(f"an object of {built} bytes")
        total += built
        if total > MAX_INFLATED:
            raise PackTooLarge(f"objects of more than {MAX_INFLATED} bytes")


class _CheckedInflater(PackInflater):
    """dulwich's inflater, which checks each object's exact bytes (``git_fsck``) before it
    parses them, so that an object dulwich could not even read is refused in git's words."""

    def _result(self, unpacked: UnpackedObject) -> ShaFile:
        assert unpacked.obj_type_num is not None and unpacked.obj_chunks is not None
        raw = b"".join(unpacked.obj_chunks)
        problems = fsck_problems(unpacked.obj_type_num, raw)
        if problems:
            kind = object_class(unpacked.obj_type_num)
            header = (kind.type_name if kind is not None else b"unknown") + b" %d\0" % len(raw)
            raise PackRefused(hashlib.sha1(header + raw).hexdigest(), problems)
        return super()._result(unpacked)


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

    def add_thin_pack(self, read_all: Callable[[int], bytes], read_some: Callable[[int], bytes] | None,
                      progress: Callable[[str], None] | None = None, *, max_input_size: int | None = None,
                      ) -> None:
        """dulwich's, once the pack (the rest of a stateless request, at most
        ``max_input_size`` bytes) has passed ``check_pack_sizes``."""
        read = read_some or read_all
        chunks, size = [], 0
        while chunk := read(_STEP):
            size += len(chunk)
            if max_input_size and size > max_input_size:
                raise PackTooLarge(f"more than {max_input_size} bytes")
            chunks.append(chunk)
        pack = b"".join(chunks)
        del chunks
        check_pack_sizes(pack)
        stream = BytesIO(pack)
        super().add_thin_pack(stream.read, stream.read, progress)

    def add_pack(self) -> tuple[BinaryIO, Callable[[], None], Callable[[], None]]:
        """dulwich's, but all or nothing: the objects are inflated and checked (``git_fsck``)
        before any is stored."""
        # closed by commit or abort, as dulwich's own add_pack does
        spool: BinaryIO = SpooledTemporaryFile(  # type: ignore[assignment]  # noqa: SIM115
            max_size=PACK_SPOOL_FILE_MAX_SIZE, prefix="incoming-")

        def commit() -> None:
            try:
                size = spool.tell()
                if size == 0:
                    return
                spool.seek(0)
                pack = PackData.from_file(spool, self.object_format, size)  # type: ignore[arg-type]
                try:
                    pack.check()
                    objects = list(_CheckedInflater.for_pack_data(pack, self.get_raw))
                except PackRefused as refused:
                    refused.count = len(pack)
                    raise
                finally:
                    pack.close()
                for obj in objects:
                    self.add_object(obj)
            finally:
                spool.close()

        return spool, commit, spool.close

    def own_count(self) -> int:
        """How many objects this trial added."""
        return len(self._data)

    def get(self, sha: bytes) -> ShaFile | None:
        """The object, or None when there is none (or ``sha`` is not a sha)."""
        try:
            return self[sha]  # type: ignore[index]
        except (KeyError, ValueError):
            return None


_EARLIEST, _LATEST = -62135596800, 253402300799
"""0001-01-01 and 9999-12-31T23:59:59, in epoch seconds: the range a ``datetime`` holds."""
_MAX_OFFSET = 24 * 3600 - 60


def moment(seconds: int, offset: int = 0) -> datetime:
    """A git timestamp as a datetime in its own offset (UTC by default). git takes any date
    up to 2**63 and offsets up to 99:59 (``git_fsck``): past what a datetime holds, the
    nearest moment it does hold, in UTC."""
    at = datetime.fromtimestamp(min(max(seconds, _EARLIEST), _LATEST), UTC)
    if offset == 0:
        return at
    try:
        return at.astimezone(timezone(timedelta(seconds=max(-_MAX_OFFSET, min(offset, _MAX_OFFSET)))))
    except OverflowError:
        return at


@dataclass(frozen=True, slots=True)
class Signature:
    """An author or committer line: who, and when (epoch seconds, offset in seconds)."""

    name: str
    email: str
    time: int
    offset: int = 0

    @property
    def date(self) -> datetime:
        return moment(self.time)

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
