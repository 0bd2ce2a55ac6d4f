"""OpenTelemetry in and out: runs exported as OTLP traces (GenAI conventions), OTLP traces ingested."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from agentos.api.app import create_app
from agentos.db import Database
from agentos.keys import issue_key
from conftest import SIX_CHECKS, SUPPORT_NODES, ServerThread


class OtlpReceiver:
    """A real OTLP/HTTP trace receiver: decodes each ExportTraceServiceRequest it is sent."""

    def __init__(self) -> None:
        self.spans: list[dict[str, Any]] = []
        self.service_names: set[str] = set()
        self.changed = threading.Condition()
        self.app = Starlette(routes=[Route("/v1/traces", self.traces, methods=["POST"])])

    async def traces(self, request: Request) -> Response:
        export = ExportTraceServiceRequest()
        export.ParseFromString(await request.body())
        with self.changed:
            for resource_spans in export.resource_spans:
                resource = _attributes(resource_spans.resource.attributes)
                self.service_names.add(str(resource.get("service.name")))
                for scope_spans in resource_spans.scope_spans:
                    for span in scope_spans.spans:
                        self.spans.append({
                            "name": span.name, "trace_id": span.trace_id.hex(), "span_id": span.span_id.hex(),
                            "parent_span_id": span.parent_span_id.hex(),
                            "start": span.start_time_unix_nano, "end": span.end_time_unix_nano,
                            "attributes": _attributes(span.attributes),
                        })
            self.changed.notify_all()
        return Response(ExportTraceServiceResponse().SerializeToString(),
                        media_type="application/x-protobuf")

    def wait_for(self, holds: Callable[[list[dict[str, Any]]], bool], seconds: float = 15) -> list[dict[str, Any]]:
        deadline = time.monotonic() + seconds
        with self.changed:
            while not holds(self.spans):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"the receiver's spans never matched: {self.spans}")
                self.changed.wait(left)
            return list(self.spans)


def _value(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    return getattr(value, kind) if kind else None


def _attributes(pairs: Any) -> dict[str, Any]:
    return {pair.key: _value(pair.value) for pair in pairs}


@pytest.fixture
def otlp_receiver() -> Iterator[tuple[OtlpReceiver, ServerThread]]:
    receiver = OtlpReceiver()
    with ServerThread(receiver.app) as server:
        yield receiver, server


@pytest.fixture
def traced_service(
    fresh_database_url: str, otlp_receiver: tuple[OtlpReceiver, ServerThread], monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[httpx.Client, OtlpReceiver]]:
    """A server exporting its runs' traces to the receiver, and a client of one workspace of it."""
    receiver, server = otlp_receiver
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "otlp")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", server.url)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
    monkeypatch.setenv("OTEL_SERVICE_NAME", "agentos-under-test")
    monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
    with ServerThread(create_app(fresh_database_url)) as agentos:
        db = Database(fresh_database_url, run_migrations=False)
        key = issue_key(db, "traced")
        db.dispose()
        with httpx.Client(base_url=agentos.url, headers={"Authorization": f"Bearer {key}"}, timeout=30) as client:
            yield client, receiver


@pytest.mark.parametrize("fresh_database_url", ["sqlite", "postgresql"], indirect=True)
def test_export__a_run_is_a_trace_of_its_nodes_and_model_calls_with_gen_ai_attributes(traced_service):
    client, receiver = traced_service
    workflow = client.post("/api/workflows", json={"name": "Traced", "nodes": SUPPORT_NODES,
                                                   "checks": SIX_CHECKS}).json()
    run = client.post(f"/api/workflows/{workflow['id']}/runs",
                      json={"input": {"ticket": "I was double charged"}}).json()
    assert run["status"] == "success"

    spans = receiver.wait_for(lambda spans: any(s["name"].startswith("run ") for s in spans))
    assert receiver.service_names == {"agentos-under-test"}
    (run_span,) = [s for s in spans if s["name"].startswith("run ")]
    assert run_span["attributes"]["agentos.run.id"] == run["id"]
    assert run_span["attributes"]["agentos.workflow.id"] == workflow["id"]
    assert run_span["attributes"]["agentos.cost_usd"] == pytest.approx(run["cost_usd"])
    assert (run_span["attributes"]["agentos.evals.passed"], run_span["attributes"]["agentos.evals.total"]) == (5, 6)
    assert run_span["parent_span_id"] == ""
    assert run_span["end"] >= run_span["start"] > 0

    nodes = {s["attributes"]["agentos.node.id"]: s for s in spans if s["name"].startswith("node ")}
    assert set(nodes) == {"classify", "order", "draft"}
    assert all(n["parent_span_id"] == run_span["span_id"] and n["trace_id"] == run_span["trace_id"]
               for n in nodes.values())

    calls = {s["parent_span_id"]: s for s in spans if s["name"] == "chat gpt-4o-mini"}
    assert set(calls) == {nodes["classify"]["span_id"], nodes["draft"]["span_id"]}
    draft = calls[nodes["draft"]["span_id"]]["attributes"]
    assert draft["gen_ai.system"] == "mock"
    assert draft["gen_ai.request.model"] == "gpt-4o-mini"
    assert (draft["gen_ai.usage.input_tokens"], draft["gen_ai.usage.output_tokens"]) == (1200, 300)
    assert draft["agentos.cost_usd"] == pytest.approx((1200 * 0.15 + 300 * 0.60) / 1e6)
    assert all(s["name"] != "chat gpt-4o-mini" for s in spans if s["parent_span_id"] == nodes["order"]["span_id"])


def test_export__nothing_is_exported_without_an_otlp_exporter_and_endpoint():
    from agentos.telemetry.export import exporting

    assert not exporting({})
    assert not exporting({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"})
    assert not exporting({"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"})
    assert not exporting({"OTEL_TRACES_EXPORTER": "otlp"})
    assert exporting({"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"})
