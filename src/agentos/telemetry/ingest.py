"""Traces of agents built elsewhere, as runs: each trace's root span is a run of the workspace's
external workflow for the trace's service.name (created on first use), scored by its checks.

The run's state holds the root span's name, trace id and attributes, and `output`: the trace's
final gen_ai output (gen_ai.completion, else the text of gen_ai.output.messages; the root
span's, else the last span's to end that has one). Its cost is the gen_ai usage of every
span priced as the engine prices model calls; its duration is the root span's.
"""

from __future__ import annotations

import json
import logging
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from agentos import crud
from agentos.db import Database
from agentos.engine.pricing import Price, price_of
from agentos.evals import build_context, evaluate_checks
from agentos.ids import new_id
from agentos.models import ModelPrice, Run, RunEvent, Workflow
from agentos.rollups import add_finished
from agentos.telemetry.otlp import IngestedSpan
from agentos.timestamps import iso

log = logging.getLogger(__name__)

EXTERNAL = "external"


@dataclass
class Ingested:
    """What an export became: the runs stored, and the spans refused with why."""

    runs: list[dict[str, Any]] = field(default_factory=list)
    rejected_spans: int = 0
    reasons: list[str] = field(default_factory=list)

    def refuse(self, count: int, reason: str) -> None:
        self.rejected_spans += count
        if reason not in self.reasons:
            self.reasons.append(reason)


def ingest(db: Database, workspace_id: str, spans: list[IngestedSpan]) -> Ingested:
    """Store a run for each trace whose root span is among `spans`; refuse the other spans."""
    result = Ingested()
    traces: dict[str, list[IngestedSpan]] = defaultdict(list)
    for span in spans:
        traces[span.trace_id].append(span)
    with db.write() as session:
        prices = {row.model: Price(row.input_per_mtok, row.output_per_mtok) for row in
                  session.scalars(select(ModelPrice).where(ModelPrice.workspace_id == workspace_id))}
        workflows: dict[str, Workflow | None] = {}
        stored: list[Run] = []
        for trace_id, trace in traces.items():
            roots = [s for s in trace if not s.parent_span_id.strip("0")]
            if len(roots) != 1:
                result.refuse(len(trace), f"trace {trace_id} has {len(roots)} root spans in this export:"
                              " send a trace's spans in one export, its root span (no parent) among them")
                continue
            root = roots[0]
            if root.service_name not in workflows:
                workflows[root.service_name] = _external_workflow(session, workspace_id, root.service_name)
            workflow = workflows[root.service_name]
            if workflow is None:
                result.refuse(len(trace), f"workflow '{root.service_name}' exists and is not external: rename it,"
                              " or set another service.name (OTEL_SERVICE_NAME) on the agent")
                continue
            run = _run(workflow, root, trace, prices)
            session.add(run)
            session.add_all(_events(run))
            result.runs.append(run.to_dict())
            stored.append(run)
        session.flush()
        add_finished(session.connection(), [
            {name: getattr(run, name) for name in
             ("workspace_id", "id", "created_at", "status", "cost_usd", "evals_passed", "evals_total")}
            for run in stored
        ])
    return result


def _external_workflow(session: Session, workspace_id: str, name: str) -> Workflow | None:
    """The workspace's external workflow `name`, created on first use; None if `name` is a graph workflow's."""
    name = name[:200]
    found = session.scalar(select(Workflow).where(Workflow.workspace_id == workspace_id, Workflow.name == name))
    if found is None:
        found = crud.create_workflow(session, workspace_id, name, [])
        found.kind = EXTERNAL
        session.flush()
    return found if found.kind == EXTERNAL else None


