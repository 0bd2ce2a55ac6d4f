"""Runs: create the row, walk the graph, score the checks, persist events, publish them.

A run costs two write transactions: its insert (with `run_started`) and its finish
(state, metrics, evals and the remaining events). Events are also flushed before a node
that waits (a model or HTTP call) and every FLUSH_EVERY seconds, so a subscriber in
another API process follows the run live; subscribers in this process get every event
at once from `RunStreams`.

With a queue, a run is inserted as `queued` and handed to the workers (`agentos.worker`).
Instant runs that request threads start together are inserted together and queued as
one job (`_Handoff`). A worker claims the runs of the jobs it starts together in one
transaction, and stores the ends of the instant ones among them together in another
(with their `run_started`: an instant run is stored once more, not three times). The
API process answers a waited run with the run its final announcement carries.

No run is left `running` while the process lives: the last events (`run_finished`,
`run_evaluated`) reach live subscribers only once they are stored; when that final write
fails, the run is stored as failed with the database's reason instead, and its stream
ends either way. `stop()` (the server is shutting down) fails every unfinished run.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, Table, bindparam, insert, or_, select, update

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
# The most runs inserted together and queued as one job.
MAX_HANDOFF = 64
# The most workflow versions a worker keeps (see Runner._version).
VERSIONS_KEPT = 1024
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
    environment: str | None = None
    """The environment the run runs in (see `agentos.deployments.run_snapshot`)."""

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

    def __init__(self, runner: Runner, run_id: str, announces_run: bool = False) -> None:
        self.runner = runner
        self.run_id = run_id
        # Whether the final announcement carries the run: for the API process that queued it
        # and waits for it (a run this process started is answered from memory).
        self.announces_run = announces_run
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

    def flush(self, connection: Connection, final: bool = False, run: RunRecord | None = None) -> Message | None:
        """Store the pending events; announce them to the broker (inside the transaction when
        it can), a final message with the `run` being stored. Returns the message to publish
        once the transaction committed."""
        message = None
        if self.pending:
            connection.execute(_INSERT_EVENTS, self.rows())
            message = self.message(final, run)
            self.runner.broker.publish_in(connection, message)
            self.pending = []
        self.last_flush = time.monotonic()
        return message

    def rows(self) -> list[dict[str, Any]]:
        """The pending events as `run_events` rows."""
        return [{"run_id": self.run_id, "seq": e["seq"], "type": e["type"], "data": e} for e in self.pending]

    def message(self, final: bool, run: RunRecord | None = None) -> Message:
        """The announcement of the pending events."""
        return Message(self.run_id, self.pending[-1]["seq"], final, self.pending,
                       run.to_dict() if final and run is not None and self.announces_run else None)

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


@dataclass
class ClaimedRun:
    """A queued run this process has claimed (see `Runner.claim_stored`), to execute."""

    run: RunRecord
    workflow: WorkflowSnapshot
    recorder: _Recorder
    # Registered for stop() (False: the server is stopping, the run fails as interrupted).
    tracked: bool = False


class _NotQueued(Exception):
    """The run is stored as queued, but the queue refused it (`error`)."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


class _Handoff:
    """Inserts queued runs and hands them to the queue, in batches (group commit).

    A thread with a run to queue leads a batch when none is under way: it takes every run
    waiting, inserts them in one statement and queues them as one job, then hands the lead
    to the first thread that queued a run meanwhile. So under load one INSERT and one job
    serve many runs (a worker pays arq's round trips per job, not per run), and a run
    alone is queued at once. Only instant runs go together: a run that waits on the
    network gets a job of its own, as a worker gives it a thread of its own.

    A run that cannot be inserted raises its error in its own thread (the others of its
    batch are inserted alone); one the queue refuses raises `_NotQueued`.
    """

    def __init__(self, runner: Runner, queue: RunQueue) -> None:
        self.runner = runner
        self.queue = queue
        self._lock = threading.Lock()
        self._waiting: list[_Handover] = []
        self._leading = False

    def hand_over(self, run: RunRecord, together: bool = True) -> None:
        if not together:
            self._insert_and_queue([_Handover(run)])[0].outcome()
            return
        handover = _Handover(run)
        with self._lock:
            self._waiting.append(handover)
            leads = not self._leading
            self._leading = True
        if not leads:
            handover.settled.wait()
            leads = handover.leads
        if leads:
            self._lead()
        handover.outcome()

    def _lead(self) -> None:
        with self._lock:
            batch, self._waiting = self._waiting[:MAX_HANDOFF], self._waiting[MAX_HANDOFF:]
        try:
            self._insert_and_queue(batch)
        except Exception as exc:  # a bug: say so in every thread of the batch, none hangs
            log.exception("handing %d run(s) to the queue failed", len(batch))
            for handover in batch:
                handover.error = handover.error or exc
        finally:
            with self._lock:
                successor = self._waiting[0] if self._waiting else None
                self._leading = successor is not None
            for handover in batch:
                handover.settled.set()
            if successor is not None:
                successor.leads = True
                successor.settled.set()

    def _insert_and_queue(self, batch: list[_Handover]) -> list[_Handover]:
        try:
            with self.runner.db.write_connection() as connection:
                connection.execute(_INSERT_RUN, [_row(h.run) for h in batch])
            inserted = batch
        except Exception as exc:
            if len(batch) == 1:
                batch[0].error = exc
                return batch
            inserted = []
            for handover in batch:  # one bad run must not fail the others
                try:
                    with self.runner.db.write_connection() as connection:
                        connection.execute(_INSERT_RUN, _row(handover.run))
                    inserted.append(handover)
                except Exception as alone:
                    handover.error = alone
        if inserted:
            try:
                self.queue.enqueue([h.run.id for h in inserted])
            except Exception as exc:
                for handover in inserted:
                    handover.error = _NotQueued(exc)
        return batch


