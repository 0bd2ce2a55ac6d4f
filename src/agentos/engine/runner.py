"""Runs: create the row, walk the graph, score the checks, persist events, publish them.

A run costs two write transactions: its insert (with `run_started`) and its finish
(state, metrics, evals and the remaining events). Events are also flushed before a node
that waits (a model or HTTP call) and every FLUSH_EVERY seconds, so a subscriber in
another API process follows the run live; subscribers in this process get every event
at once from `RunStreams`.
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from sqlalchemy import insert, select, update

from agentos.db import Database
from agentos.engine.nodes import Execution, NodeFailure
from agentos.engine.pricing import Price
from agentos.engine.providers import Providers
from agentos.engine.streams import RunStreams
from agentos.evals.checks import build_context, evaluate_checks
from agentos.ids import new_id
from agentos.models import ModelPrice, Run, RunEvent
from agentos.timestamps import iso, utcnow

log = logging.getLogger("agentos.runs")

FLUSH_EVERY = 0.25


@dataclass(frozen=True)
class WorkflowSnapshot:
    """What a run executes: the workflow as it was when the run started."""

    workspace_id: str
    id: str
    version: int
    nodes: list[dict[str, Any]]
    checks: list[dict[str, Any]]


class _Recorder:
    """Numbers, stamps, publishes and buffers one run's events."""

    def __init__(self, runner: Runner, run_id: str) -> None:
        self.runner = runner
        self.run_id = run_id
        self.seq = 0
        self.pending: list[dict[str, Any]] = []
        self.last_flush = time.monotonic()

    def emit(self, kind: str, data: dict[str, Any], slow: bool = False) -> None:
        self.seq += 1
        event = {"type": kind, "run_id": self.run_id, "at": iso(utcnow()), "seq": self.seq, **data}
        self.pending.append(event)
        self.runner.streams.publish(self.run_id, event)
        # Persist now what a follower in another process should see before a slow wait.
        if slow or (kind == "node_finished" and time.monotonic() - self.last_flush > FLUSH_EVERY):
            with self.runner.db.write() as session:
                self.flush(session)

    def flush(self, session: Any) -> None:
        if self.pending:
            session.execute(
                insert(RunEvent),
                [{"run_id": self.run_id, "seq": e["seq"], "type": e["type"], "data": e} for e in self.pending],
            )
            self.pending = []
        self.last_flush = time.monotonic()


class Runner:
    def __init__(self, db: Database, streams: RunStreams, providers: Providers, owner_id: str) -> None:
        self.db = db
        self.streams = streams
        self.providers = providers
        self.owner_id = owner_id
        self.pool = ThreadPoolExecutor(max_workers=16, thread_name_prefix="agentos-run")

    def shutdown(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)

    def start(
        self,
        workflow: WorkflowSnapshot,
        input: dict[str, Any],
        *,
        wait: bool = True,
        evaluation_id: str | None = None,
    ) -> dict[str, Any]:
        """Start a run and return its wire shape: finished with `wait`, else queued."""
        now = utcnow()
        run = Run(
            id=new_id(),
            workspace_id=workflow.workspace_id,
            workflow_id=workflow.id,
            workflow_version=workflow.version,
            status="running" if wait else "queued",
            input=input,
            state={},
            error=None,
            cost_usd=0.0,
            duration_ms=None,
            created_at=now,
            started_at=now if wait else None,
            finished_at=None,
            evals=None,
            evaluation_id=evaluation_id,
            owner_id=self.owner_id,
        )
        self.streams.open(run.id)
        recorder = _Recorder(self, run.id)
        if wait:
            recorder.emit("run_started", _started_data(workflow, input))
        with self.db.write() as session:
            session.add(run)
            session.flush()
            recorder.flush(session)
        if wait:
            self._execute(run, workflow, recorder)
            return run.to_dict()
        queued = run.to_dict()
        self.pool.submit(self._execute_queued, run, workflow, recorder)
        return queued

    def _execute_queued(self, run: Run, workflow: WorkflowSnapshot, recorder: _Recorder) -> None:
        try:
            run.status = "running"
            run.started_at = utcnow()
            recorder.emit("run_started", _started_data(workflow, run.input))
            with self.db.write() as session:
                session.execute(
                    update(Run).where(Run.id == run.id).values(status="running", started_at=run.started_at)
                )
                recorder.flush(session)
            self._execute(run, workflow, recorder)
        except Exception:  # keep the worker alive; the restart sweep fails the run if it is stuck
            log.exception("run %s could not be executed", run.id)

    def _execute(self, run: Run, workflow: WorkflowSnapshot, recorder: _Recorder) -> None:
        started = time.perf_counter()
        execution = Execution(
            workflow.nodes, run.input, self.providers, self._prices(workflow), recorder.emit
        )
        try:
            execution.run()
            run.status, run.error = "success", None
        except NodeFailure as exc:
            run.status, run.error = "failed", str(exc)
        except Exception as exc:
            log.exception("run %s failed unexpectedly", run.id)
            run.status, run.error = "failed", f"{type(exc).__name__}: {exc}"
        run.duration_ms = round((time.perf_counter() - started) * 1000)
        run.cost_usd = round(execution.cost_usd, 8)
        run.state = execution.state
        run.finished_at = utcnow()
        recorder.emit(
            "run_finished",
            {"status": run.status, "error": run.error, "cost_usd": run.cost_usd, "duration_ms": run.duration_ms},
        )
        if run.status == "success" and workflow.checks:
            run.evals = _score(workflow.checks, run)
            run.evals_passed, run.evals_total = run.evals["passed"], run.evals["total"]
            recorder.emit("run_evaluated", {"passed": run.evals_passed, "total": run.evals_total})
        with self.db.write() as session:
            session.execute(
                update(Run)
                .where(Run.id == run.id)
                .values(
                    status=run.status,
                    error=run.error,
                    state=run.state,
                    cost_usd=run.cost_usd,
                    duration_ms=run.duration_ms,
                    finished_at=run.finished_at,
                    evals=run.evals,
                    evals_passed=run.evals_passed,
                    evals_total=run.evals_total,
                )
            )
            recorder.flush(session)
        self.streams.close(run.id)

    def _prices(self, workflow: WorkflowSnapshot) -> dict[str, Price]:
        if not any(node.get("type") == "llm" for node in workflow.nodes):
            return {}
        with self.db.read() as session:
            rows = session.scalars(select(ModelPrice).where(ModelPrice.workspace_id == workflow.workspace_id))
            return {row.model: Price(row.input_per_mtok, row.output_per_mtok) for row in rows}


def _started_data(workflow: WorkflowSnapshot, input: dict[str, Any]) -> dict[str, Any]:
    return {"workflow_id": workflow.id, "workflow_version": workflow.version, "input": input}


def _score(checks: list[dict[str, Any]], run: Run) -> dict[str, Any]:
    """Score a successful run. Scoring never fails the run: a broken check is a failed result."""
    try:
        context = build_context(run.state, run.input, run.cost_usd, run.duration_ms or 0)
        return dict(evaluate_checks(checks, context))
    except Exception as exc:
        log.exception("scoring run %s raised", run.id)
        results = [
            {
                "id": c.get("id"),
                "name": c.get("name"),
                "type": c.get("type"),
                "passed": False,
                "detail": f"evaluation error: {exc}",
            }
            for c in checks
        ]
        return {"passed": 0, "total": len(results), "results": results}