def _run(workflow: Workflow, root: IngestedSpan, trace: list[IngestedSpan], prices: dict[str, Price]) -> Run:
    state: dict[str, Any] = {"span": root.name, "trace_id": root.trace_id, "attributes": root.attributes}
    output = _output(root, trace)
    if output is not None:
        state["output"] = output
    started, finished = _moment(root.start_ns), _moment(max(root.end_ns, root.start_ns))
    duration_ms = round((max(root.end_ns, root.start_ns) - root.start_ns) / 1_000_000)
    cost = round(sum(_cost(span, prices) for span in trace), 8)
    run = Run(
        id=new_id(), workspace_id=workflow.workspace_id, workflow_id=workflow.id,
        workflow_version=workflow.version, status="failed" if root.failed else "success", input={},
        state=state, error=(root.status_message or "the root span's status is ERROR") if root.failed else None,
        cost_usd=cost, duration_ms=duration_ms, created_at=started, started_at=started, finished_at=finished,
        environment=root.environment,
    )
    if run.status == "success" and workflow.checks:
        run.evals = _score(workflow.checks, run)
        run.evals_passed, run.evals_total = run.evals["passed"], run.evals["total"]
    return run


def _score(checks: list[dict[str, Any]], run: Run) -> dict[str, Any]:
    """As the engine scores a run: a broken check is a failed result, never a failed ingest."""
    try:
        return dict(evaluate_checks(checks, build_context(run.state, run.input, run.cost_usd, run.duration_ms or 0)))
    except Exception as exc:
        log.exception("scoring ingested run %s raised", run.id)
        results = [{"id": c.get("id"), "name": c.get("name"), "type": c.get("type"), "passed": False,
                    "detail": f"evaluation error: {exc}"} for c in checks]
        return {"passed": 0, "total": len(results), "results": results}


def _events(run: Run) -> list[RunEvent]:
    base = {"run_id": run.id}
    started_at, finished_at = iso(run.started_at), iso(run.finished_at)
    events: list[dict[str, Any]] = [
        {**base, "type": "run_started", "at": started_at, "workflow_id": run.workflow_id,
         "workflow_version": run.workflow_version, "input": run.input},
        {**base, "type": "run_finished", "at": finished_at, "status": run.status, "error": run.error,
         "cost_usd": run.cost_usd, "duration_ms": run.duration_ms},
    ]
    if run.evals is not None:
        events.append({**base, "type": "run_evaluated", "at": finished_at, "passed": run.evals_passed,
                       "total": run.evals_total})
    return [RunEvent(run_id=run.id, seq=seq, type=e["type"], data={**e, "seq": seq})
            for seq, e in enumerate(events, 1)]


def _output(root: IngestedSpan, trace: list[IngestedSpan]) -> str | None:
    for span in [root, *sorted(trace, key=lambda s: s.end_ns, reverse=True)]:
        text = _gen_ai_output(span.attributes)
        if text is not None:
            return text
    return None


def _gen_ai_output(attributes: dict[str, Any]) -> str | None:
    if isinstance(attributes.get("gen_ai.completion"), str):
        return str(attributes["gen_ai.completion"])
    messages = attributes.get("gen_ai.output.messages")
    if messages is None:
        return None
    if isinstance(messages, str):
        try:
            messages = json.loads(messages)
        except ValueError:
            return messages
    texts = [str(part.get("content", "")) for message in messages if isinstance(message, dict)
             for part in message.get("parts", []) if isinstance(part, dict) and part.get("type") == "text"]
    return "\n".join(texts) if texts else json.dumps(messages)


def _cost(span: IngestedSpan, prices: dict[str, Price]) -> float:
    attributes = span.attributes
    model = attributes.get("gen_ai.response.model") or attributes.get("gen_ai.request.model")
    if not isinstance(model, str):
        return 0.0
    tokens_in = attributes.get("gen_ai.usage.input_tokens", attributes.get("gen_ai.usage.prompt_tokens", 0))
    tokens_out = attributes.get("gen_ai.usage.output_tokens", attributes.get("gen_ai.usage.completion_tokens", 0))
    try:
        return price_of(model, prices).cost(int(tokens_in or 0), int(tokens_out or 0))
    except (TypeError, ValueError):
        return 0.0


def _moment(nanos: int) -> datetime:
    return datetime.fromtimestamp(nanos / 1e9, UTC).replace(tzinfo=None)
