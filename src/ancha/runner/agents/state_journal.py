"""A journal of the agent's state folder (``ANCHA_STATE_DIR``) over a trial, so that ``ancha fork
--at SEQ`` can give a forked trial the folder exactly as it was when the world had traced call SEQ:
what the agent remembered comes back with the world.

The runner calls ``StateJournal.observe`` as the trial goes. Each change to the folder becomes one
version: a line of ``index.jsonl`` listing every file by the SHA-256 of its contents, with the
contents stored once each under ``objects/`` (a folder that changes one small file among large ones
costs one small object per version). ``restore_state`` writes a version back.

Only regular files and symbolic links are state: an empty folder, a FIFO or a socket is nothing an
agent reads back. A file keeps its executable bit (its other mode bits are the restoring process's
umask's); a link is recorded as its target text, never followed, and restored as a link. Besides
``seq``, ``at`` and ``files``, an index line lists ``executable`` and ``symlinks`` (relative paths)
when there are any.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
import shutil
import stat
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, Any

INDEX = "index.jsonl"
OBJECTS = "objects"
CHUNK = 1024 * 1024
"""Files are hashed and copied this much at a time, never read whole into memory."""
RACY_NS = 2_000_000_000
"""A file whose timestamps are within this long of when it was hashed is hashed again at the next
look: timestamps are coarse (a clock tick; 2 s on FAT), so a second write of the same size in the
same tick would otherwise leave the stat unchanged and go unnoticed."""

_GONE = frozenset({errno.ENOENT, errno.ENOTDIR, errno.ELOOP, errno.EINVAL})
"""What opening or reading a link says when the path is no longer what the walk saw."""
_DIGEST = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class _Seen:
    """A path as last looked at: what it holds, and the stat it had when that was hashed."""

    link: bool
    digest: str
    executable: bool
    stat_key: tuple[int, ...]
    hashed_ns: int

    def still(self, link: bool, key: tuple[int, ...], st: os.stat_result) -> bool:
        """Whether the path can be taken to hold the same without hashing it again."""
        changed_ns = max(st.st_mtime_ns, st.st_ctime_ns)
        return self.link == link and self.stat_key == key and changed_ns < self.hashed_ns - RACY_NS


class StateJournal:
    """Records the agent's state folder (ANCHA_STATE_DIR) as it changes during a trial."""

    def __init__(self, state_dir: Path, journal_dir: Path) -> None:
        self.state_dir = state_dir
        self.journal_dir = journal_dir
        self._objects = journal_dir / OBJECTS
        self._seen: dict[str, _Seen] = {}
        self._recorded: dict[str, tuple[bool, str, bool]] = {}
        self._index: IO[bytes] | None = None

    def observe(self, seq: int, at: str) -> bool:
        """Look at the state folder now; record a version if a file was added, changed or removed
        since the last look. Only files whose stat changed (or changed just before they were last
        hashed) are read. Returns whether a version was recorded."""
        seen: dict[str, _Seen] = {}
        for relative, path, st in _walk(self.state_dir):
            link = stat.S_ISLNK(st.st_mode)
            key = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_mode)
            before = self._seen.get(relative)
            if before is not None and before.still(link, key, st):
                seen[relative] = before
                continue
            hashed_ns = time.time_ns()
            digest = self._store_link(path) if link else self._store_file(path)
            if digest is not None:  # None: gone (or no longer a file) since the walk saw it
                seen[relative] = _Seen(link, digest, not link and bool(st.st_mode & stat.S_IXUSR), key, hashed_ns)
        self._seen = seen
        now = {relative: (s.link, s.digest, s.executable) for relative, s in seen.items()}
        if now == self._recorded:
            return False
        self._append(seq, at, seen)
        self._recorded = now
        return True

    def close(self) -> None:
        if self._index is not None:
            self._index.close()
            self._index = None

    def _append(self, seq: int, at: str, seen: dict[str, _Seen]) -> None:
        line: dict[str, Any] = {"seq": seq, "at": at,
                                "files": {relative: seen[relative].digest for relative in sorted(seen)}}
        executable = sorted(relative for relative, s in seen.items() if s.executable)
        links = sorted(relative for relative, s in seen.items() if s.link)
        if executable:
            line["executable"] = executable
        if links:
            line["symlinks"] = links
        if self._index is None:
            self.journal_dir.mkdir(parents=True, exist_ok=True)
            _cut_partial_line(self.journal_dir / INDEX)
            self._index = (self.journal_dir / INDEX).open("ab")
        self._index.write((json.dumps(line, separators=(",", ":")) + "\n").encode())
        self._index.flush()

    def _store_file(self, path: Path) -> str | None:
        """The digest of a regular file's contents, stored under ``objects/`` unless already there.
        Hashed first, and copied only when new: a file touched but not changed is read once."""
        hasher = hashlib.sha256()
        with _open_file(path) as source:
            if source is None:
                return None
            while chunk := source.read(CHUNK):
                hasher.update(chunk)
        if (self._objects / hasher.hexdigest()).exists():
            return hasher.hexdigest()
        hasher = hashlib.sha256()  # the object is named for what was copied, should it change meanwhile
        with _open_file(path) as source:
            if source is None:
                return None
            temporary, copy = self._incoming()
            try:
                with copy:
                    while chunk := source.read(CHUNK):
                        hasher.update(chunk)
                        copy.write(chunk)
                os.replace(temporary, self._objects / hasher.hexdigest())
            finally:
                temporary.unlink(missing_ok=True)
        return hasher.hexdigest()

    def _store_link(self, path: Path) -> str | None:
        """The digest of a link's target text, stored under ``objects/`` unless already there."""
        try:
            text = os.fsencode(os.readlink(path))
        except OSError as error:
            if error.errno in _GONE:
                return None
            raise
        digest = hashlib.sha256(text).hexdigest()
        if not (self._objects / digest).exists():
            temporary, copy = self._incoming()
            try:
                with copy:
                    copy.write(text)
                os.replace(temporary, self._objects / digest)
            finally:
                temporary.unlink(missing_ok=True)
        return digest

    def _incoming(self) -> tuple[Path, IO[bytes]]:
        """A new file in ``objects/`` to write an object into before it is renamed to its digest,
        so that an object named for a digest is always whole."""
        self._objects.mkdir(parents=True, exist_ok=True)
        temporary = self._objects / f".incoming-{uuid.uuid4().hex}"
        return temporary, temporary.open("xb")


