"""AgentOS OpenTelemetry benchmark (a script, not a test).

    .venv/bin/python bench/agentos_telemetry.py [--export-runs 4000] [--ingest-spans 60000] [--check-gets 20]
        [--metrics-runs 1000000] [--metrics-gets 20] [--only export,ingest,metrics]

1. Export overhead per run: runs of a mock two-model workflow executed in this process
   through the Runner (on SQLite), in alternating blocks by a service without export and by
   one whose TracedRunStreams exports each run (BatchSpanProcessor + OTLP/HTTP exporter) to
   a local receiver in another process that only answers 200. The process CPU time of each
   block (all threads: the batch processor's too; a traced block ends with force_flush, so
   its spans are exported inside it) over its runs; the medians per run, and their difference.
   Alongside, the direct CPU cost of trace_run() on a finished run's events, without a span
   processor and with the batch processor and exporter (flushed).
2. Ingest rate of POST /v1/traces: `agentos serve` on PostgreSQL; traces of 1 root + 9
   children made with the OpenTelemetry SDK, pre-encoded as ExportTraceServiceRequest
   protobuf bodies (as its OTLPSpanExporter sends them), POSTed over a few keep-alive
   connections; spans/s and runs/s, and the database is checked for a run per trace.
3. GET /api/metrics?group_by=workflow|check over METRICS_RUNS runs on PostgreSQL (COPY of
   runs of 20 workflows over 60 days, 3-6 check results each); median/p95 of METRICS_GETS.

PostgreSQL (127.0.0.1:5432, database `test`, trust auth) is needed for 2 and 3: a fresh
database is created and dropped after. Prints a markdown table with the targets.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import psycopg
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from sqlalchemy import text

sys.path.insert(0, str(Path(__file__).resolve().parent))

from agentos_service import (  # noqa: E402
    CHECKS,
    NODES,
    agentos_serve,
    answering,
    free_port,
    pg_database,
    print_table,
    sqlite_database,
)

from agentos.api.services import Services  # noqa: E402
from agentos.db import Database  # noqa: E402
from agentos.deployments import run_snapshot  # noqa: E402
from agentos.engine.runner import Runner  # noqa: E402
from agentos.engine.streams import Event, RunStreams  # noqa: E402
from agentos.ids import new_id  # noqa: E402
from agentos.keys import issue_key_record  # noqa: E402
from agentos.rollups import rebuild_breakdowns  # noqa: E402
from agentos.telemetry.export import RunSpans, TracedRunStreams, run_resource, trace_run  # noqa: E402
from agentos.timestamps import utcnow  # noqa: E402

TARGET_EXPORT_MS = 0.5
TARGET_SPANS_PER_S = 5000
TARGET_METRICS_MS = 200

# A receiver in a process of its own (its CPU is not the exporter's): answers every POST
# /v1/traces with an empty ExportTraceServiceResponse, reading the body and nothing more.
RECEIVER = """
import sys, uvicorn
async def app(scope, receive, send):
    if scope["type"] != "http":
        return
    more = True
    while more:
        more = (await receive()).get("more_body", False)
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"application/x-protobuf")]})
    await send({"type": "http.response.body", "body": b""})
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
"""


@contextmanager
def otlp_receiver() -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen([sys.executable, "-c", RECEIVER, str(port)])
    try:
        yield answering(process, port, lambda base: httpx.post(base + "/v1/traces", content=b"", timeout=1),
                        "the OTLP receiver")
    finally:
        process.terminate()
        process.wait(15)


class CountingExporter(OTLPSpanExporter):
    """The OTLP/HTTP exporter, counting the spans it exported (none may be dropped)."""

    exported = 0

    def export(self, spans: Any) -> Any:
        self.exported += len(spans)
        return super().export(spans)


class CapturedStreams(RunStreams):
    """Run streams keeping every event published, to hand a finished run's events to trace_run()."""

    def __init__(self) -> None:
        super().__init__()
        self.events: list[Event] = []

    def publish(self, run_id: str, event: Event) -> None:
        super().publish(run_id, event)
        self.events.append(event)


OTEL_ENV = ("OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_SERVICE_NAME")


