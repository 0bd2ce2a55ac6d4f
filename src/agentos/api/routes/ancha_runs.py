"""Uploaded Ancha runs: the upload's three steps, reading runs and their files, deleting one.

    PUT  /api/ancha/runs/{run}                    summary, source and manifest; answers what is missing
    POST /api/ancha/runs/{run}/files              a tar of files (application/x-tar, gzip allowed)
    PUT  /api/ancha/runs/{run}/files/{path}       one file whole, or a chunk at `Upload-Offset`
    HEAD /api/ancha/runs/{run}/files/{path}       `Upload-Offset`: how much of it is stored
    POST /api/ancha/runs/{run}/complete           every file is there: the run joins the history
    GET  /api/ancha/runs?branch=&commit=&scene=&limit=&before=
    GET  /api/ancha/runs/{run}  ·  GET …/files/{path}  ·  DELETE /api/ancha/runs/{run} (admin)

Writing needs a `ci` or `admin` key, deleting an `admin` key; any key of the workspace reads.
"""

from __future__ import annotations

import tempfile
from typing import IO

from fastapi import APIRouter, Depends, Query, Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response, StreamingResponse

from agentos.api.bodies import AnchaRunPut
from agentos.api.services import Services, caller, require, respond, services
from agentos.errors import BadRequest, TooLarge
from agentos.history import queries, uploads
from agentos.keys import Caller
from agentos.models import AnchaRun

router = APIRouter()

MAX_REQUEST = 256 * 1024 * 1024
"""Bytes one request may carry: a larger file goes in chunks (`Upload-Offset`)."""
SPOOL = 8 * 1024 * 1024


async def _spooled(request: Request) -> IO[bytes]:
    """The request body in a temporary file (in memory while small)."""
    spool: IO[bytes] = tempfile.SpooledTemporaryFile(SPOOL)  # noqa: SIM115  (closed by the caller)
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_REQUEST:
            spool.close()
            raise TooLarge(f"The request carries more than {MAX_REQUEST:,} bytes: send a large file in chunks"
                           " with Upload-Offset (ancha push does)")
        spool.write(chunk)
    spool.seek(0)
    return spool


def _run_url(request: Request, run_id: str) -> str:
    return f"{str(request.base_url).rstrip('/')}/ui/runs/{run_id}"


@router.put("/api/ancha/runs/{run_id}")
def begin_upload(run_id: str, body: AnchaRunPut, request: Request, who: Caller = Depends(caller),
                 svc: Services = Depends(services)) -> Response:
    """201 for a new upload, 200 for one known already; `missing` lists the files still to send."""
    source = uploads.Source(**body.source.model_dump())
    with svc.db.write() as session:
        run, missing, new = uploads.begin(session, who, run_id, body.summary, body.files, source, svc.blobs)
        answer = run.to_dict() | {"missing": missing, "url": _run_url(request, run.run_id)}
    return respond(answer, 201 if new else 200)


def _run(svc: Services, who: Caller, run_id: str) -> AnchaRun:
    with svc.db.read() as session:
        run = uploads.find_run(session, who.workspace_id, run_id)
        session.expunge(run)
    return run


@router.post("/api/ancha/runs/{run_id}/files")
async def upload_batch(run_id: str, request: Request, who: Caller = Depends(caller),
                       svc: Services = Depends(services)) -> Response:
    run = await run_in_threadpool(_run, svc, who, run_id)
    spool = await _spooled(request)
    try:
        stored = await run_in_threadpool(uploads.store_tar, run, spool, svc.blobs)
    finally:
        spool.close()
    missing = await run_in_threadpool(uploads.missing_files, run, svc.blobs)
    return respond({"stored": stored, "missing": missing})


@router.put("/api/ancha/runs/{run_id}/files/{path:path}")
async def upload_file(run_id: str, path: str, request: Request, who: Caller = Depends(caller),
                      svc: Services = Depends(services)) -> Response:
    run = await run_in_threadpool(_run, svc, who, run_id)
    offset_header = request.headers.get("upload-offset")
    spool = await _spooled(request)
    try:
        if offset_header is None:
            await run_in_threadpool(lambda: uploads.store_file(run, path, uploads.read_chunks(spool), svc.blobs))
            offset = uploads.entry_of(run, path).size
        else:
            if not offset_header.isdigit():
                raise BadRequest("Upload-Offset must be a whole number of bytes")
            data = spool.read()
            offset = await run_in_threadpool(uploads.append_chunk, run, path, int(offset_header), data, svc.blobs)
    finally:
        spool.close()
    return respond({"path": path, "offset": offset}, 200)


@router.head("/api/ancha/runs/{run_id}/files/{path:path}")
def file_offset(run_id: str, path: str, who: Caller = Depends(caller), svc: Services = Depends(services)) -> Response:
    run = _run(svc, who, run_id)
    offset = uploads.upload_offset(run, path, svc.blobs)
    return Response(status_code=200, headers={"upload-offset": str(offset), "upload-length": str(uploads.entry_of(run, path).size),
                                              "cache-control": "no-store"})


@router.post("/api/ancha/runs/{run_id}/complete")
def complete_upload(run_id: str, request: Request, who: Caller = Depends(caller),
                    svc: Services = Depends(services)) -> Response:
    with svc.db.write() as session:
        run = uploads.complete(session, uploads.find_run(session, who.workspace_id, run_id), svc.blobs)
        answer = run.to_dict() | {"url": _run_url(request, run.run_id)}
    return respond(answer)


@router.get("/api/ancha/runs")
def list_runs(branch: str | None = None, commit: str | None = None, scene: str | None = None,
              limit: int = Query(default=50, ge=1, le=500), before: str | None = None,
              who: Caller = Depends(caller), svc: Services = Depends(services)) -> Response:
    """Complete runs, newest first; `before` is the previous page's `next`."""
    with svc.db.read() as session:
        page = queries.runs_page(session, who.workspace_id, branch=branch, commit=commit, scene=scene,
                                 limit=limit, before=before)
    return respond({"runs": [r.to_dict() for r in page.runs], "next": page.next})


@router.get("/api/ancha/runs/{run_id}")
def get_run(run_id: str, who: Caller = Depends(caller), svc: Services = Depends(services)) -> Response:
    with svc.db.read() as session:
        run = uploads.find_run(session, who.workspace_id, run_id)
        return respond(run.to_dict() | {"summary": run.summary, "files": run.manifest})


@router.get("/api/ancha/runs/{run_id}/files/{path:path}")
def get_file(run_id: str, path: str, who: Caller = Depends(caller), svc: Services = Depends(services)) -> Response:
    run = _run(svc, who, run_id)
    chunks = uploads.read_file(run, path, svc.blobs)
    return StreamingResponse(chunks, media_type="application/octet-stream",
                             headers={"x-content-type-options": "nosniff", "cache-control": "private, no-store",
                                      "content-disposition": "attachment"})


@router.delete("/api/ancha/runs/{run_id}", status_code=204)
def delete_run(run_id: str, who: Caller = Depends(caller), svc: Services = Depends(services)) -> Response:
    require(who, "admin", "deleting a run")
    with svc.db.write() as session:
        run = uploads.find_run(session, who.workspace_id, run_id)
        prefix = uploads.run_prefix(run)
        session.delete(run)
    # After the rows are gone, so a failure here leaves unreachable blobs, never a run without files.
    svc.blobs.delete_prefix(prefix)
    return Response(status_code=204)