def restore_state(journal_dir: Path, seq: int, target: Path) -> int | None:
    """Fill ``target`` (created if missing; existing files of the same names overwritten) with the
    state folder as its latest recorded version whose seq <= ``seq`` had it; return that version's
    seq, or None when no version is that old (``target`` left empty). Raises ValueError for a
    version naming a path outside ``target`` (absolute, ``..``) or an object that is no digest,
    before anything is written; and for a path whose folder in ``target`` is a link, when it is
    reached (no write ever goes through a link)."""
    target.mkdir(parents=True, exist_ok=True)
    version = _version_at(journal_dir / INDEX, seq)
    if version is None:
        return None
    files, links, executable = version.get("files"), set(version.get("symlinks", ())), set(version.get("executable", ()))
    if not isinstance(files, dict):
        raise ValueError(f"the state journal's version at seq {version['seq']} has no files mapping")
    for relative, digest in files.items():
        _inside(relative)
        if not isinstance(digest, str) or not _DIGEST.fullmatch(digest):
            raise ValueError(f"the state journal names {digest!r} for {relative!r}, which is no SHA-256 digest")
    objects = journal_dir / OBJECTS
    for relative in sorted(files):
        destination = _folder_for(target, _inside(relative)) / PurePosixPath(relative).name
        if relative in links:
            _place_link(objects / files[relative], destination)
        else:
            _place_file(objects / files[relative], destination, relative in executable)
    return int(version["seq"])


