"""Runs: create the row, walk the graph, score the checks, persist events, publish them.

A run costs two write transactions: its insert (with `run_started`) and its finish
(state, metrics, evals and the remaining events). Events are also flushed before a node
that waits (a model or HTTP call) and every FLUSH_EVERY seconds, so a subscriber in
another API process follows the run live; subscribers in this process get every event
at once from `RunStreams`.

No run is left `running` while the process lives: the last events (`run_finished`,
`run_evaluated`) reach live subscribers only once they are stored; when that final write
fails, the run is stored as failed with the database's reason instead, and its stream
ends either way. `stop()` (the server is shutting down) fails every unfinished run.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, Table, bindparam, insert, select, update

from agentos.broker import Broker, LocalBroker, Message
from agentos.db import Database
from agentos.engine.nodes import Execution, NodeFailure, is_slow
from agentos.engine.pricing import Price
from agentos.engine.providers import Providers
from agentos.engine.streams import RunStreams
from agentos.evals.checks import build_context, evaluate_checks
from agentos.ids import new_id
from agentos.models import ModelPrice, Run, RunEvent, WorkflowVersion
from agentos.rollups import add_finished
from agentos.storable import storable_text
from agentos.timestamps import iso, utcnow

if TYPE_CHECKING:
    from agentos.engine.queue import RunQueue

log = logging.getLogger("agentos.runs")

FLUSH_EVERY = 0.25
# Price overrides changed through another API process apply within this many seconds.
PRICES_TTL = 5.0
# The error of a run the server stopped before it finished.
INTERRUPTED = "interrupted: the server stopped"
UNFINISHED = ("queued", "running")


@dataclass(frozen=True)
class WorkflowSnapshot:
    """What a run executes: the workflow as it was when the run started."""

    workspace_id: str
    id: str
    version: int
    nodes: list[dict[str, Any]]
    checks: list[dict[str, Any]]

    @property
    def waits(self) -> bool:
        """Whether some node waits on the network or a timer (the run is not instant)."""
        return any(is_slow(node) for node in self.nodes)


_RUNS: Table = Run.__table__  # type: ignore[assignment]
_EVENTS: Table = RunEvent.__table__  # type: ignore[assignment]
_COLUMNS = tuple(column.name for column in _RUNS.columns)


class RunRecord:
    """A run this process executes: the `runs` row's columns as plain attributes (an ORM
    `Run` costs more to build and to read, on the path of every run); the same wire shape."""

    __slots__ = _COLUMNS
    id: str
    workspace_id: str
    workflow_id: str
    workflow_version: int
    status: str
    input: dict[str, Any]
    state: dict[str, Any]
    error: str | None
    cost_usd: float
    duration_ms: int | None
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    evals: dict[str, Any] | None
    evals_passed: int | None
    evals_total: int | None
    evaluation_id: str | None
    owner_id: str | None

    def __init__(self, **columns: Any) -> None:
        for name in _COLUMNS:
            setattr(self, name, columns[name])

    def to_dict(self) -> dict[str, Any]:
        return Run.to_dict(self)  # type: ignore[arg-type]

# The statements of every run, built once: building one (and its cache key) per call cost
# about as much as executing it.
_INSERT_RUN = insert(_RUNS)
_INSERT_EVENTS = insert(_EVENTS)


class _Recorder:
    """Numbers, stamps, publishes and buffers one run's events."""

    def __init__(self, runner: Runner, run_id: str) -> None:
        self.runner = runner
        self.run_id = run_id
        self.seq = 0
        self.pending: list[dict[str, Any]] = []
        self.last_flush = time.monotonic()
        # The run's last events, published only once they are stored (None: publish at once).
        self.held: list[dict[str, Any]] | None = None
        # Set once the run's end is being stored: later events (a node interrupted by stop()) are dropped.
        self.closed = False

    def emit(self, kind: str, data: dict[str, Any], slow: bool = False) -> None:
        if self.closed:
            return
        self.seq += 1
        event = {"type": kind, "run_id": self.run_id, "at": iso(utcnow()), "seq": self.seq, **data}
        self.pending.append(event)
        if self.held is not None:
            self.held.append(event)
            return
        self.runner.streams.publish(self.run_id, event)
        # Persist now what a follower in another process should see before a slow wait.
        if slow or (kind == "node_finished" and time.monotonic() - self.last_flush > FLUSH_EVERY):
            with self.runner.transaction(self):
                pass

    def flush(self, connection: Connection, final: bool = False) -> Message | None:
        """Store the pending events; announce them to the broker (inside the transaction when
        it can). Returns the message to publish once the transaction committed."""
        message = None
        if self.pending:
            connection.execute(
                _INSERT_EVENTS,
                [{"run_id": self.run_id, "seq": e["seq"], "type": e["type"], "data": e} for e in self.pending],
            )
            message = Message(self.run_id, self.pending[-1]["seq"], final, self.pending)
            self.runner.broker.publish_in(connection, message)
            self.pending = []
        self.last_flush = time.monotonic()
        return message

    def retract_held(self) -> None:
        """Forget the held events (they were not stored); the next event takes their place."""
        held = self.held or []
        self.pending = [e for e in self.pending if all(e is not h for h in held)]
        if held:
            self.seq = held[0]["seq"] - 1
        self.held = []

    def release(self) -> None:
        """Publish the held events to live subscribers."""
        for event in self.held or []:
            self.runner.streams.publish(self.run_id, event)
        self.held = None


