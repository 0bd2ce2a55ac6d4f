"""OpenTelemetry in and out: runs exported as OTLP traces (GenAI conventions), OTLP traces ingested."""

from __future__ import annotations

import gzip
import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from sqlalchemy import select
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from agentos.api.app import create_app
from agentos.db import Database
from agentos.keys import issue_key
from agentos.models import RunEvent
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



def test_export__the_otel_traces_sampler_decides_which_runs_are_exported(monkeypatch):
    from agentos.telemetry.export import RunSpans, trace_run

    events = [
        {"type": "run_started", "run_id": "r1", "workflow_id": "w1", "workflow_version": 1,
         "at": "2026-12-03T10:00:00.000Z"},
        {"type": "node_started", "node_id": "reply", "node_type": "set", "at": "2026-12-03T10:00:00.001Z"},
        {"type": "node_finished", "node_id": "reply", "node_type": "set", "status": "failed", "error": "boom",
         "at": "2026-12-03T10:00:00.004Z"},
        {"type": "run_finished", "status": "failed", "error": "boom", "at": "2026-12-03T10:00:00.005Z"},
    ]
    exported = {}
    for sampler in ("always_off", "always_on"):
        monkeypatch.setenv("OTEL_TRACES_SAMPLER", sampler)
        memory = InMemorySpanExporter()
        processor = SimpleSpanProcessor(memory)
        provider = TracerProvider()
        provider.add_span_processor(processor)
        trace_run(RunSpans(provider, processor), events)
        exported[sampler] = memory.get_finished_spans()
    assert exported["always_off"] == ()
    run_span, node_span = sorted(exported["always_on"], key=lambda span: span.name, reverse=True)
    assert (run_span.name, node_span.name, node_span.parent) == ("run w1", "node reply", run_span.context)
    assert (node_span.start_time, node_span.end_time) == (1796292000001000000, 1796292000004000000)
    assert node_span.status.description == "boom" and not node_span.status.is_ok

# -- In: POST /v1/traces --------------------------------------------------------------------------------------

ANSWER = "Your refund for order GB204815 is on its way."
CHECKS = [
    {"name": "Mentions the refund", "type": "contains", "target": "output", "value": "refund"},
    {"name": "Under a cent", "type": "max_cost_usd", "value": 0.01},
]


def _export_agent_trace(base_url: str, key: str, service_name: str, answer: str) -> SpanExportResult:
    """An agent built elsewhere: its spans, made with the OpenTelemetry SDK, exported by its OTLPSpanExporter."""
    spans = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": service_name}))
    provider.add_span_processor(SimpleSpanProcessor(spans))
    tracer = provider.get_tracer("support-agent")
    with tracer.start_as_current_span("answer ticket", attributes={"ticket.id": "T-1"}) as root:
        with tracer.start_as_current_span("chat gpt-4o-mini", attributes={
            "gen_ai.system": "openai", "gen_ai.request.model": "gpt-4o-mini",
            "gen_ai.usage.input_tokens": 1000, "gen_ai.usage.output_tokens": 500,
        }):
            pass
        root.set_attribute("gen_ai.completion", answer)
    exporter = OTLPSpanExporter(endpoint=f"{base_url}/v1/traces", headers={"Authorization": f"Bearer {key}"})
    try:
        return exporter.export(spans.get_finished_spans())
    finally:
        exporter.shutdown()
        provider.shutdown()


def _runs_of(api, workflow: str) -> list[dict[str, Any]]:
    response = api.get("/api/runs", params={"workflow": workflow})
    assert response.status_code == 200, response.text
    return list(response.json())


def test_ingest__an_sdk_exported_trace_is_a_run_of_the_services_external_workflow_scored_by_its_checks(api):
    assert _export_agent_trace(str(api.base_url), api.key, "support-bot", ANSWER) is SpanExportResult.SUCCESS
    workflow = api.get("/api/workflows/support-bot").json()
    assert (workflow["type"], workflow["nodes"], workflow["checks"]) == ("external", [], [])
    (first,) = _runs_of(api, "support-bot")
    assert first["status"] == "success" and first["evals"] is None
    assert first["state"]["output"] == ANSWER
    assert first["state"]["attributes"] == {"ticket.id": "T-1", "gen_ai.completion": ANSWER}
    assert first["cost_usd"] == pytest.approx((1000 * 0.15 + 500 * 0.60) / 1e6)
    assert first["duration_ms"] >= 0 and first["finished_at"] >= first["started_at"]

    assert api.put("/api/workflows/support-bot/checks", json={"checks": CHECKS}).status_code == 200
    _export_agent_trace(str(api.base_url), api.key, "support-bot", "Sorry, I cannot help.")
    runs = _runs_of(api, "support-bot")
    assert len(runs) == 2 and {r["workflow_id"] for r in runs} == {workflow["id"]}
    scored = next(r for r in runs if r["id"] != first["id"])
    assert (scored["evals"]["passed"], scored["evals"]["total"]) == (1, 2)
    assert [r["passed"] for r in scored["evals"]["results"]] == [False, True]
    db = Database(api.database_url, run_migrations=False)
    try:
        with db.read() as session:
            events = session.scalars(select(RunEvent).where(RunEvent.run_id == scored["id"]).order_by(RunEvent.seq))
            assert [(e.type, e.data["seq"]) for e in events] == [
                ("run_started", 1), ("run_finished", 2), ("run_evaluated", 3)]
    finally:
        db.dispose()


