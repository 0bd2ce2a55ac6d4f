"""Runs as OTLP traces with the GenAI semantic conventions, built from the run's events.

One span per run, a child span per node, and under an llm node a `chat {model}` span with
gen_ai.system, gen_ai.request.model, gen_ai.usage.* and the call's cost (agentos.cost_usd).
The spans are built when the run's stream closes, with the events' timestamps as their times,
so the runner needs no tracing of its own. The OTel SDK's batch processor and OTLP/HTTP
exporter send them. Configured by the standard OTEL_* variables;
nothing is exported unless OTEL_TRACES_EXPORTER names otlp and an OTLP endpoint is set.
"""

from __future__ import annotations

import functools
import logging
import os
import threading
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

from agentos.engine.streams import Event, RunStreams

log = logging.getLogger(__name__)

ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")


def exporting(environ: Mapping[str, str]) -> bool:
    """Whether the OTEL_* variables ask for OTLP traces: an otlp exporter and an endpoint."""
    exporters = {e.strip().lower() for e in environ.get("OTEL_TRACES_EXPORTER", "").split(",")}
    return "otlp" in exporters and any(environ.get(name, "").strip() for name in ENDPOINT_VARIABLES)


def open_tracer_provider(environ: Mapping[str, str] | None = None) -> RunSpans | None:
    """Run spans exported over OTLP/HTTP as the OTEL_* variables say, or None.

    The exporter and the batch processor read their own variables (endpoint, headers,
    OTEL_BSP_SCHEDULE_DELAY...); the resource reads OTEL_SERVICE_NAME and
    OTEL_RESOURCE_ATTRIBUTES, the sampler OTEL_TRACES_SAMPLER and its argument.
    """
    if not exporting(os.environ if environ is None else environ):
        return None
    processor = BatchSpanProcessor(OTLPSpanExporter())
    provider = TracerProvider(resource=run_resource())
    provider.add_span_processor(processor)
    return RunSpans(provider, processor)


def run_resource(default_service: str = "agentos") -> HashedResource:
    """The resource of the runs' spans: OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES, else `default_service`."""
    created = Resource.create({} if os.environ.get("OTEL_SERVICE_NAME") else {"service.name": default_service})
    return HashedResource(created.attributes, created.schema_url)


class HashedResource(Resource):
    """A resource that hashes its attributes once. The OTLP encoder groups every span it
    sends by resource, and `Resource.__hash__` serializes the attributes to JSON each time:
    a fifth of the cost of encoding a span."""

    @functools.cached_property
    def _hash(self) -> int:
        return super().__hash__()

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return super().__eq__(other)


class RunSpans:
    """Makes a finished run's spans and hands them to a span processor.

    A run is traced after it has finished, from its events, so each span is made finished
    (the SDK's `ReadableSpan`, with the provider's resource, ids and sampler) and handed
    straight to the processor: the Tracer's live-span machinery (a lock, context and
    attribute checks per span) cost five times as much and bought nothing here.
    """

    def __init__(self, provider: TracerProvider, processor: SpanProcessor) -> None:
        self.provider = provider
        self.processor = processor
        self._scope = InstrumentationScope("agentos")
        self._sampled = TraceFlags(TraceFlags.SAMPLED)

    def context(self, trace_id: int) -> SpanContext:
        return SpanContext(trace_id, self.provider.id_generator.generate_span_id(), False, self._sampled)

    def sampled(self, trace_id: int, name: str, attributes: dict[str, Any]) -> bool:
        decision = self.provider.sampler.should_sample(None, trace_id, name, SpanKind.INTERNAL, attributes)
        return bool(decision.decision.is_sampled())

    def end(self, name: str, context: SpanContext, parent: SpanContext | None, attributes: dict[str, Any],
            kind: SpanKind, status: Status, start_ns: int, end_ns: int) -> None:
        self.processor.on_end(ReadableSpan(
            name, context, parent, self.provider.resource, attributes, kind=kind, status=status,
            start_time=start_ns, end_time=end_ns, instrumentation_scope=self._scope,
        ))

    def shutdown(self) -> None:
        """Export the spans still batched."""
        self.provider.shutdown()