class Runner:
    def __init__(
        self,
        db: Database,
        streams: RunStreams,
        providers: Providers,
        owner_id: str,
        broker: Broker | None = None,
        queue: RunQueue | None = None,
        threads: int = 16,
    ) -> None:
        self.db = db
        self.streams = streams
        self.providers = providers
        self.owner_id = owner_id
        self.broker = broker or LocalBroker()
        # With a queue, runs started here are executed by `agentos worker` processes.
        self.queue = queue
        self.pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="agentos-run")
        self._prices_cache: dict[str, tuple[float, dict[str, Price]]] = {}
        # Runs of this process not finished yet; whoever pops a run from here finishes it.
        self._active: dict[str, tuple[RunRecord, _Recorder, bool]] = {}
        self._active_lock = threading.Lock()
        self._stopped = False

    def stop(self, reason: str = INTERRUPTED) -> None:
        """The server is stopping: fail every unfinished run of this process with `reason`,
        ending its stream, and wake the runs' waits so their threads end too."""
        with self._active_lock:
            self._stopped = True
            active = list(self._active.values())
            self._active.clear()
        self.providers.stop()
        for run, recorder, inserted in active:
            recorder.retract_held()
            self._finish(run, recorder, inserted, reason)

    def shutdown(self) -> None:
        self.stop()
        self.pool.shutdown(wait=False, cancel_futures=True)

    @contextmanager
    def transaction(self, recorder: _Recorder, final: bool = False) -> Iterator[Connection]:
        """A write transaction that also stores the recorder's pending events and announces them."""
        with self.db.write_connection() as connection:
            yield connection
            message = recorder.flush(connection, final)
        if message is not None:
            self.broker.publish_after(message)

    def _track(self, run: RunRecord, recorder: _Recorder, inserted: bool) -> bool:
        """Register an unfinished run for stop(); False once the server is stopping."""
        with self._active_lock:
            if self._stopped:
                return False
            self._active[run.id] = (run, recorder, inserted)
            return True

    def _is_active(self, run_id: str) -> bool:
        with self._active_lock:
            return run_id in self._active

    def _claim(self, run_id: str) -> bool:
        """Whether this thread may finish the run (False: stop() has finished it already)."""
        with self._active_lock:
            return self._active.pop(run_id, None) is not None

    def start(
        self,
        workflow: WorkflowSnapshot,
        input: dict[str, Any],
        *,
        wait: bool = True,
        evaluation_id: str | None = None,
    ) -> dict[str, Any]:
        """Start a run and return its wire shape: finished with `wait`, else queued.

        A waited run whose nodes are all instant (set, condition, mock models without
        delay) is written once, when it has finished; any other run is written when it
        starts too, so it is visible (and recoverable after a crash) while it runs.
        """
        now = utcnow()
        run = RunRecord(
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
            evals_passed=None,
            evals_total=None,
            evaluation_id=evaluation_id,
            owner_id=self.owner_id,
        )
        if self.queue is not None:
            return self._start_queued(run, wait)
        self.streams.open(run.id)
        recorder = _Recorder(self, run.id)
        if wait:
            recorder.emit("run_started", _started_data(workflow, input))
        inserted = not wait or workflow.waits
        if inserted:
            try:
                with self.transaction(recorder) as connection:
                    connection.execute(_INSERT_RUN, _row(run))
            except Exception:  # nothing was stored, so nothing runs: end the stream, answer the error
                self.streams.close(run.id)
                raise
        tracked = self._track(run, recorder, inserted)
        if wait:
            self._execute(run, workflow, recorder, inserted, tracked)
            return run.to_dict()
        queued = run.to_dict()
        self.pool.submit(self._execute_queued, run, workflow, recorder, tracked)
        return queued

    def _start_queued(self, run: RunRecord, wait: bool) -> dict[str, Any]:
        """Store the run as queued and hand it to the queue; with `wait`, answer once a worker
        has finished it (told by the broker, or seen in the database every resync_seconds)."""
        assert self.queue is not None
        run.status, run.started_at = "queued", None
        with self.db.write_connection() as connection:
            connection.execute(_INSERT_RUN, _row(run))
        with self.broker.subscribe(run.id) as subscription:
            try:
                self.queue.enqueue(run.id)
            except Exception as exc:
                log.exception("run %s could not be queued", run.id)
                self.streams.open(run.id)
                self._finish(run, _Recorder(self, run.id), True, f"the run could not be queued: {_reason(exc)}")
                return run.to_dict()
            if not wait:
                return run.to_dict()
            stored = None
            while not self._stopped:
                with self.db.read() as session:
                    stored = session.scalar(select(Run).where(Run.id == run.id))
                if stored is None or stored.status not in UNFINISHED:
                    break
                subscription.finished.wait(self.broker.resync_seconds)
        return (stored or run).to_dict()

    def execute_stored(self, run_id: str) -> None:
        """Execute a queued run (in `agentos worker`): claim it, unless it is no longer queued
        (already claimed, or failed meanwhile), then run it as `start(wait=False)` would."""
        now = utcnow()
        with self.db.write_connection() as connection:
            claimed = connection.execute(
                update(_RUNS)
                .where(_RUNS.c.id == run_id, _RUNS.c.status == "queued")
                .values(status="running", started_at=now, owner_id=self.owner_id)
            ).rowcount
            if not claimed:
                return
            row = connection.execute(select(_RUNS).where(_RUNS.c.id == run_id)).mappings().one()
            version = connection.execute(
                select(WorkflowVersion.nodes, WorkflowVersion.checks).where(
                    WorkflowVersion.workflow_id == row["workflow_id"], WorkflowVersion.version == row["workflow_version"]
                )
            ).one_or_none()
        run = RunRecord(**row)
        recorder = _Recorder(self, run.id)
        self.streams.open(run.id)
        if version is None:  # the workflow was deleted while the run waited
            self._finish(run, recorder, True, "the workflow was deleted before the run started")
            return
        workflow = WorkflowSnapshot(run.workspace_id, run.workflow_id, run.workflow_version,
                                    list(version.nodes), list(version.checks))
        tracked = self._track(run, recorder, True)
        try:
            recorder.emit("run_started", _started_data(workflow, run.input))
            with self.transaction(recorder):
                pass
        except Exception as exc:
            log.exception("run %s could not be started", run.id)
            if not tracked or self._claim(run.id):
                self._finish(run, recorder, True, f"the run could not be started: {_reason(exc)}")
            return
        self._execute(run, workflow, recorder, True, tracked)

    def _execute_queued(self, run: RunRecord, workflow: WorkflowSnapshot, recorder: _Recorder, tracked: bool) -> None:
        if tracked and not self._is_active(run.id):
            return  # stop() has failed and stored it before it started
        try:
            run.status = "running"
            run.started_at = utcnow()
            recorder.emit("run_started", _started_data(workflow, run.input))
            with self.transaction(recorder) as connection:
                connection.execute(
                    update(_RUNS).where(_RUNS.c.id == run.id).values(status="running", started_at=run.started_at)
                )
        except Exception as exc:  # keep the worker alive, and never leave the run queued
            log.exception("run %s could not be started", run.id)
            if not tracked or self._claim(run.id):
                self._finish(run, recorder, True, f"the run could not be started: {_reason(exc)}")
            return
        self._execute(run, workflow, recorder, True, tracked)

    def _execute(
        self, run: RunRecord, workflow: WorkflowSnapshot, recorder: _Recorder, inserted: bool, tracked: bool
    ) -> None:
        started = time.perf_counter()
        execution = Execution(
            workflow.nodes, run.input, self.providers, self._prices(workflow), recorder.emit
        )
        try:
            if not tracked:
                raise NodeFailure(INTERRUPTED)
            execution.run()
            outcome: tuple[str, str | None] = ("success", None)
        except NodeFailure as exc:
            outcome = ("failed", str(exc))
        except Exception as exc:
            log.exception("run %s failed unexpectedly", run.id)
            outcome = ("failed", f"{type(exc).__name__}: {exc}")
        if tracked and not self._claim(run.id):
            return  # stop() has failed and stored it meanwhile
        run.status, run.error = outcome
        run.duration_ms = round((time.perf_counter() - started) * 1000)
        run.cost_usd = round(execution.cost_usd, 8)
        run.state = execution.state
        run.finished_at = utcnow()
        recorder.held = []
        recorder.emit("run_finished", _finished_data(run))
        if run.status == "success" and workflow.checks:
            run.evals = _score(workflow.checks, run)
            run.evals_passed, run.evals_total = run.evals["passed"], run.evals["total"]
            recorder.emit("run_evaluated", {"passed": run.evals_passed, "total": run.evals_total})
        try:
            self._store_final(run, recorder, inserted)
        except Exception as exc:
            log.exception("run %s: its final write failed", run.id)
            recorder.retract_held()
            self._finish(run, recorder, inserted, f"the run finished but its result could not be stored: {_reason(exc)}")
            return
        recorder.release()
        self.streams.close(run.id)

    def _store_final(self, run: RunRecord, recorder: _Recorder, inserted: bool) -> None:
        with self.transaction(recorder, final=True) as connection:
            if inserted:
                # Unless a peer has failed it meanwhile (it took this process for gone).
                finishes = connection.execute(
                    _FINISH_RUN, {"run_id": run.id, **{f"final_{k}": getattr(run, k) for k in _FINAL_FIELDS}}
                ).rowcount
            else:
                connection.execute(_INSERT_RUN, _row(run))
                finishes = 1
            if finishes:
                add_finished(connection, [_row(run)])
            else:  # the peer stored its own end of the stream
                recorder.pending = []

    def _finish(self, run: RunRecord, recorder: _Recorder, inserted: bool, error: str) -> None:
        """Fail the run with `error` when its normal course could not be stored; always ends its stream.

        Tries to keep the run's state and node events; if even that cannot be written, stores
        the failed run alone. A database that refuses both leaves the row to the restart sweep.
        """
        run.status, run.error = "failed", storable_text(error)[:2000]
        run.finished_at = run.finished_at or utcnow()
        run.evals = run.evals_passed = run.evals_total = None
        recorder.held = recorder.held if recorder.held is not None else []
        recorder.emit("run_finished", _finished_data(run))
        recorder.closed = True
        try:
            for keep_details in (True, False):
                if not keep_details:
                    run.state = {}
                    recorder.pending = [e for e in recorder.pending if e["type"] == "run_finished"]
                try:
                    self._store_final(run, recorder, inserted)
                    return
                except Exception:
                    log.exception("run %s: storing it as failed%s failed", run.id, "" if keep_details else " (bare)")
                    inserted = inserted or self._exists(run.id)
        finally:
            recorder.release()
            self.streams.close(run.id)

    def _exists(self, run_id: str) -> bool:
        try:
            with self.db.read() as session:
                return session.scalar(select(Run.id).where(Run.id == run_id)) is not None
        except Exception:
            return False

    def forget_prices(self, workspace_id: str) -> None:
        self._prices_cache.pop(workspace_id, None)

    def _prices(self, workflow: WorkflowSnapshot) -> dict[str, Price]:
        """The workspace's price overrides, re-read at most every PRICES_TTL seconds."""
        if not any(node.get("type") == "llm" for node in workflow.nodes):
            return {}
        cached = self._prices_cache.get(workflow.workspace_id)
        if cached is not None and time.monotonic() - cached[0] < PRICES_TTL:
            return cached[1]
        with self.db.read() as session:
            rows = session.scalars(select(ModelPrice).where(ModelPrice.workspace_id == workflow.workspace_id))
            prices = {row.model: Price(row.input_per_mtok, row.output_per_mtok) for row in rows}
        self._prices_cache[workflow.workspace_id] = (time.monotonic(), prices)
        return prices


