"""The S3 blob store: blobs as objects under ``s3://bucket/prefix``, on AWS or any
S3-compatible server (MinIO, Ceph, R2, moto ...).

boto3 is imported when a store is made, so that a filesystem user never loads it. The endpoint
is ``AGENTOS_S3_ENDPOINT_URL`` if set, else whatever boto3 reads itself (``AWS_ENDPOINT_URL_S3``,
``AWS_ENDPOINT_URL``, the profile); credentials come from boto3's usual chain.

A streamed blob goes up as a multipart upload of 8 MiB parts, one part in memory at a time,
and appears only when the upload completes; an upload that fails is aborted.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator
from itertools import chain
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from agentos.blobs.keys import BlobMissing, check_key, check_prefix

CHUNK = 1024 * 1024
# S3's smallest part but the last is 5 MiB; 8 MiB is boto3's own default.
PART = 8 * 1024 * 1024
# delete_objects takes at most 1,000 keys a call.
DELETE_BATCH = 1000
ENDPOINT_VARIABLE = "AGENTOS_S3_ENDPOINT_URL"


class S3BlobStore:
    """Blobs as the objects under ``prefix`` in ``bucket``."""

    def __init__(self, bucket: str, prefix: str = "", client: Any = None, endpoint_url: str | None = None) -> None:
        self.bucket = bucket
        self.prefix = check_prefix(prefix)
        if client is None:
            import boto3  # here, not at the top: only S3 users pay for it

            endpoint_url = endpoint_url or os.environ.get(ENDPOINT_VARIABLE) or None
            client = boto3.client("s3", endpoint_url=endpoint_url)
        self._client = client
        self._errors = client.exceptions

    def describe(self) -> str:
        where = f"s3://{self.bucket}/{self.prefix}" if self.prefix else f"s3://{self.bucket}"
        endpoint = _without_credentials(getattr(self._client.meta, "endpoint_url", "") or "")
        return f"{where} (at {endpoint})" if endpoint else where

    def put(self, key: str, data: bytes) -> None:
        self._client.put_object(Bucket=self.bucket, Key=self._name(key), Body=data)

    def put_stream(self, key: str, chunks: Iterable[bytes]) -> int:
        name = self._name(key)
        parts = _parts(chunks)
        first = next(parts, b"")
        second = next(parts, None)
        if second is None:
            self._client.put_object(Bucket=self.bucket, Key=name, Body=first)
            return len(first)
        upload = self._client.create_multipart_upload(Bucket=self.bucket, Key=name)["UploadId"]
        try:
            done = []
            written = 0
            for number, part in enumerate(chain([first, second], parts), start=1):
                answer = self._client.upload_part(
                    Bucket=self.bucket, Key=name, UploadId=upload, PartNumber=number, Body=part
                )
                done.append({"PartNumber": number, "ETag": answer["ETag"]})
                written += len(part)
            self._client.complete_multipart_upload(
                Bucket=self.bucket, Key=name, UploadId=upload, MultipartUpload={"Parts": done}
            )
        except BaseException:
            # The upload's own failure is the one to report; parts an abort leaves behind are
            # what a bucket's AbortIncompleteMultipartUpload lifecycle rule is for.
            with contextlib.suppress(Exception):
                self._client.abort_multipart_upload(Bucket=self.bucket, Key=name, UploadId=upload)
            raise
        return written

    def get(self, key: str) -> bytes:
        body = self._get(key)
        try:
            data: bytes = body.read()
        finally:
            body.close()
        return data

    def open(self, key: str) -> Iterator[bytes]:
        # Requested now, so a missing blob raises here rather than at the first chunk.
        return _chunks(self._get(key))

    def size(self, key: str) -> int | None:
        try:
            head = self._client.head_object(Bucket=self.bucket, Key=self._name(key))
        except self._errors.ClientError as error:
            if _is_absent(error):
                return None
            raise
        return int(head["ContentLength"])

    def delete(self, key: str) -> None:
        self._client.delete_object(Bucket=self.bucket, Key=self._name(key))

    def delete_prefix(self, prefix: str) -> int:
        folder = check_prefix(prefix)
        if not folder:
            raise ValueError("delete_prefix(''): name the folder to delete, such as 'ws/run-1'")
        deleted = 0
        batch: list[str] = []
        for name in self._names(folder):
            batch.append(name)
            if len(batch) == DELETE_BATCH:
                deleted += self._delete_batch(batch)
                batch = []
        if batch:
            deleted += self._delete_batch(batch)
        return deleted

    def keys(self, prefix: str = "") -> Iterator[str]:
        folder = check_prefix(prefix)
        above = f"{self.prefix}/" if self.prefix else ""
        return (name.removeprefix(above) for name in self._names(folder))

    def concat(self, key: str, parts: list[str]) -> None:
        check_key(key)
        for part in parts:
            if self.size(part) is None:
                raise BlobMissing(part, self.describe())
        self.put_stream(key, chain.from_iterable(self.open(part) for part in parts))
        for part in parts:
            if part != key:
                self.delete(part)

    def _name(self, key: str) -> str:
        check_key(key)
        return f"{self.prefix}/{key}" if self.prefix else key

    def _names(self, folder: str) -> Iterator[str]:
        """The object names under a folder of this store, in S3's (sorted) order."""
        inside = "/".join(part for part in (self.prefix, folder) if part)
        pages = self._client.get_paginator("list_objects_v2").paginate(
            Bucket=self.bucket, Prefix=f"{inside}/" if inside else ""
        )
        for page in pages:
            for item in page.get("Contents", []):
                yield item["Key"]

    def _get(self, key: str) -> Any:
        try:
            return self._client.get_object(Bucket=self.bucket, Key=self._name(key))["Body"]
        except self._errors.ClientError as error:
            if _is_absent(error):
                raise BlobMissing(key, self.describe()) from None
            raise

    def _delete_batch(self, names: list[str]) -> int:
        answer = self._client.delete_objects(
            Bucket=self.bucket, Delete={"Objects": [{"Key": name} for name in names], "Quiet": True}
        )
        errors = answer.get("Errors") or []
        if errors:
            first = errors[0]
            raise OSError(
                f"{self.describe()} refused to delete {len(errors)} of {len(names)} blobs, "
                f"{first.get('Key')!r} first: {first.get('Code')} {first.get('Message')}"
            )
        return len(names)


def _parts(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """The chunks regrouped into parts of PART bytes (the last may be smaller)."""
    buffer = bytearray()
    for chunk in chunks:
        buffer += chunk
        while len(buffer) >= PART:
            yield bytes(buffer[:PART])
            del buffer[:PART]
    if buffer:
        yield bytes(buffer)


def _chunks(body: Any) -> Iterator[bytes]:
    try:
        yield from body.iter_chunks(CHUNK)
    finally:
        body.close()


def _is_absent(error: Any) -> bool:
    code = str(error.response.get("Error", {}).get("Code", ""))
    return code in {"404", "NoSuchKey", "NotFound"}


def _without_credentials(url: str) -> str:
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit(parts._replace(netloc=netloc))