class TracedRunStreams(RunStreams):
    """Live run streams that also turn each run's events into a trace when the run's stream closes."""

    def __init__(self, spans: RunSpans) -> None:
        super().__init__()
        self.spans = spans
        self._runs: dict[str, list[Event]] = {}
        self._traced_lock = threading.Lock()

    def publish(self, run_id: str, event: Event) -> None:
        super().publish(run_id, event)
        with self._traced_lock:
            self._runs.setdefault(run_id, []).append(event)

    def close(self, run_id: str) -> None:
        super().close(run_id)
        with self._traced_lock:
            events = self._runs.pop(run_id, [])
        if any(e.get("type") == "run_finished" for e in events):
            try:
                trace_run(self.spans, events)
            except Exception:  # telemetry must never fail a run
                log.exception("tracing run %s failed", run_id)

    def shutdown(self) -> None:
        self.spans.shutdown()


_UNSET = Status(StatusCode.UNSET)


def trace_run(spans: RunSpans, events: list[Event]) -> None:
    """Spans for one run's events: the run, its nodes, and the model calls of its llm nodes."""
    started = next((e for e in events if e.get("type") == "run_started"), events[0])
    # The last run_finished, and a run_evaluated only after it: the run's final word.
    last = max(i for i, e in enumerate(events) if e.get("type") == "run_finished")
    finished = events[last]
    evaluated = next((e for e in events[last:] if e.get("type") == "run_evaluated"), None)
    run_attributes: dict[str, Any] = {
        "agentos.run.id": str(started.get("run_id")),
        "agentos.run.status": str(finished.get("status")),
        "agentos.cost_usd": float(finished.get("cost_usd") or 0.0),
    }
    if started.get("workflow_id") is not None:
        run_attributes["agentos.workflow.id"] = str(started["workflow_id"])
    if started.get("workflow_version") is not None:
        run_attributes["agentos.workflow.version"] = int(started["workflow_version"])
    if evaluated is not None:
        run_attributes["agentos.evals.passed"] = int(evaluated.get("passed") or 0)
        run_attributes["agentos.evals.total"] = int(evaluated.get("total") or 0)
    name = f"run {started.get('workflow_id', '')}".strip()
    trace_id = spans.provider.id_generator.generate_trace_id()
    if not spans.sampled(trace_id, name, run_attributes):
        return
    run = spans.context(trace_id)
    node_starts: dict[str, Event] = {}
    for event in events:
        if event.get("type") == "node_started":
            node_starts[str(event.get("node_id"))] = event
        elif event.get("type") == "node_finished":
            _trace_node(spans, run, node_starts.pop(str(event.get("node_id")), event), event)
    status = Status(StatusCode.ERROR, str(finished["error"])) if finished.get("error") else _UNSET
    spans.end(name, run, None, run_attributes, SpanKind.INTERNAL, status, _nanos(started), _nanos(finished))


def _trace_node(spans: RunSpans, parent: SpanContext, started: Event, finished: Event) -> None:
    attributes: dict[str, Any] = {
        "agentos.node.id": str(finished.get("node_id")),
        "agentos.node.type": str(finished.get("node_type")),
        "agentos.node.status": str(finished.get("status")),
    }
    node = spans.context(parent.trace_id)
    start_ns, end_ns = _nanos(started), _nanos(finished)
    if finished.get("node_type") == "llm" and finished.get("model"):
        _trace_model_call(spans, node, started, finished, start_ns, end_ns)
    spans.end(f"node {finished.get('node_id')}", node, parent, attributes, SpanKind.INTERNAL, _status(finished),
              start_ns, end_ns)


def _trace_model_call(spans: RunSpans, parent: SpanContext, started: Event, finished: Event, start_ns: int,
                      end_ns: int) -> None:
    model = str(finished["model"])
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.system": str(finished.get("provider") or "openai"),
        "gen_ai.request.model": model,
    }
    for key in ("input_tokens", "output_tokens"):
        if finished.get(key) is not None:
            attributes[f"gen_ai.usage.{key}"] = int(finished[key])
    if finished.get("cost_usd") is not None:
        attributes["agentos.cost_usd"] = float(finished["cost_usd"])
    spans.end(f"chat {model}", spans.context(parent.trace_id), parent, attributes, SpanKind.CLIENT,
              _status(finished), start_ns, end_ns)


def _status(finished: Event) -> Status:
    if finished.get("status") == "failed":
        return Status(StatusCode.ERROR, str(finished.get("error") or "failed"))
    return _UNSET


def _nanos(event: Event) -> int:
    """An event's `at` (ISO 8601, UTC, a Z) as nanoseconds since the epoch."""
    moment = datetime.fromisoformat(str(event["at"]).removesuffix("Z")).replace(tzinfo=UTC)
    return int(moment.timestamp() * 1_000_000) * 1000
