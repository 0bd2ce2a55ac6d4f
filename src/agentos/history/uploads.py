"""Uploading a finished Ancha run (``ancha push``, ``ancha run --upload``).

An upload is three steps, each safe to repeat, so a push that broke off is pushed again
and only what is missing travels:

1. ``begin``: the run's ``summary.json``, where it came from (commit, branch, CI job) and a
   manifest of its files (path, size, SHA-256). The answer lists the files not stored yet.
   The workspace's quota is checked here, before any byte is sent.
2. The files: small ones in tar batches (``store_tar``), large ones in chunks appended at
   an offset (``append_chunk``), as many requests as it takes. Each file must match its
   manifest entry, or it is refused and not kept.
3. ``complete``: every file is there; the run's scenes go into the history tables and the
   run shows in the hosted console.

Pushing a run id that is already complete answers the stored run (idempotent); the same id
with other files is a conflict. Blobs live under ``WORKSPACE/RUN_PK/`` in the blob store, so
a run id guessed from another workspace names nothing.
"""

from __future__ import annotations

import hashlib
import os
import re
import tarfile
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import IO, Any

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from agentos.blobs import BlobMissing, BlobStore
from agentos.errors import BadRequest, Conflict, NotFound, OverQuota, Unprocessable
from agentos.ids import new_id
from agentos.keys import Caller
from agentos.models import AnchaRun, AnchaSceneResult, Workspace
from agentos.timestamps import utcnow

SUMMARY = "summary.json"
SCENE_SOURCES = "_scenes"
"""Manifest paths under it are the scenes' source files (``_scenes/SCENE/scene.yaml``);
no scene name starts with ``_``, so they never meet a trial's files."""
MAX_FILES = 200_000
MAX_PATH = 1000
CHUNK_PARTS = ".parts"
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$")
QUOTA_ENV = "AGENTOS_WORKSPACE_QUOTA_BYTES"
PARALLEL_WRITES = 8
"""A batch's files written at once (8: more gained little on disk, and boto3 pools 10 connections)."""
SMALL_FILE = 1024 * 1024
"""A batch's files up to this size are read whole and written in parallel; larger ones are streamed."""


@dataclass(frozen=True)
class FileEntry:
    path: str
    size: int
    sha256: str


@dataclass(frozen=True)
class Source:
    """Where a run came from, as the uploader's CI said."""

    commit: str | None = None
    branch: str | None = None
    ci_provider: str | None = None
    ci_url: str | None = None
    agent_version: str | None = None


# --- checking what is sent -----------------------------------------------------------------


def check_run_id(run_id: str) -> str:
    if not _RUN_ID.match(run_id):
        raise BadRequest(f"Invalid run id {run_id[:80]!r}: an Ancha run id is letters, digits, '.', '_' and '-'"
                         " (up to 200), as `ancha run` names its folders")
    return run_id


def check_path(path: str, where: str = "path") -> str:
    """A file's place in the run folder: relative, '/'-separated, nothing that climbs out."""
    problem = None
    if not isinstance(path, str) or not path:
        problem = "is empty"
    elif len(path) > MAX_PATH:
        problem = f"is longer than {MAX_PATH} characters"
    elif path.startswith("/") or "\\" in path or "\0" in path:
        problem = "must be relative, with '/' between folders and no NUL"
    elif any(part in ("", ".", "..") for part in path.split("/")):
        problem = "has an empty, '.' or '..' part"
    elif path.split("/")[-1] == "" or path.split("/")[0] == CHUNK_PARTS:
        problem = "names no file"
    if problem:
        raise Unprocessable(f"Invalid manifest: {where} {str(path)[:120]!r} {problem}")
    return path


def parse_manifest(files: Any) -> list[FileEntry]:
    if not isinstance(files, list) or not files:
        raise Unprocessable("Invalid manifest: files must be a non-empty list of {path, size, sha256}")
    if len(files) > MAX_FILES:
        raise Unprocessable(f"Invalid manifest: {len(files)} files, more than the {MAX_FILES} a run may have")
    entries: list[FileEntry] = []
    seen: set[str] = set()
    for index, item in enumerate(files):
        where = f"files[{index}]"
        if not isinstance(item, dict) or set(item) != {"path", "size", "sha256"}:
            raise Unprocessable(f"Invalid manifest: {where} must be an object with exactly path, size and sha256")
        path = check_path(item["path"], f"{where}.path")
        size, digest = item["size"], item["sha256"]
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            raise Unprocessable(f"Invalid manifest: {where}.size must be a whole number of bytes, 0 or more")
        if not isinstance(digest, str) or not _SHA256.match(digest):
            raise Unprocessable(f"Invalid manifest: {where}.sha256 must be 64 lowercase hex digits")
        if path in seen:
            raise Unprocessable(f"Invalid manifest: {path!r} is listed twice")
        seen.add(path)
        entries.append(FileEntry(path, size, digest))
    if SUMMARY not in seen:
        raise Unprocessable(f"Invalid manifest: a run's files include {SUMMARY}")
    return entries


