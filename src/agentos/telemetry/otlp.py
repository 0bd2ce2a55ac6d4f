"""OTLP/HTTP trace bodies: an ExportTraceServiceRequest from protobuf or JSON, its spans as plain values."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from typing import Any

from google.protobuf.json_format import ParseDict, ParseError
from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Status

from agentos.errors import BadRequest

PROTOBUF = "application/x-protobuf"
JSON = "application/json"
ENVIRONMENT_LENGTH = 100
# OTLP/JSON writes ids as hex, where protobuf's JSON mapping expects base64.
_ID_FIELDS = ("traceId", "trace_id", "spanId", "span_id", "parentSpanId", "parent_span_id")


@dataclass
class IngestedSpan:
    """One span of an export, with what ingesting it reads."""

    service_name: str
    trace_id: str
    span_id: str
    parent_span_id: str
    name: str
    start_ns: int
    end_ns: int
    failed: bool
    status_message: str
    attributes: dict[str, Any] = field(default_factory=dict)
    environment: str | None = None
    """The resource's `deployment.environment.name` (or the older `deployment.environment`)."""


def parse_export(body: bytes, content_type: str) -> list[IngestedSpan]:
    """The spans of an OTLP/HTTP body; 400 naming why when it is not one."""
    media = content_type.split(";", 1)[0].strip().lower()
    request = ExportTraceServiceRequest()
    if media == PROTOBUF:
        try:
            request.ParseFromString(body)
        except DecodeError as exc:
            raise BadRequest(f"The body is not an OTLP ExportTraceServiceRequest in protobuf: {exc}") from None
    elif media == JSON:
        try:
            document = json.loads(body)
        except (ValueError, UnicodeDecodeError) as exc:
            raise BadRequest(f"The body is not JSON: {exc}") from None
        if not isinstance(document, dict):
            raise BadRequest("The body is not an OTLP ExportTraceServiceRequest: expected a JSON object"
                             " with 'resourceSpans'")
        try:
            ParseDict(_ids_as_base64(document), request, ignore_unknown_fields=True)
        except (ParseError, ValueError, TypeError) as exc:
            raise BadRequest(f"The body is not an OTLP ExportTraceServiceRequest in JSON: {exc}") from None
    else:
        raise BadRequest(f"Unsupported Content-Type {content_type[:60]!r}: send OTLP/HTTP traces as"
                         f" {PROTOBUF} or {JSON}")
    spans = []
    for resource_spans in request.resource_spans:
        resource = attributes_of(resource_spans.resource.attributes)
        service = str(resource.get("service.name") or "unknown_service")
        environment = resource.get("deployment.environment.name") or resource.get("deployment.environment")
        environment = str(environment)[:ENVIRONMENT_LENGTH] if environment else None
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                spans.append(IngestedSpan(
                    service_name=service, trace_id=span.trace_id.hex(), span_id=span.span_id.hex(),
                    parent_span_id=span.parent_span_id.hex(), name=span.name,
                    start_ns=span.start_time_unix_nano, end_ns=span.end_time_unix_nano,
                    failed=span.status.code == Status.STATUS_CODE_ERROR, status_message=span.status.message,
                    attributes=attributes_of(span.attributes), environment=environment,
                ))
    return spans


def attributes_of(pairs: Any) -> dict[str, Any]:
    return {pair.key: value_of(pair.value) for pair in pairs if isinstance(pair, KeyValue)}


def value_of(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [value_of(v) for v in value.array_value.values]
    if kind == "kvlist_value":
        return attributes_of(value.kvlist_value.values)
    if kind == "bytes_value":
        return value.bytes_value.hex()
    return getattr(value, kind) if kind else None


def _ids_as_base64(document: Any) -> Any:
    """The JSON document with its hex span and trace ids in base64, as ParseDict reads bytes."""
    if isinstance(document, list):
        return [_ids_as_base64(item) for item in document]
    if not isinstance(document, dict):
        return document
    converted = {}
    for key, value in document.items():
        if key in _ID_FIELDS and isinstance(value, str):
            try:
                value = base64.b64encode(bytes.fromhex(value)).decode()
            except ValueError:
                raise BadRequest(f"Invalid {key} {value[:40]!r}: OTLP/JSON ids are hex strings") from None
        converted[key] = _ids_as_base64(value)
    return converted
