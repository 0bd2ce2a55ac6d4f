"""Reading the files a scene names, safely: the one place that opens them.

A scene names files beside it (a tool's long message history, a repository's folder of
files, a log file, ...). Each name must stay inside the scene's folder once symlinks are
followed, must be a regular file (or a folder, for ``files_dir``) and must fit a size
cap, so a scene can neither read ``/etc/shadow`` or ``/proc/self/environ`` into
``world.json``, nor hang on a FIFO, nor fill memory from ``/dev/zero``. Files are opened
with ``O_NONBLOCK`` (a FIFO never blocks the open) and ``O_NOFOLLOW`` (a link swapped in
after the check is not followed), and checked with ``fstat`` on the open descriptor.

JSON lines are parsed with a depth cap, so a line nested 10,000 deep is a problem on
that line, never a ``RecursionError``. Lines that are plain objects, the common line of a
long seed, are parsed a thousand at a time (one by one if one of them is bad); any other
line on its own.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

MAX_FILE_BYTES = 256 * 2**20
"""A file a scene names (a JSONL seed such as ``messages_file``): at most 256 MiB."""
MAX_SCENE_BYTES = 16 * 2**20
"""A scene.yaml itself: at most 16 MiB (long seeds belong in a JSONL file beside it)."""
MAX_FOLDER_FILES = 5_000
"""Files in a folder a scene names (``files_dir``)."""
MAX_JSON_DEPTH = 32
"""Nesting of lists and objects in one JSON line."""


class SceneFileRefused(ValueError):
    """A file a scene names cannot be read: ``message`` says why, ``hint`` what to do."""

    def __init__(self, message: str, hint: str, *, missing: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.missing = missing
        """Nothing is there (as opposed to something that may not be read)."""


def read_regular_file(path: Path, limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of ``path`` if it is a regular file of at most ``limit`` bytes."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise SceneFileRefused(f"no such file: {path}", "paths are relative to the scene's folder",
                               missing=True) from None
    except OSError as exc:
        raise SceneFileRefused(f"cannot read {path}: {exc.strerror}", "name a regular file in the scene's folder") \
            from None
    with os.fdopen(fd, "rb") as file:
        info = os.fstat(file.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise SceneFileRefused(f"{path} is not a regular file", "name a regular file in the scene's folder")
        if info.st_size > limit:
            raise SceneFileRefused(f"{path} is larger than {_size(limit)}", f"keep it under {_size(limit)}")
        data = file.read(limit + 1)
    if len(data) > limit:  # grew while read
        raise SceneFileRefused(f"{path} is larger than {_size(limit)}", f"keep it under {_size(limit)}")
    return data


@dataclass(frozen=True, slots=True)
class SceneFolder:
    """A scene's folder: resolves the names a scene writes to paths that stay inside it."""

    root: Path

    def __post_init__(self) -> None:
        object.__setattr__(self, "root", self.root.resolve())

    def path(self, name: str) -> Path:
        """``name`` resolved (symlinks followed); refused unless it is relative and stays inside."""
        if not isinstance(name, str) or not name or "\0" in name:
            raise SceneFileRefused(f"expected a file name, got {name!r}", "name a file in the scene's folder")
        if PurePosixPath(name).is_absolute() or Path(name).is_absolute():
            raise SceneFileRefused(f"{name} is an absolute path",
                                   "name a file in the scene's folder, relative to it, such as messages.jsonl")
        resolved = (self.root / name).resolve()
        if not resolved.is_relative_to(self.root):
            raise SceneFileRefused(f"{name} is outside the scene's folder {self.root}",
                                   "put the file in the scene's folder (a symlink must point inside it too)")
        return resolved

    def read(self, name: str, limit: int = MAX_FILE_BYTES) -> bytes:
        """The bytes of the regular file ``name`` inside the folder, at most ``limit``."""
        return read_regular_file(self.path(name), limit)

    def read_tree(self, name: str, limit: int, max_files: int = MAX_FOLDER_FILES) -> dict[str, tuple[bytes, int]]:
        """Every regular file under the folder ``name`` (``.git`` skipped), by its POSIX path
        there: its bytes and mode. Links that lead outside, and anything but regular files,
        are refused; so are more than ``max_files`` files or ``limit`` bytes in all."""
        folder = self.path(name)
        if not folder.is_dir():
            raise SceneFileRefused(f"no such folder: {folder}", "files_dir is relative to the scene's folder")
        found: dict[str, tuple[bytes, int]] = {}
        total = 0
        for dirpath, dirnames, filenames in os.walk(folder):  # never descends into linked folders
            dirnames[:] = sorted(d for d in dirnames if d != ".git" and not (Path(dirpath) / d).is_symlink())
            for filename in sorted(filenames):
                full = Path(dirpath) / filename
                rel = full.relative_to(folder).as_posix()
                target = self.path(str(full.relative_to(self.root)))
                if len(found) >= max_files:
                    raise SceneFileRefused(f"{folder} holds more than {max_files:,} files", "seed a smaller folder")
                data = read_regular_file(target, limit)
                total += len(data)
                if total > limit:
                    raise SceneFileRefused(f"{folder} holds more than {_size(limit)}", "seed a smaller folder")
                found[rel] = (data, os.stat(target).st_mode)
        return found


