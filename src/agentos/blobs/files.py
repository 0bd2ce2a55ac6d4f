"""The filesystem blob store: one file per blob under a root folder, keys as relative paths.

A blob is written to a file in the root's ``.partial`` folder and moved into place with
``os.replace``, so a reader sees the old blob or the whole new one, never part of it. Folders
left empty by a delete are removed, up to the root.
"""

from __future__ import annotations

import os
import stat
import uuid
from collections.abc import Iterable, Iterator
from itertools import chain
from pathlib import Path
from typing import BinaryIO

from agentos.blobs.keys import STAGING, BlobMissing, check_key, check_prefix

CHUNK = 1024 * 1024


class FileBlobStore:
    """Blobs as files under ``root`` (created on the first write)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def describe(self) -> str:
        return f"the folder {self.root}"

    def put(self, key: str, data: bytes) -> None:
        self.put_stream(key, [data])

    def put_stream(self, key: str, chunks: Iterable[bytes]) -> int:
        target = self._path(key)
        staging = self.root / STAGING
        staging.mkdir(parents=True, exist_ok=True)
        partial = staging / f"{uuid.uuid4().hex}.partial"
        written = 0
        try:
            with open(partial, "wb") as out:
                for chunk in chunks:
                    out.write(chunk)
                    written += len(chunk)
                out.flush()
                os.fsync(out.fileno())
            self._move_into_place(partial, target, key)
        except BaseException:
            partial.unlink(missing_ok=True)
            raise
        return written

    def get(self, key: str) -> bytes:
        with self._open(key) as blob:
            return blob.read()

    def open(self, key: str) -> Iterator[bytes]:
        # Opened now, so a missing blob raises here rather than at the first chunk.
        return _chunks(self._open(key))

    def size(self, key: str) -> int | None:
        try:
            found = self._path(key).stat()
        except (FileNotFoundError, NotADirectoryError):
            return None
        return found.st_size if stat.S_ISREG(found.st_mode) else None

    def delete(self, key: str) -> None:
        path = self._path(key)
        try:
            path.unlink()
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return
        self._prune(path.parent)

    def delete_prefix(self, prefix: str) -> int:
        folder = check_prefix(prefix)
        if not folder:
            raise ValueError("delete_prefix(''): name the folder to delete, such as 'ws/run-1'")
        deleted = 0
        for key in list(self.keys(folder)):
            try:
                (self.root / key).unlink()
            except FileNotFoundError:
                continue
            deleted += 1
        top = self.root / folder
        for here, _folders, _files in os.walk(top, topdown=False):
            try:
                os.rmdir(here)
            except OSError:
                pass  # something was written meanwhile: it stays
        self._prune(top.parent)
        return deleted

    def keys(self, prefix: str = "") -> Iterator[str]:
        folder = check_prefix(prefix)
        top = self.root / folder if folder else self.root
        return _walk(top, f"{folder}/" if folder else "", skip=STAGING if not folder else None)

    def concat(self, key: str, parts: list[str]) -> None:
        check_key(key)
        for part in parts:
            if self.size(part) is None:
                raise BlobMissing(part, self.describe())
        self.put_stream(key, chain.from_iterable(self.open(part) for part in parts))
        for part in parts:
            if part != key:
                self.delete(part)

    def _path(self, key: str) -> Path:
        return self.root / check_key(key)

    def _open(self, key: str) -> BinaryIO:
        try:
            return open(self._path(key), "rb")
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            raise BlobMissing(key, self.describe()) from None

    def _move_into_place(self, partial: Path, target: Path, key: str) -> None:
        # A delete may prune the target's (empty) folder between mkdir and replace: try again.
        for _ in range(5):
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                os.replace(partial, target)
                return
            except FileNotFoundError:
                continue
            except (NotADirectoryError, FileExistsError, IsADirectoryError):
                raise ValueError(
                    f"blob key {key!r}: a blob and a folder of blobs share a name on this path in "
                    f"{self.describe()}; a filesystem store holds one or the other"
                ) from None
        os.replace(partial, target)

    def _prune(self, folder: Path) -> None:
        """Remove empty folders from ``folder`` up to (not including) the root."""
        while folder != self.root and self.root in folder.parents:
            try:
                folder.rmdir()
            except OSError:
                return
            folder = folder.parent


def _chunks(blob: BinaryIO) -> Iterator[bytes]:
    with blob:
        while chunk := blob.read(CHUNK):
            yield chunk


def _walk(folder: Path, above: str, skip: str | None) -> Iterator[str]:
    """The keys under ``folder``, in the order S3 lists them: by the whole key, so a folder
    sorts as its name followed by '/'."""
    try:
        entries = list(os.scandir(folder))
    except (FileNotFoundError, NotADirectoryError):
        return
    for entry in sorted(entries, key=lambda entry: entry.name + "/" if entry.is_dir() else entry.name):
        if entry.is_dir():
            if entry.name != skip:
                yield from _walk(Path(entry.path), f"{above}{entry.name}/", None)
        elif entry.is_file():
            yield f"{above}{entry.name}"
