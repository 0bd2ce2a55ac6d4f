"""Blob keys and folders: the names every blob store accepts, and what a missing blob raises.

A key is a relative, '/'-separated name such as ``ws123/run-abc/orders-latency/1/trace.jsonl``.
Each store checks keys the same way, so a key that works on the filesystem works on S3 too,
and no key can reach outside the store's folder.

A prefix names a *folder*: ``ws/run-1`` (or ``ws/run-1/``) holds ``ws/run-1/trace.jsonl`` but
not ``ws/run-10/trace.jsonl``. The empty prefix is the whole store.
"""

from __future__ import annotations

# The filesystem store writes blobs here before moving them into place; no key may live in it.
STAGING = ".partial"


class BlobMissing(KeyError):
    """No blob under this key."""

    def __init__(self, key: str, where: str) -> None:
        super().__init__(key)
        self.key = key
        self.where = where

    def __str__(self) -> str:
        # KeyError's own str() is the repr of its argument; this one reads as a sentence.
        return f"no blob {self.key!r} in {self.where}"


def check_key(key: str) -> str:
    """The key, if a store accepts it; else ValueError saying why."""
    if not isinstance(key, str) or not key:
        raise ValueError(f"blob key {key!r}: give a relative name such as 'ws/run-1/trace.jsonl'")
    _check_segments(key, "blob key")
    return key


def check_prefix(prefix: str) -> str:
    """The folder a prefix names, without a trailing '/' ('' for the whole store); else ValueError."""
    if not isinstance(prefix, str):
        raise ValueError(f"blob folder {prefix!r}: give a relative name such as 'ws/run-1'")
    folder = prefix.removesuffix("/")
    if folder:
        _check_segments(folder, "blob folder")
    elif prefix:
        raise ValueError("blob folder '/': give a relative name such as 'ws/run-1', or '' for every blob")
    return folder


def _check_segments(name: str, what: str) -> None:
    hint = "use a relative, '/'-separated name such as 'ws/run-1/trace.jsonl'"
    if "\x00" in name:
        raise ValueError(f"{what} {name!r} holds a NUL character: {hint}")
    if "\\" in name:
        raise ValueError(f"{what} {name!r} holds a backslash: {hint}")
    if name.startswith("/"):
        raise ValueError(f"{what} {name!r} starts with '/': {hint}")
    segments = name.split("/")
    if "" in segments:
        raise ValueError(f"{what} {name!r} has an empty segment ('//' or a trailing '/'): {hint}")
    if "." in segments or ".." in segments:
        raise ValueError(f"{what} {name!r} has a '.' or '..' segment: {hint}")
    if segments[0] == STAGING:
        raise ValueError(f"{what} {name!r}: the top-level folder {STAGING!r} is the store's own; {hint}")