def test_ingest__an_external_workflow_cannot_be_run_through_post_runs(api):
    _export_agent_trace(str(api.base_url), api.key, "elsewhere-bot", ANSWER)
    response = api.post("/api/workflows/elsewhere-bot/runs", json={"input": {}})
    assert response.status_code == 409
    assert "external" in response.text and "/v1/traces" in response.text


def _json_span(trace_id: str, span_id: str, parent: str = "", **attributes: Any) -> dict[str, Any]:
    return {
        "traceId": trace_id, "spanId": span_id, "parentSpanId": parent, "name": f"span {span_id[:4]}",
        "startTimeUnixNano": "1764770000000000000", "endTimeUnixNano": "1764770001500000000",
        "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attributes.items()],
    }


def test_ingest__a_json_body_is_a_run_and_spans_without_their_root_are_refused_as_partial_success(api):
    messages = '[{"role": "assistant", "parts": [{"type": "text", "content": "A refund is coming."}]}]'
    body = {"resourceSpans": [{
        "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "json-bot"}}]},
        "scopeSpans": [{"spans": [
            _json_span("5b8efff798038103d269b633813fc60c", "eee19b7ec3c1b174", **{"user.tier": "gold"}),
            _json_span("5b8efff798038103d269b633813fc60c", "eee19b7ec3c1b175", "eee19b7ec3c1b174",
                       **{"gen_ai.output.messages": messages}),
            _json_span("00000000000000000000000000000001", "0000000000000002", "0000000000000003"),
        ]}],
    }]}
    response = api.post("/v1/traces", json=body)
    assert response.status_code == 200, response.text
    partial = response.json()["partialSuccess"]
    assert int(partial["rejectedSpans"]) == 1 and "00000000000000000000000000000001" in partial["errorMessage"]
    (run,) = _runs_of(api, "json-bot")
    assert run["state"]["output"] == "A refund is coming."
    assert run["state"]["trace_id"] == "5b8efff798038103d269b633813fc60c"
    assert run["state"]["attributes"] == {"user.tier": "gold"}
    assert (run["duration_ms"], run["started_at"]) == (1500, "2025-12-03T13:53:20.000Z")


@pytest.mark.parametrize(("content_type", "body", "says"), [
    ("application/x-protobuf", b"\xff\xff\xff", "protobuf"),
    ("application/json", b"{not json", "not JSON"),
    ("application/json", b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "zz"}]}]}]}', "hex"),
    ("application/json", b'{"resourceSpans": 3}', "JSON"),
    ("text/plain", b"hello", "Content-Type"),
])
def test_ingest__a_bad_body_is_a_400_naming_why(api, content_type, body, says):
    response = api.post("/v1/traces", content=body, headers={"Content-Type": content_type})
    assert response.status_code == 400, response.text
    assert says in response.text


def test_ingest__a_gzip_body_is_read_as_the_exporters_compression_sends_it(api):
    body = {"resourceSpans": [{
        "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "gzip-bot"}}]},
        "scopeSpans": [{"spans": [_json_span("5b8efff798038103d269b633813fc60d", "eee19b7ec3c1b176",
                                             **{"gen_ai.completion": "done"})]}],
    }]}
    response = api.post("/v1/traces", content=gzip.compress(json.dumps(body).encode()),
                        headers={"Content-Type": "application/json", "Content-Encoding": "gzip"})
    assert (response.status_code, response.json()) == (200, {})
    assert [r["state"]["output"] for r in _runs_of(api, "gzip-bot")] == ["done"]


def test_ingest__a_viewer_key_may_not_send_traces(api):
    db = Database(api.database_url, run_migrations=False)
    try:
        viewer = issue_key(db, "otel-viewers", role="viewer")
    finally:
        db.dispose()
    response = httpx.post(f"{api.base_url}/v1/traces", json={"resourceSpans": []},
                          headers={"Authorization": f"Bearer {viewer}"}, timeout=30)
    assert response.status_code == 403
    assert "role ci" in response.text


def test_export__runs_executed_by_an_agentos_worker_are_exported_by_the_worker(pg_database, otlp_receiver):
    from tests.agentos.service.test_service_processes import agentos
    from tests.agentos.service.test_service_queue import INSTANT, _queue_env

    from agentos.keys import create_key

    receiver, collector = otlp_receiver
    database_url = pg_database()
    key = create_key(database_url, "queued-traces")
    env = _queue_env(database_url)
    traced = env | {"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_ENDPOINT": collector.url,
                    "OTEL_SERVICE_NAME": "agentos-worker", "OTEL_BSP_SCHEDULE_DELAY": "50"}
    with (
        agentos(["serve"], env) as api,
        agentos(["worker", "--concurrency", "2"], traced, serves=False),
        httpx.Client(base_url=api.url, headers={"Authorization": f"Bearer {key}"}, timeout=60) as client,
    ):
        assert client.post("/api/workflows", json=INSTANT).status_code == 201
        run = client.post("/api/workflows/Instant/runs", json={"input": {"ticket": "T-1"}}).json()
        assert run["status"] == "success", run
        spans = receiver.wait_for(lambda spans: any(s["name"].startswith("run ") for s in spans), seconds=30)
    assert receiver.service_names == {"agentos-worker"}, "the worker exported it; the API process exports nothing"
    (run_span,) = [s for s in spans if s["name"].startswith("run ")]
    assert run_span["attributes"]["agentos.run.id"] == run["id"]
    assert {s["attributes"].get("agentos.node.id") for s in spans if s["name"].startswith("node ")} == \
        {n["id"] for n in INSTANT["nodes"]}