def json_lines(data: bytes) -> Iterator[tuple[int, Any]]:
    """(line number, value) of each non-blank line; the value is a ``SceneFileRefused``
    when the line is not JSON or nests deeper than ``MAX_JSON_DEPTH``."""
    lines = data.decode("utf-8", errors="replace").splitlines()
    for first in range(0, len(lines), _CHUNK):
        yield from _json_chunk(lines[first:first + _CHUNK], first + 1)


_CHUNK = 1_000
"""Lines parsed together: enough to be fast, few enough to hold little at once."""
_FLAT_OBJECT = re.compile(r"\{[^{}\[\]]*\}")
"""A line that is one object holding no list or object (no bracket inside, not even in a
string, so it is one deep): the common line of a long seed, parsed with the others like it."""


def _json_chunk(lines: list[str], first: int) -> Iterator[tuple[int, Any]]:
    """``json_lines`` of ``lines``, the first of which is line ``first``."""
    flat = _flat(lines)
    values = iter(_flat_objects([raw for raw, is_flat in zip(lines, flat, strict=True) if is_flat]))
    for number, (raw, is_flat) in enumerate(zip(lines, flat, strict=True), start=first):
        if is_flat:
            yield number, next(values)
        elif raw.strip():
            yield number, _json_line(raw)


def _flat(lines: list[str]) -> list[bool]:
    """Whether each line matches ``_FLAT_OBJECT``. When all do, counts over the whole chunk
    show it, far faster than a match a line: as many ``{`` and as many ``}`` as lines, each
    line starting with ``{`` and ending with ``}`` (no line holds the ``\\n`` joining them),
    and no ``[`` or ``]``."""
    joined = "\n".join(lines)
    count = len(lines)
    if joined.count("{") == joined.count("}") == joined.count("\n{") + 1 == joined.count("}\n") + 1 == count \
            and joined[0] == "{" and joined[-1] == "}" and "[" not in joined and "]" not in joined:
        return [True] * count
    return [_FLAT_OBJECT.fullmatch(raw) is not None for raw in lines]


def _flat_objects(lines: list[str]) -> list[Any]:
    """``lines`` (each matching ``_FLAT_OBJECT``) parsed in one call, much faster than one
    call each. A string cannot span the ``\\n`` that joins them (JSON refuses a raw control
    character in one), so each line's only ``{`` opens an object that its only ``}`` closes:
    the joined array holds exactly the lines' objects, and parses only if each line does.
    If it does not, each line is parsed alone, so each bad one is reported on its line."""
    try:
        values: list[Any] = json.loads("[" + ",\n".join(lines) + "]")
    except ValueError:
        return [_json_line(raw) for raw in lines]
    return values


def _json_line(raw: str) -> Any:
    try:
        value = json.loads(raw)
    except RecursionError:
        return _too_deep()
    except ValueError as exc:
        return SceneFileRefused(f"not valid JSON: {getattr(exc, 'msg', exc)}", "write one JSON object per line")
    if raw.count("[") + raw.count("{") > MAX_JSON_DEPTH and _depth(value) > MAX_JSON_DEPTH:
        return _too_deep()
    return value


def _too_deep() -> SceneFileRefused:
    return SceneFileRefused(f"nested more than {MAX_JSON_DEPTH} deep", "flatten the line's lists and objects")


def _depth(value: Any) -> int:
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, depth)
            if deepest > MAX_JSON_DEPTH:
                return deepest
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def _size(limit: int) -> str:
    return f"{limit // 2**20} MiB" if limit >= 2**20 else f"{limit:,} bytes"
