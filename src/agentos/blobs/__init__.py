"""Blob stores: where AgentOS keeps the files of uploaded runs (traces, world.json,
checks.json, agent logs), up to hundreds of MB each.

``open_blob_store(url)`` picks the store from a URL:

- ``None``: ``$AGENTOS_BLOB_URL``, else the folder ``blobs`` in ``agentos.db.data_dir()``;
- ``file:///absolute/folder``: files under that folder;
- ``s3://bucket/prefix``: objects on S3 or an S3-compatible server, at
  ``$AGENTOS_S3_ENDPOINT_URL`` (or boto3's ``AWS_ENDPOINT_URL_S3`` / ``AWS_ENDPOINT_URL``),
  with boto3's usual credentials.

Keys are relative '/'-separated names (``ws123/run-abc/orders-latency/1/trace.jsonl``); a
prefix names a folder, so ``delete_prefix("ws/run-1")`` leaves ``ws/run-10/...`` alone.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Protocol
from urllib.parse import unquote, urlsplit

from agentos.blobs.files import FileBlobStore
from agentos.blobs.keys import BlobMissing, check_key, check_prefix
from agentos.blobs.s3 import S3BlobStore
from agentos.db import data_dir

__all__ = ["BlobMissing", "BlobStore", "FileBlobStore", "S3BlobStore", "check_key", "check_prefix",
           "open_blob_store"]

URL_VARIABLE = "AGENTOS_BLOB_URL"
ACCEPTED = "file:///absolute/folder or s3://bucket/prefix"


class BlobStore(Protocol):
    """Named blobs of bytes. Every write is atomic: a reader sees the old blob or the whole new
    one. Keys that are not relative '/'-separated names raise ValueError."""

    def put(self, key: str, data: bytes) -> None:
        """Store ``data`` under ``key``, replacing any blob there."""

    def put_stream(self, key: str, chunks: Iterable[bytes]) -> int:
        """Store the chunks' bytes under ``key`` without holding them all in memory; the number
        of bytes written. If ``chunks`` raises, no blob (or the previous one) is left."""
        ...

    def get(self, key: str) -> bytes:
        """The blob's bytes; BlobMissing if there is none."""
        ...

    def open(self, key: str) -> Iterator[bytes]:
        """The blob's bytes in chunks; BlobMissing (raised by this call) if there is none."""
        ...

    def size(self, key: str) -> int | None:
        """The blob's length in bytes, or None if there is none."""
        ...

    def delete(self, key: str) -> None:
        """Delete the blob, if there is one."""

    def delete_prefix(self, prefix: str) -> int:
        """Delete every blob in the folder ``prefix`` (``ws/run-1`` or ``ws/run-1/``); how many."""
        ...

    def keys(self, prefix: str = "") -> Iterator[str]:
        """The keys in the folder ``prefix`` and its subfolders ('' for all), sorted."""
        ...

    def concat(self, key: str, parts: list[str]) -> None:
        """Write ``key`` as the parts' bytes in order (streamed), then delete the parts.
        BlobMissing, and nothing written, if a part is missing."""

    def describe(self) -> str:
        """Where the blobs are, for messages (no secrets)."""
        ...


def open_blob_store(url: str | None = None) -> BlobStore:
    """The store at ``url``, else at ``$AGENTOS_BLOB_URL``, else in the data folder."""
    url = url or os.environ.get(URL_VARIABLE) or None
    if url is None:
        return FileBlobStore(data_dir() / "blobs")
    parts = urlsplit(url)
    if parts.scheme == "file":
        path = unquote(parts.path)
        if parts.netloc not in ("", "localhost") or not path.startswith("/"):
            raise ValueError(f"blob store URL {url!r}: name an absolute folder, as file:///absolute/folder")
        return FileBlobStore(Path(path))
    if parts.scheme == "s3":
        if not parts.netloc:
            raise ValueError(f"blob store URL {url!r}: name the bucket, as s3://bucket/prefix")
        return S3BlobStore(parts.netloc, unquote(parts.path).strip("/"))
    raise ValueError(
        f"blob store URL {url!r}: use {ACCEPTED} (in {URL_VARIABLE} or given), "
        "or leave it unset for the folder 'blobs' in AgentOS's data folder"
    )