@contextmanager
def otel_environment(endpoint: str | None) -> Iterator[None]:
    saved = {name: os.environ.get(name) for name in OTEL_ENV}
    for name in OTEL_ENV:
        os.environ.pop(name, None)
    if endpoint is not None:
        os.environ |= {"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
                       "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "OTEL_SERVICE_NAME": "agentos-bench"}
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def bench_export(runs: int, block: int, trace_calls: int) -> dict[str, float]:
    """CPU ms per run without and with export (median of blocks), and of trace_run() alone."""
    with otlp_receiver() as endpoint, sqlite_database() as url:
        db = Database(url)
        _, record = issue_key_record(db, "bench")
        db.dispose()
        with otel_environment(None):
            plain = Services.build(url, "bench-plain")
        with otel_environment(endpoint):
            traced = Services.build(url, "bench-traced")
        assert isinstance(traced.streams, TracedRunStreams) and not isinstance(plain.streams, TracedRunStreams)
        try:
            workflow_id = new_id()
            now = utcnow()
            from agentos.models import Workflow, WorkflowVersion

            with plain.db.write() as session:
                session.add(Workflow(id=workflow_id, workspace_id=record.workspace_id, name="Bench", version=1,
                                     nodes=NODES, checks=CHECKS, created_at=now, updated_at=now))
                session.flush()
                session.add(WorkflowVersion(workflow_id=workflow_id, version=1, nodes=NODES, checks=CHECKS,
                                            created_at=now))
            with plain.db.read_connection() as connection:
                workflow = run_snapshot(connection, record.workspace_id, workflow_id, None, None)
            provider = traced.streams.spans.provider
            per_run: dict[str, list[float]] = {"plain": [], "traced": []}
            for svc in (plain, traced) * 2:  # warm-up
                for _ in range(50):
                    assert svc.runner.start(workflow, {"ticket": "warm-up"})["status"] == "success"
            provider.force_flush()
            for index in range(max(1, runs // block)):
                order = (("plain", plain), ("traced", traced)) if index % 2 == 0 else (("traced", traced), ("plain", plain))
                for name, svc in order:
                    started = time.process_time()
                    for _ in range(block):
                        svc.runner.start(workflow, {"ticket": "I was double charged"})
                    if name == "traced":
                        provider.force_flush()
                    per_run[name].append((time.process_time() - started) / block * 1000)

            captured = CapturedStreams()
            runner = Runner(plain.db, captured, plain.providers, plain.instance.id)
            try:
                runner.start(workflow, {"ticket": "I was double charged"})
            finally:
                runner.shutdown()
            events = captured.events
            nodes = [e for e in events if e.get("type") == "node_finished"]
            spans = 1 + len(nodes) + sum(1 for e in nodes if e.get("node_type") == "llm")  # run, nodes, model calls
            resource = run_resource("agentos-bench")
            counting = CountingExporter(endpoint=endpoint + "/v1/traces")
            direct: dict[str, float] = {}
            for name, processor in (("bare", SpanProcessor()), ("exported", BatchSpanProcessor(counting))):
                tracer_provider = TracerProvider(resource=resource)
                tracer_provider.add_span_processor(processor)
                run_spans = RunSpans(tracer_provider, processor)
                for _ in range(200):
                    trace_run(run_spans, events)
                tracer_provider.force_flush()
                counting.exported = 0
                started = time.process_time()
                for call in range(trace_calls):
                    trace_run(run_spans, events)
                    if call % 200 == 199:  # the batch processor's queue holds 2,048 spans, then drops
                        tracer_provider.force_flush()
                tracer_provider.force_flush()
                direct[name] = (time.process_time() - started) / trace_calls * 1000
                if name == "exported" and counting.exported != trace_calls * spans:
                    raise SystemExit(f"{counting.exported} spans exported by {trace_calls} trace_run() calls: some dropped")
                tracer_provider.shutdown()
        finally:
            traced.close()
            plain.close()
    plain_ms, traced_ms = statistics.median(per_run["plain"]), statistics.median(per_run["traced"])
    return {"runs": len(per_run["plain"]) * block, "blocks": len(per_run["plain"]), "plain_ms": plain_ms,
            "traced_ms": traced_ms, "overhead_ms": traced_ms - plain_ms, "spans": spans,
            "trace_run_ms": direct["bare"], "trace_run_exported_ms": direct["exported"]}


def trace_bodies(spans_total: int, traces_per_body: int, children: int) -> list[bytes]:
    """ExportTraceServiceRequest bodies of traces of 1 root + `children` spans, made with the SDK."""
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "bench-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("bench-agent")
    bodies: list[bytes] = []
    per_trace = 1 + children
    for _ in range(max(1, spans_total // (per_trace * traces_per_body))):
        for _ in range(traces_per_body):
            with tracer.start_as_current_span("answer ticket", attributes={"ticket.id": "T-1"}) as root:
                with tracer.start_as_current_span("chat gpt-4o-mini", attributes={
                    "gen_ai.system": "openai", "gen_ai.request.model": "gpt-4o-mini",
                    "gen_ai.usage.input_tokens": 1000, "gen_ai.usage.output_tokens": 500,
                }):
                    pass
                for step in range(children - 1):
                    with tracer.start_as_current_span(f"tool step-{step}", attributes={"tool.name": f"step-{step}"}):
                        pass
                root.set_attribute("gen_ai.completion", "Your refund for order GB204815 is on its way.")
        bodies.append(encode_spans(memory.get_finished_spans()).SerializeToString())
        memory.clear()
    provider.shutdown()
    return bodies


def bench_ingest(spans_total: int, traces_per_body: int, connections: int) -> dict[str, float]:
    children = 9
    bodies = trace_bodies(spans_total, traces_per_body, children)
    warm = trace_bodies(traces_per_body * (1 + children) * 4, traces_per_body, children)
    with pg_database() as url:
        db = Database(url)
        key, record = issue_key_record(db, "bench")
        db.dispose()
        with agentos_serve(url) as base:
            headers = {"Authorization": f"Bearer {key}"}
            protobuf = {"Content-Type": "application/x-protobuf"}
            with httpx.Client(base_url=base, headers=headers, timeout=120) as client:
                for body in warm[:1]:
                    client.post("/v1/traces", content=body, headers=protobuf).raise_for_status()
                client.put("/api/workflows/bench-agent/checks", json={"checks": [
                    {"name": "Mentions the refund", "type": "contains", "target": "output", "value": "refund"},
                    {"name": "Under a cent", "type": "max_cost_usd", "value": 0.01},
                ]}).raise_for_status()
                for body in warm[1:]:
                    client.post("/v1/traces", content=body, headers=protobuf).raise_for_status()
            next_body = iter(range(len(bodies)))
            lock = threading.Lock()
            failures: list[str] = []

            def post_all() -> None:
                with httpx.Client(base_url=base, headers=headers | protobuf, timeout=120) as client:
                    while True:
                        with lock:
                            index = next(next_body, None)
                        if index is None:
                            return
                        response = client.post("/v1/traces", content=bodies[index])
                        if response.status_code != 200 or response.content not in (b"", b"{}") and \
                                b"rejected" in response.content:
                            failures.append(f"{response.status_code} {response.text[:200]}")

            threads = [threading.Thread(target=post_all) for _ in range(connections)]
            started = time.perf_counter()
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            elapsed = time.perf_counter() - started
            if failures:
                raise SystemExit(f"{len(failures)} exports failed: {failures[0]}")
        with psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://")) as conn:
            row = conn.execute("SELECT count(*) FROM runs WHERE workspace_id = %s AND evals_total = 2",
                               (record.workspace_id,)).fetchone()
            stored = int(row[0]) if row else 0
    traces = len(bodies) * traces_per_body
    expected = traces + (len(warm) - 1) * traces_per_body
    if stored != expected:
        raise SystemExit(f"{expected} scored runs expected from the traces sent, {stored} stored")
    return {"spans": traces * (1 + children), "traces": traces, "seconds": elapsed,
            "spans_per_s": traces * (1 + children) / elapsed, "runs_per_s": traces / elapsed}


CHECK_NAMES = ["Mentions the refund", "No internal error leaked", "Category is known", "Under budget",
               "Under 8 seconds", "Reply is substantial", "Polite", "Names the order"]


ENVIRONMENTS = ["production", "production", "staging", None]


def insert_runs(url: str, workspace_id: str, workflow_ids: list[str], count: int) -> float:
    """COPY `count` finished runs spread over the workflows, environments and the last 60 days;
    seconds taken. (Their rollups are made after, as migration 0009 makes them.)"""
    rng = random.Random(7)
    now = utcnow()
    columns = ("id", "workspace_id", "workflow_id", "workflow_version", "status", "input", "state", "error",
               "cost_usd", "duration_ms", "created_at", "started_at", "finished_at", "evals", "evals_passed",
               "evals_total", "environment")
    started = time.perf_counter()
    with psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://")) as conn:
        with conn.cursor() as cursor, cursor.copy(f"COPY runs ({', '.join(columns)}) FROM STDIN") as copy:
            for _ in range(count):
                created = now - timedelta(seconds=rng.randrange(60 * 86400))
                duration = rng.randrange(200, 9000)
                failed = rng.random() < 0.05
                results = [{"id": f"chk_{name[:6].lower()}", "name": name, "passed": rng.random() < 0.85}
                           for name in rng.sample(CHECK_NAMES, rng.randint(3, 6))]
                passed = sum(1 for r in results if r["passed"])
                evals = {"passed": passed, "total": len(results), "results": results}
                finished = created + timedelta(milliseconds=duration)
                copy.write_row((
                    new_id(), workspace_id, rng.choice(workflow_ids), 1, "failed" if failed else "success",
                    '{"ticket": "bench"}', '{"draft_reply": "We will process your refund today."}',
                    "boom" if failed else None, round(rng.uniform(0.0001, 0.02), 6), duration, created, created,
                    finished, json.dumps(evals), passed, len(results), rng.choice(ENVIRONMENTS),
                ))
        conn.execute("ANALYZE runs")
    return time.perf_counter() - started


def bench_metrics(count: int, gets: dict[str, int]) -> dict[str, Any]:
    with pg_database() as url:
        db = Database(url)
        key, record = issue_key_record(db, "bench")
        db.dispose()
        with (
            agentos_serve(url) as base,
            httpx.Client(base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=300) as client,
        ):
            workflow_ids = []
            for index in range(20):
                created = client.post("/api/workflows", json={"name": f"Workflow {index:02d}", "nodes": NODES,
                                                              "checks": CHECKS})
                created.raise_for_status()
                workflow_ids.append(created.json()["id"])
            insert_s = insert_runs(url, record.workspace_id, workflow_ids, count)
            db = Database(url, run_migrations=False)
            started = time.perf_counter()
            with db.write_connection() as connection:
                rebuild_breakdowns(connection)
            rebuild_s = time.perf_counter() - started
            with db.write_connection() as connection:
                rollup_rows = {table: connection.execute(text(f"SELECT count(*) FROM {table}")).scalar_one()
                               for table in ("run_metric_rollups", "run_latency_rollups", "run_check_rollups")}
                connection.execute(text("ANALYZE"))
            db.dispose()
            timings: dict[str, dict[str, float]] = {}
            for group_by in ("workflow", "check"):
                params = {"group_by": group_by, "days": "60"}
                first = client.get("/api/metrics", params=params)
                first.raise_for_status()
                if group_by == "workflow":  # every run once (by check, a run counts under each of its checks)
                    counted = sum(g["runs"] for g in first.json()["groups"])
                samples = []
                for _ in range(gets[group_by]):
                    started = time.perf_counter()
                    client.get("/api/metrics", params=params).raise_for_status()
                    samples.append((time.perf_counter() - started) * 1000)
                samples.sort()
                timings[group_by] = {"median": statistics.median(samples),
                                     "p95": samples[max(0, -(-95 * len(samples) // 100) - 1)],
                                     "groups": len(first.json()["groups"]), "runs": counted,
                                     "gets": len(samples)}
    return {"insert_s": insert_s, "rebuild_s": rebuild_s, "rollup_rows": rollup_rows, "timings": timings}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--export-runs", type=int, default=4000, help="runs per setup (with and without export)")
    parser.add_argument("--export-block", type=int, default=200, help="runs per timed block")
    parser.add_argument("--trace-calls", type=int, default=5000, help="direct trace_run() calls timed")
    parser.add_argument("--ingest-spans", type=int, default=60000)
    parser.add_argument("--traces-per-body", type=int, default=50)
    parser.add_argument("--connections", type=int, default=4)
    parser.add_argument("--metrics-runs", type=int, default=1_000_000)
    parser.add_argument("--metrics-gets", type=int, default=20, help="GETs timed, group_by=workflow")
    parser.add_argument("--check-gets", type=int, default=20, help="GETs timed, group_by=check")
    parser.add_argument("--only", default="export,ingest,metrics")
    args = parser.parse_args()
    parts = set(args.only.split(","))
    rows: list[tuple[str, str, str, Any]] = []
    if "export" in parts:
        export = bench_export(args.export_runs, args.export_block, args.trace_calls)
        where = (f"CPU per run, in-process Runner on SQLite, median of {export['blocks']:.0f} blocks of "
                 f"{args.export_block} runs each way ({export['spans']:.0f} spans a run)")
        rows.append((f"{where}: without export", f"{export['plain_ms']:.3f} ms", "-", "-"))
        rows.append((f"{where}: with OTLP/HTTP export (BatchSpanProcessor, flushed)",
                     f"{export['traced_ms']:.3f} ms", "-", "-"))
        rows.append(("OTel export overhead per run (difference)", f"{export['overhead_ms']:.3f} ms",
                     f"<= {TARGET_EXPORT_MS} ms", export["overhead_ms"] <= TARGET_EXPORT_MS))
        rows.append((f"trace_run() alone, no span processor (mean of {args.trace_calls})",
                     f"{export['trace_run_ms']:.3f} ms", "-", "-"))
        rows.append((f"trace_run() + BatchSpanProcessor + OTLP/HTTP export, flushed (mean of {args.trace_calls})",
                     f"{export['trace_run_exported_ms']:.3f} ms", f"<= {TARGET_EXPORT_MS} ms",
                     export["trace_run_exported_ms"] <= TARGET_EXPORT_MS))
    if "ingest" in parts:
        try:
            ingest = bench_ingest(args.ingest_spans, args.traces_per_body, args.connections)
            where = (f"POST /v1/traces, `agentos serve` on PostgreSQL, {ingest['traces']:.0f} traces of 10 spans, "
                     f"{args.traces_per_body} traces a body, {args.connections} connections")
            rows.append((f"{where}: spans/s", f"{ingest['spans_per_s']:,.0f}", f">= {TARGET_SPANS_PER_S:,}",
                         ingest["spans_per_s"] >= TARGET_SPANS_PER_S))
            rows.append((f"{where}: runs/s (scored, 2 checks)", f"{ingest['runs_per_s']:,.0f}", "-", "-"))
        except LookupError as missing:
            rows.append(("POST /v1/traces", f"skipped: {missing}", f">= {TARGET_SPANS_PER_S:,} spans/s", "-"))
    if "metrics" in parts:
        try:
            metrics = bench_metrics(args.metrics_runs, {"workflow": args.metrics_gets, "check": args.check_gets})
            rows.append((f"COPY of {args.metrics_runs:,} runs (+ ANALYZE), PostgreSQL", f"{metrics['insert_s']:.1f} s",
                         "-", "-"))
            rollup_rows = ", ".join(f"{table} {n:,}" for table, n in metrics["rollup_rows"].items())
            rows.append((f"their rollups built as migration 0009 builds them ({rollup_rows} rows)",
                         f"{metrics['rebuild_s']:.1f} s", "-", "-"))
            for group_by, timing in metrics["timings"].items():
                rows.append((f"GET /api/metrics?group_by={group_by}&days=60 over {timing['runs']:,.0f} runs "
                             f"({timing['groups']:.0f} groups): median / p95 of {timing['gets']:.0f}",
                             f"{timing['median']:.0f} / {timing['p95']:.0f} ms", f"<= {TARGET_METRICS_MS} ms",
                             timing["p95"] <= TARGET_METRICS_MS))
        except LookupError as missing:
            rows.append(("GET /api/metrics", f"skipped: {missing}", f"<= {TARGET_METRICS_MS} ms", "-"))
    print_table(rows, " (a CI run shares this machine)")


if __name__ == "__main__":
    main()
