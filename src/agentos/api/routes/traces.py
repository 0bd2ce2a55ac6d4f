"""OTLP/HTTP trace ingest: POST /v1/traces turns the traces of agents built elsewhere into runs."""

from __future__ import annotations

import gzip
import zlib

from fastapi import APIRouter, Depends, Request
from google.protobuf.json_format import MessageToDict
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from starlette.concurrency import run_in_threadpool
from starlette.responses import JSONResponse, Response

from agentos.api.services import Services, caller, services
from agentos.errors import BadRequest, TooLarge
from agentos.keys import Caller
from agentos.telemetry.ingest import ingest
from agentos.telemetry.otlp import PROTOBUF, parse_export

router = APIRouter()

MAX_BODY = 16 * 1024 * 1024


@router.post("/v1/traces")
async def export_traces(
    request: Request, who: Caller = Depends(caller), svc: Services = Depends(services)
) -> Response:
    """Store each trace's root span as a run of the workspace's external workflow for its
    service.name; answer as OTLP/HTTP does, in the body's encoding (partial_success: spans refused)."""
    content_type = request.headers.get("content-type", "")
    body = _decoded(await request.body(), request.headers.get("content-encoding", ""))
    spans = parse_export(body, content_type)
    result = await run_in_threadpool(ingest, svc.db, who.workspace_id, spans)
    answer = ExportTraceServiceResponse()
    if result.rejected_spans:
        answer.partial_success.rejected_spans = result.rejected_spans
        answer.partial_success.error_message = "; ".join(result.reasons)[:2000]
    if content_type.split(";", 1)[0].strip().lower() == PROTOBUF:
        return Response(answer.SerializeToString(), media_type=PROTOBUF)
    return JSONResponse(MessageToDict(answer))


def _decoded(body: bytes, encoding: str) -> bytes:
    encoding = encoding.strip().lower()
    if encoding in ("", "identity"):
        return body
    if encoding != "gzip":
        raise BadRequest(f"Unsupported Content-Encoding {encoding[:40]!r}: send the body plain or gzip")
    try:
        decompressor = zlib.decompressobj(16 + zlib.MAX_WBITS)
        plain = decompressor.decompress(body, MAX_BODY + 1)
    except (zlib.error, gzip.BadGzipFile) as exc:
        raise BadRequest(f"The body is not gzip: {exc}") from None
    if len(plain) > MAX_BODY:
        raise TooLarge(f"The decompressed body is over {MAX_BODY // (1024 * 1024)} MiB: export fewer spans at once")
    return plain