def _started_at(summary: dict[str, Any]) -> datetime:
    text = summary.get("started_at")
    try:
        moment = datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        raise Unprocessable(f"Invalid summary: started_at {str(text)[:60]!r} is not an ISO 8601 time") from None
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC).replace(tzinfo=None)
    return moment


def _scene_rows(summary: dict[str, Any]) -> list[dict[str, Any]]:
    scenes = summary.get("scenes")
    if not isinstance(scenes, list):
        raise Unprocessable("Invalid summary: scenes must be the list `ancha run` writes")
    rows = []
    for index, scene in enumerate(scenes):
        if not isinstance(scene, dict) or not isinstance(scene.get("scene"), str):
            raise Unprocessable(f"Invalid summary: scenes[{index}] has no scene name")
        verdicts = [t.get("verdict") for t in scene.get("trial_results") or [] if isinstance(t, dict)]
        outcomes = "".join("P" if v == "passed" else "F" for v in verdicts if v in ("passed", "failed"))
        rows.append({
            "scene": scene["scene"][:100],
            "trials": _count(scene.get("ran", scene.get("trials"))),
            "passed": _count(scene.get("passed")),
            "failed": _count(scene.get("failed")),
            "invalid": _count(scene.get("invalid")),
            "pass_rate": _rate(scene.get("pass_rate")),
            "min_pass_rate": _rate(scene.get("min_pass_rate")),
            "gate_met": scene.get("gate_met") is True,
            "outcomes": outcomes[:2000],
            "source_hash": scene.get("source_hash") if isinstance(scene.get("source_hash"), str) else None,
        })
    return rows


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _rate(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


# --- the three steps -----------------------------------------------------------------------


def blob_key(run: AnchaRun, path: str) -> str:
    return f"{run.workspace_id}/{run.id}/{path}"


def run_prefix(run: AnchaRun) -> str:
    return f"{run.workspace_id}/{run.id}"


def find_run(session: Session, workspace_id: str, run_id: str) -> AnchaRun:
    run = session.scalar(select(AnchaRun).where(AnchaRun.workspace_id == workspace_id, AnchaRun.run_id == run_id))
    if run is None:
        raise NotFound(f"Run '{run_id[:200]}' not found in this workspace")
    return run


def quota_of(workspace: Workspace) -> int | None:
    if workspace.quota_bytes is not None:
        return workspace.quota_bytes
    text = os.environ.get(QUOTA_ENV, "").strip()
    return int(text) if text.isdigit() else None


def begin(session: Session, caller: Caller, run_id: str, summary: Any, files: Any, source: Source,
          blobs: BlobStore) -> tuple[AnchaRun, list[str], bool]:
    """Record (or find) the upload; returns the run, the paths still to send, and whether it is new."""
    check_run_id(run_id)
    if not isinstance(summary, dict):
        raise Unprocessable("Invalid upload: summary must be the run's summary.json object")
    if summary.get("run_id") != run_id:
        raise Unprocessable(f"Invalid upload: summary.json is of run {str(summary.get('run_id'))[:80]!r},"
                            f" not {run_id!r}")
    entries = parse_manifest(files)
    started_at = _started_at(summary)
    scenes = _scene_rows(summary)
    manifest = [{"path": e.path, "size": e.size, "sha256": e.sha256} for e in entries]
    total = sum(e.size for e in entries)
    existing = session.scalar(select(AnchaRun).where(AnchaRun.workspace_id == caller.workspace_id,
                                                     AnchaRun.run_id == run_id))
    if existing is not None:
        if _same_files(existing.manifest, manifest):
            missing = [] if existing.status == "complete" else missing_files(existing, blobs)
            return existing, missing, False
        if existing.status == "complete":
            raise Conflict(f"Run '{run_id}' is already uploaded with other files: a run id names one run;"
                           " delete it first (an admin key) to upload it again")
    workspace = session.get(Workspace, caller.workspace_id)
    assert workspace is not None  # the key resolved to it
    quota = quota_of(workspace)
    if quota is not None:
        used = session.scalar(select(func.coalesce(func.sum(AnchaRun.bytes), 0))
                              .where(AnchaRun.workspace_id == caller.workspace_id, AnchaRun.run_id != run_id))
        if int(used or 0) + total > quota:
            raise OverQuota(f"Upload refused: run '{run_id}' is {total:,} bytes, and the workspace keeps"
                            f" {int(used or 0):,} of its {quota:,}-byte quota; delete old runs"
                            " (`DELETE /api/ancha/runs/RUN` with an admin key) or ask for a larger quota")
    now = utcnow()
    run = existing or AnchaRun(id=new_id(), workspace_id=caller.workspace_id, run_id=run_id, uploaded_at=now)
    run.status = "uploading"
    run.started_at = started_at
    run.commit = (source.commit or None) and source.commit[:64]
    run.branch = (source.branch or None) and source.branch[:255]
    run.ci_provider = (source.ci_provider or None) and source.ci_provider[:20]
    run.ci_url = source.ci_url or None
    run.agent_version = (source.agent_version or None) and source.agent_version[:200]
    exit_code = summary.get("exit_code")
    run.exit_code = exit_code if isinstance(exit_code, int) and not isinstance(exit_code, bool) else None
    run.scenes = len(scenes)
    run.trials = sum(s["trials"] for s in scenes)
    run.passed = sum(s["passed"] for s in scenes)
    run.gate_met = bool(scenes) and all(s["gate_met"] for s in scenes)
    run.bytes = total
    run.manifest = manifest
    run.summary = summary
    run.uploaded_by = caller.key_id
    if existing is None:
        session.add(run)
    session.flush()
    return run, missing_files(run, blobs), existing is None


def _same_files(a: list[Any], b: list[Any]) -> bool:
    return sorted((f["path"], f["size"], f["sha256"]) for f in a) == sorted((f["path"], f["size"], f["sha256"]) for f in b)


def entry_of(run: AnchaRun, path: str) -> FileEntry:
    index: dict[str, FileEntry] | None = getattr(run, "_manifest_index", None)
    if index is None:
        index = {item["path"]: FileEntry(item["path"], item["size"], item["sha256"]) for item in run.manifest}
        run._manifest_index = index  # type: ignore[attr-defined]
    if path in index:
        return index[path]
    raise Unprocessable(f"File {path[:200]!r} is not in run '{run.run_id}''s manifest: send it with the manifest first")


def missing_files(run: AnchaRun, blobs: BlobStore) -> list[str]:
    """The manifest's files not stored yet (a stored blob was checked when it was written)."""
    stored = {key.removeprefix(run_prefix(run) + "/") for key in blobs.keys(run_prefix(run))}
    return [item["path"] for item in run.manifest if item["path"] not in stored]


def _writable(run: AnchaRun) -> None:
    if run.status == "complete":
        raise Conflict(f"Run '{run.run_id}' is complete: its files cannot change")


def store_file(run: AnchaRun, path: str, chunks: Iterable[bytes], blobs: BlobStore) -> None:
    """One whole file; it must match its manifest entry."""
    _writable(run)
    entry = entry_of(run, check_path(path))
    key = blob_key(run, entry.path)
    digest = hashlib.sha256()
    size = 0

    def hashed() -> Iterator[bytes]:
        nonlocal size
        for chunk in chunks:
            digest.update(chunk)
            size += len(chunk)
            if size > entry.size:
                raise Unprocessable(f"File {entry.path!r} is larger than the {entry.size} bytes its manifest says")
            yield chunk

    blobs.put_stream(key, hashed())
    if size != entry.size or digest.hexdigest() != entry.sha256:
        blobs.delete(key)
        raise Unprocessable(f"File {entry.path!r} does not match its manifest entry ({size} bytes, sha256"
                            f" {digest.hexdigest()[:12]}…; the manifest says {entry.size} bytes, {entry.sha256[:12]}…):"
                            " it was not kept")


def store_tar(run: AnchaRun, archive: IO[bytes], blobs: BlobStore) -> list[str]:
    """Files in a tar (uncompressed or gzip), each checked against the manifest; returns their paths.

    The tar is read in order, and its small files are written ``PARALLEL_WRITES`` at a time:
    the filesystem store syncs each file to disk, ~3 ms apiece one after the other (2.6 s of a
    100-trial run's 755 files), while syncs that wait together share the journal's flushes
    (~0.15 s for the 755); S3's PUTs overlap likewise. Every file read is checked and written (or
    refused), and a failure is raised once all have ended; a member that is not a regular file
    of the manifest stops the reading there."""
    _writable(run)
    stored: list[str] = []
    writes: list[Future[None]] = []
    with ThreadPoolExecutor(PARALLEL_WRITES, thread_name_prefix="agentos-blob-write") as pool:
        try:
            with tarfile.open(fileobj=archive, mode="r:*") as tar:
                for member in tar:
                    if member.isdir():
                        continue
                    if not member.isfile():
                        raise Unprocessable(f"Invalid batch: {member.name[:120]!r} is not a regular file")
                    path = check_path(member.name, "tar member")
                    entry_of(run, path)  # a file not in the manifest is refused before it is read
                    handle = tar.extractfile(member)
                    assert handle is not None  # a regular file
                    if member.size <= SMALL_FILE:
                        writes.append(pool.submit(store_file, run, path, [handle.read()], blobs))
                        if len(writes) > 2 * PARALLEL_WRITES:  # at most this many files held in memory
                            writes[-2 * PARALLEL_WRITES - 1].exception()  # waits; raised below, in order
                    else:
                        store_file(run, path, read_chunks(handle), blobs)
                    stored.append(path)
        except tarfile.TarError as exc:
            raise BadRequest(f"Invalid batch: the body is not a tar archive ({exc})") from None
    # Leaving the pool waited for every write.
    for write in writes:
        write.result()
    return stored


def read_chunks(handle: IO[bytes]) -> Iterator[bytes]:
    """A file's bytes in 1 MiB chunks, never all at once."""
    while chunk := handle.read(1 << 20):
        yield chunk


def _parts_prefix(run: AnchaRun, path: str) -> str:
    return f"{run.workspace_id}/{run.id}/{CHUNK_PARTS}/{hashlib.sha256(path.encode()).hexdigest()}"


def upload_offset(run: AnchaRun, path: str, blobs: BlobStore) -> int:
    """How many bytes of a chunked file are stored: its size once whole."""
    entry = entry_of(run, check_path(path))
    if blobs.size(blob_key(run, entry.path)) is not None:
        return entry.size
    return sum(blobs.size(key) or 0 for key in blobs.keys(_parts_prefix(run, entry.path)))


def append_chunk(run: AnchaRun, path: str, offset: int, data: bytes, blobs: BlobStore) -> int:
    """Append a chunk at ``offset`` (which must be what is stored so far); returns the new
    offset. The last chunk assembles the file and checks it against the manifest."""
    _writable(run)
    entry = entry_of(run, check_path(path))
    stored = upload_offset(run, entry.path, blobs)
    if offset != stored:
        raise Conflict(f"Upload-Offset {offset} is not where {entry.path!r} stands: {stored} bytes are stored;"
                       " resume from there (HEAD the file for its Upload-Offset)")
    if stored == entry.size and blobs.size(blob_key(run, entry.path)) is not None:
        return stored
    if offset + len(data) > entry.size:
        raise Unprocessable(f"The chunk runs past the {entry.size} bytes {entry.path!r} has in its manifest")
    prefix = _parts_prefix(run, entry.path)
    if data:
        blobs.put(f"{prefix}/{offset:016d}", data)
    end = offset + len(data)
    if end == entry.size:
        parts = sorted(blobs.keys(prefix))
        key = blob_key(run, entry.path)
        blobs.concat(key, parts)
        digest = hashlib.sha256()
        for chunk in blobs.open(key):
            digest.update(chunk)
        if digest.hexdigest() != entry.sha256:
            blobs.delete(key)
            raise Unprocessable(f"File {entry.path!r} does not match its manifest's sha256 once assembled:"
                                " it was not kept; upload it again from offset 0")
    return end


def complete(session: Session, run: AnchaRun, blobs: BlobStore) -> AnchaRun:
    """Every file is stored: the run and its scenes join the history."""
    if run.status == "complete":
        return run
    missing = missing_files(run, blobs)
    if missing:
        shown = ", ".join(missing[:10]) + (f" and {len(missing) - 10} more" if len(missing) > 10 else "")
        raise Conflict(f"Run '{run.run_id}' is missing {len(missing)} file(s): {shown}; send them, then complete")
    session.execute(delete(AnchaSceneResult).where(AnchaSceneResult.run_pk == run.id))
    for row in _scene_rows(run.summary):
        session.add(AnchaSceneResult(run_pk=run.id, workspace_id=run.workspace_id, run_id=run.run_id,
                                     started_at=run.started_at, commit=run.commit, branch=run.branch, **row))
    run.status = "complete"
    run.completed_at = utcnow()
    return run


def read_file(run: AnchaRun, path: str, blobs: BlobStore) -> Iterator[bytes]:
    entry = entry_of(run, check_path(path))
    try:
        return blobs.open(blob_key(run, entry.path))
    except BlobMissing:
        raise NotFound(f"File {path[:200]!r} of run '{run.run_id}' is not stored") from None