class _Handover:
    """A run a thread hands to `_Handoff`, and what became of it."""

    __slots__ = ("error", "leads", "run", "settled")

    def __init__(self, run: RunRecord) -> None:
        self.run = run
        self.settled = threading.Event()
        self.leads = False
        self.error: BaseException | None = None

    def outcome(self) -> None:
        if self.error is not None:
            raise self.error


class _NotAllFinished(Exception):
    """A run of a batch was failed by a peer meanwhile: the batch is stored run by run."""


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
        self._handoff = _Handoff(self, queue) if queue is not None else None
        self.pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="agentos-run")
        self._prices_cache: dict[str, tuple[float, dict[str, Price]]] = {}
        # Workflow versions a worker has executed runs of: (workflow id, version) -> (nodes, checks).
        self._versions: dict[tuple[str, int], tuple[list[Any], list[Any]]] = {}
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
    def transaction(
        self, recorder: _Recorder, final: bool = False, run: RunRecord | None = None
    ) -> Iterator[Connection]:
        """A write transaction that also stores the recorder's pending events and announces them
        (a final announcement carries the `run` as stored)."""
        with self.db.write_connection() as connection:
            yield connection
            message = recorder.flush(connection, final, run)
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
            environment=workflow.environment,
        )
        if self.queue is not None:
            return self._start_queued(run, wait, together=not workflow.waits)
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

    def _start_queued(self, run: RunRecord, wait: bool, together: bool) -> dict[str, Any]:
        """Store the run as queued and hand it to the queue (`together`: in a job with the
        instant runs other threads start meanwhile); with `wait`, answer once a worker has
        finished it: with the run its final announcement carries, else as read from the
        database (where it is looked for every resync_seconds too)."""
        assert self._handoff is not None
        run.status, run.started_at = "queued", None
        with self.broker.subscribe(run.id) as subscription:
            try:
                self._handoff.hand_over(run, together)
            except _NotQueued as failure:
                log.error("run %s could not be queued", run.id, exc_info=failure.error)
                self.streams.open(run.id)
                self._finish(run, _Recorder(self, run.id), True,
                             f"the run could not be queued: {_reason(failure.error)}")
                return run.to_dict()
            if not wait:
                return run.to_dict()
            # Subscribed before the run was queued: its end cannot come unannounced, unless
            # the broker lost the message (then the database tells).
            stored: RunRecord | None = run
            while not self._stopped:
                if subscription.finished.wait(self.broker.resync_seconds):
                    final = subscription.final
                    if final is not None and final.run is not None:
                        return final.run
                stored = self._read(run.id)
                if stored is None or stored.status not in UNFINISHED:
                    break
        return (stored or run).to_dict()

    def _read(self, run_id: str) -> RunRecord | None:
        with self.db.read_connection() as connection:
            row = connection.execute(_SELECT_RUN, {"run_id": run_id}).mappings().one_or_none()
        return RunRecord(**row) if row is not None else None

    def claim_stored(self, run_ids: Sequence[str]) -> list[ClaimedRun]:
        """Claim queued runs (in `agentos worker`) for this process: `queued` -> `running`, in
        one transaction that also stores and announces the `run_started` of those whose
        workflow waits on the network or a timer (an instant run's is stored with its end).
        A run no longer queued (claimed already, or failed meanwhile) is left alone; one
        whose workflow was deleted is failed. Returns the runs to execute, with
        `execute_claimed`.

        When that transaction fails, each run is claimed alone, as before batches: a run
        whose `run_started` cannot be stored then fails with the reason."""
        if not run_ids:
            return []
        try:
            claimed, deleted = self._claim_together(run_ids)
        except Exception:
            log.exception("claiming %d run(s) in one transaction failed; claiming each alone", len(run_ids))
            return [c for run_id in run_ids if (c := self._claim_alone(run_id)) is not None]
        for run, recorder in deleted:
            self._finish(run, recorder, True, "the workflow was deleted before the run started")
        for c in claimed:
            c.tracked = self._track(c.run, c.recorder, True)
        return claimed

    def _claim_together(self, run_ids: Sequence[str]) -> tuple[list[ClaimedRun], list[tuple[RunRecord, _Recorder]]]:
        claimed: list[ClaimedRun] = []
        deleted: list[tuple[RunRecord, _Recorder]] = []
        messages: list[Message] = []
        try:
            self._claim_in_one_transaction(run_ids, claimed, deleted, messages)
        except Exception:
            for run_id in [c.run.id for c in claimed] + [run.id for run, _ in deleted]:
                self.streams.close(run_id)
            raise
        for c in claimed:
            if c.workflow.waits:
                c.recorder.pending = []
                c.recorder.last_flush = time.monotonic()
        self.broker.publish_all_after(messages)
        return claimed, deleted

    def _version(self, connection: Connection, workflow_id: str, version: int) -> tuple[list[Any], list[Any]]:
        """A workflow version's nodes and checks: read once, then kept (a version never changes)."""
        key = (workflow_id, version)
        found = self._versions.get(key)
        if found is None:
            row = connection.execute(_SELECT_VERSION, {"workflow_id": workflow_id, "version": version}).one()
            if len(self._versions) >= VERSIONS_KEPT:
                self._versions.clear()
            found = self._versions[key] = (row.nodes, row.checks)
        return found

    def _claim_in_one_transaction(
        self,
        run_ids: Sequence[str],
        claimed: list[ClaimedRun],
        deleted: list[tuple[RunRecord, _Recorder]],
        messages: list[Message],
    ) -> None:
        params = {"run_ids": sorted(run_ids), "claimed_at": utcnow(), "claimed_by": self.owner_id}
        with self.db.write_connection() as connection:
            rows = connection.execute(_CLAIM_RUNS, params).mappings().all()
            missing = set(run_ids) - {row["id"] for row in rows}
            if missing:  # claimed already, failed meanwhile, or their workflow was deleted while they waited
                params["run_ids"] = sorted(missing)
                for row in connection.execute(_CLAIM_ORPHANS, params).mappings():
                    run = RunRecord(**row)
                    self.streams.open(run.id)
                    deleted.append((run, _Recorder(self, run.id, announces_run=True)))
            events: list[dict[str, Any]] = []
            for row in rows:
                run = RunRecord(**row)
                recorder = _Recorder(self, run.id, announces_run=True)
                self.streams.open(run.id)
                nodes, checks = self._version(connection, run.workflow_id, run.workflow_version)
                workflow = WorkflowSnapshot(run.workspace_id, run.workflow_id, run.workflow_version,
                                            list(nodes), list(checks))
                recorder.emit("run_started", _started_data(workflow, run.input))
                claimed.append(ClaimedRun(run, workflow, recorder))
                # An instant run's run_started is stored with its end, a moment later; one
                # that waits shows it has started before its first wait.
                if workflow.waits:
                    events.extend(recorder.rows())
                    messages.append(recorder.message(False))
            if events:
                connection.execute(_INSERT_EVENTS, events)
                self.broker.publish_all_in(connection, messages)

    def _claim_alone(self, run_id: str) -> ClaimedRun | None:
        """Claim one queued run, then store its `run_started` (failing the run if that cannot be stored)."""
        now = utcnow()
        with self.db.write_connection() as connection:
            claimed = connection.execute(
                update(_RUNS)
                .where(_RUNS.c.id == run_id, _RUNS.c.status == "queued")
                .values(status="running", started_at=now, owner_id=self.owner_id)
            ).rowcount
            if not claimed:
                return None
            row = connection.execute(select(_RUNS).where(_RUNS.c.id == run_id)).mappings().one()
            version = connection.execute(
                select(WorkflowVersion.nodes, WorkflowVersion.checks).where(
                    WorkflowVersion.workflow_id == row["workflow_id"], WorkflowVersion.version == row["workflow_version"]
                )
            ).one_or_none()
        run = RunRecord(**row)
        recorder = _Recorder(self, run.id, announces_run=True)
        self.streams.open(run.id)
        if version is None:  # the workflow was deleted while the run waited
            self._finish(run, recorder, True, "the workflow was deleted before the run started")
            return None
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
            return None
        return ClaimedRun(run, workflow, recorder, tracked)

    def execute_claimed(self, claimed: Sequence[ClaimedRun]) -> None:
        """Execute claimed runs one after the other; the ends of those that finished are
        stored together, in one transaction (each alone if that fails)."""
        ended = [c for c in claimed if self._run_nodes(c.run, c.workflow, c.recorder, c.tracked)]
        if len(ended) > 1:
            try:
                self._store_finals(ended)
            except Exception:
                log.warning("storing %d runs' ends together failed; storing each alone", len(ended), exc_info=True)
            else:
                for c in ended:
                    c.recorder.release()
                    self.streams.close(c.run.id)
                return
        for c in ended:
            self._store_end(c.run, c.recorder, True)

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
        if self._run_nodes(run, workflow, recorder, tracked):
            self._store_end(run, recorder, inserted)

    def _run_nodes(self, run: RunRecord, workflow: WorkflowSnapshot, recorder: _Recorder, tracked: bool) -> bool:
        """Walk the graph and score the run; its last events are held until its end is stored.
        False when stop() has finished the run meanwhile (nothing is left to store)."""
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
            return False  # stop() has failed and stored it meanwhile
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
        return True

    def _store_end(self, run: RunRecord, recorder: _Recorder, inserted: bool) -> None:
        """Store the end of a run `_run_nodes` finished, then publish its last events and end
        its stream; if that write fails, the run is stored as failed with the reason."""
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
        with self.transaction(recorder, final=True, run=run) as connection:
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

    def _store_finals(self, ended: list[ClaimedRun]) -> None:
        """Store the ends of several claimed runs in one transaction, as `_store_final` does
        each. Raises, storing nothing, when one cannot be stored or a peer has failed one
        meanwhile: the caller then stores each alone."""
        messages = [c.recorder.message(True, c.run) for c in ended if c.recorder.pending]
        with self.db.write_connection() as connection:
            finishes = connection.execute(
                _FINISH_RUN,
                [{"run_id": c.run.id, **{f"final_{k}": getattr(c.run, k) for k in _FINAL_FIELDS}} for c in ended],
            ).rowcount
            if finishes != len(ended):
                raise _NotAllFinished(f"{len(ended) - finishes} of the runs were finished by a peer meanwhile")
            add_finished(connection, [_row(c.run) for c in ended])
            connection.execute(_INSERT_EVENTS, [row for c in ended for row in c.recorder.rows()])
            self.broker.publish_all_in(connection, messages)
        now = time.monotonic()
        for c in ended:
            c.recorder.pending = []
            c.recorder.last_flush = now
        self.broker.publish_all_after(messages)

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
_VERSIONS: Table = WorkflowVersion.__table__  # type: ignore[assignment]
# Claim queued runs for a worker whose workflow version still exists (deleting a workflow
# deletes its versions); the runs claimed are returned.
_CLAIM_RUNS = (
    update(_RUNS)
    .where(
        _RUNS.c.id.in_(bindparam("run_ids", expanding=True)),
        _RUNS.c.status == "queued",
        select(_VERSIONS.c.version)
        .where(_VERSIONS.c.workflow_id == _RUNS.c.workflow_id, _VERSIONS.c.version == _RUNS.c.workflow_version)
        .exists(),
    )
    .values(status="running", started_at=bindparam("claimed_at"), owner_id=bindparam("claimed_by"))
    .returning(*_RUNS.c)
)
# Claim queued runs whatever their workflow: after _CLAIM_RUNS, those whose workflow is gone.
_CLAIM_ORPHANS = (
    update(_RUNS)
    .where(_RUNS.c.id.in_(bindparam("run_ids", expanding=True)), _RUNS.c.status == "queued")
    .values(status="running", started_at=bindparam("claimed_at"), owner_id=bindparam("claimed_by"))
    .returning(*_RUNS.c)
)
_SELECT_RUN = select(_RUNS).where(_RUNS.c.id == bindparam("run_id"))
_SELECT_VERSION = select(WorkflowVersion.nodes, WorkflowVersion.checks).where(
    WorkflowVersion.workflow_id == bindparam("workflow_id"), WorkflowVersion.version == bindparam("version")
)
# Store a run's end, unless a peer has failed it meanwhile (it took this process for gone).
_FINISH_RUN = (
    update(_RUNS)
    # Not status IN (...): an expanding parameter, which executemany (a batch) refuses.
    .where(_RUNS.c.id == bindparam("run_id"), or_(*(_RUNS.c.status == status for status in UNFINISHED)))
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