_FINAL_FIELDS = ("status", "error", "state", "cost_usd", "duration_ms", "finished_at", "evals", "evals_passed",
                 "evals_total")
# Store a run's end, unless a peer has failed it meanwhile (it took this process for gone).
_FINISH_RUN = (
    update(_RUNS)
    .where(_RUNS.c.id == bindparam("run_id"), _RUNS.c.status.in_(UNFINISHED))
    .values({name: bindparam(f"final_{name}") for name in _FINAL_FIELDS})
)


def _row(run: RunRecord) -> dict[str, Any]:
    return {name: getattr(run, name) for name in _COLUMNS}


def _finished_data(run: RunRecord) -> dict[str, Any]:
    return {"status": run.status, "error": run.error, "cost_usd": run.cost_usd, "duration_ms": run.duration_ms}


def _reason(exc: BaseException) -> str:
    """What the database (or whatever raised) said, without SQLAlchemy's statement and parameters."""
    cause = getattr(exc, "orig", None) or exc
    return f"{type(cause).__name__}: {str(cause).strip()}"


def _started_data(workflow: WorkflowSnapshot, input: dict[str, Any]) -> dict[str, Any]:
    return {"workflow_id": workflow.id, "workflow_version": workflow.version, "input": input}


def _score(checks: list[dict[str, Any]], run: RunRecord) -> dict[str, Any]:
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