def _walk(root: Path) -> Iterator[tuple[str, Path, os.stat_result]]:
    """The regular files and links under ``root``, each with its relative POSIX path and its own
    stat (a link's, not its target's); never into a linked folder; what vanishes is left out."""
    folders = [root]
    while folders:
        folder = folders.pop()
        try:
            with os.scandir(folder) as listing:
                entries = list(listing)
        except (FileNotFoundError, NotADirectoryError):
            continue
        for entry in entries:
            try:
                st = entry.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue
            if stat.S_ISDIR(st.st_mode):
                folders.append(Path(entry.path))
            elif stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode):
                yield Path(entry.path).relative_to(root).as_posix(), Path(entry.path), st


@contextlib.contextmanager
def _open_file(path: Path) -> Iterator[IO[bytes] | None]:
    """``path`` opened to read if it still is a regular file: never through a link put in its
    place, never blocking on a FIFO put there; None otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as error:
        if error.errno not in _GONE:
            raise
        fd = -1
    if fd >= 0 and not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        fd = -1
    if fd < 0:
        yield None
        return
    with os.fdopen(fd, "rb") as handle:
        yield handle


def _cut_partial_line(index: Path) -> None:
    """Cut off a last line a crash left half written, so that a journal appending to this index
    starts its line on a line of its own."""
    try:
        handle = index.open("r+b")
    except FileNotFoundError:
        return
    with handle:
        end = handle.seek(0, os.SEEK_END)
        if end == 0:
            return
        handle.seek(end - 1)
        if handle.read(1) == b"\n":
            return
        position = end
        while position > 0:
            start = max(0, position - CHUNK)
            handle.seek(start)
            newline = handle.read(position - start).rfind(b"\n")
            if newline >= 0:
                handle.truncate(start + newline + 1)
                return
            position = start
        handle.truncate(0)


def _version_at(index: Path, seq: int) -> dict[str, Any] | None:
    """The last whole line of the index with a seq <= ``seq`` (a line without its newline is one a
    crash cut short, and is left out)."""
    found: dict[str, Any] | None = None
    try:
        handle = index.open("rb")
    except FileNotFoundError:
        return None
    with handle:
        for line in handle:
            if not line.endswith(b"\n"):
                break
            if not line.strip():
                continue
            version = json.loads(line)
            if not isinstance(version, dict) or not isinstance(version.get("seq"), int):
                raise ValueError(f"the state journal {index} has a line that is no version: {line[:200]!r}")
            if version["seq"] <= seq:
                found = version
    return found


def _inside(relative: object) -> PurePosixPath:
    """A recorded path, refused when it would land outside the folder it is restored into."""
    if not isinstance(relative, str) or not relative or "\0" in relative:
        raise ValueError(f"the state journal names {relative!r}, which is no path")
    path = PurePosixPath(relative)
    if path.is_absolute() or ".." in path.parts or not path.parts:
        raise ValueError(f"the state journal names {relative!r}, which is outside the state folder")
    return path


def _folder_for(target: Path, relative: PurePosixPath) -> Path:
    """The folder ``relative`` goes into under ``target``, made as needed; refused if any folder on
    the way is a link (followed, it could lead anywhere)."""
    folder = target
    for part in relative.parts[:-1]:
        folder = folder / part
        if folder.is_symlink():
            raise ValueError(f"restoring {relative} would write through the link {folder}")
        folder.mkdir(exist_ok=True)
    return folder


def _place_file(stored: Path, destination: Path, executable: bool) -> None:
    """Copy an object to ``destination``, replacing whatever is there (a link is replaced, not
    followed); made with the umask's mode, executable if it was."""
    temporary = destination.with_name(f".restoring-{uuid.uuid4().hex}")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o777 if executable else 0o666)
    try:
        with os.fdopen(fd, "wb") as copy, stored.open("rb") as source:
            shutil.copyfileobj(source, copy, CHUNK)
        os.replace(temporary, destination)
    finally:
        temporary.unlink(missing_ok=True)


def _place_link(stored: Path, destination: Path) -> None:
    """Make ``destination`` a link to the target text an object holds, replacing whatever is there."""
    temporary = destination.with_name(f".restoring-{uuid.uuid4().hex}")
    os.symlink(os.fsdecode(stored.read_bytes()), temporary)
    try:
        os.replace(temporary, destination)
    finally:
        temporary.unlink(missing_ok=True)
