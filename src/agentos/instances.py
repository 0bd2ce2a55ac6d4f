"""Server instances, so that no run stays `running` after its process is gone.

Each API process registers itself (a label such as `host:port`) and beats every
HEARTBEAT seconds. On start, a process fails the queued/running runs (and running
evaluations) of every instance that is gone: one with its own label (the process it
replaces after a restart), one whose heartbeat is older than STALE, or none at all.
A process that stops cleanly fails its own unfinished runs on the way out. Several
processes can share one PostgreSQL database without failing each other's live runs.

On PostgreSQL a process also holds a session advisory lock for as long as it lives, on
a connection of its own. The kernel closes that connection when the process dies, even
by SIGKILL, and PostgreSQL releases the lock: every LIVENESS seconds each process fails
the unfinished runs of instances whose lock is gone, so a killed worker's run is failed
within about a second, not after STALE.
"""

from __future__ import annotations

import logging
import threading
import time
from datetime import datetime, timedelta
from typing import Any, cast

import psycopg
from sqlalchemy import CursorResult, delete, func, insert, or_, select, text, update
from sqlalchemy.orm import Session

from agentos.broker import Broker, Message
from agentos.db import Database
from agentos.ids import new_id
from agentos.models import Evaluation, Run, RunEvent, ServerInstance
from agentos.rollups import add_finished
from agentos.timestamps import iso, utcnow

log = logging.getLogger("agentos.instances")

HEARTBEAT = 10.0
STALE = timedelta(seconds=45)
LIVENESS = 1.0
INTERRUPTED = "interrupted by a server restart"
DIED = "interrupted: the process running it stopped unexpectedly"
# The advisory locks of live instances: (LOCK_CLASS, a number from the instance id).
LOCK_CLASS = 0x41474F53


class Instance:
    def __init__(self, db: Database, label: str, broker: Broker | None = None) -> None:
        self.db = db
        self.label = label
        self.id = new_id()
        self.broker = broker
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock_connection: psycopg.Connection | None = None

    def register(self) -> int:
        """Record this process and fail what gone processes left unfinished; returns that count."""
        if not self.db.is_sqlite:
            # Held before the row exists, so no peer ever sees this instance without its lock.
            self._lock()
        now = utcnow()
        with self.db.write() as session:
            failed = _sweep(
                session, or_(ServerInstance.label == self.label, ServerInstance.heartbeat_at < now - STALE), now
            )
            session.add(ServerInstance(id=self.id, label=self.label, started_at=now, heartbeat_at=now))
        self._announce(failed)
        if failed:
            log.warning("marked %d interrupted run(s) failed", len(failed))
        return len(failed)

    def _lock(self) -> None:
        self._lock_connection = psycopg.connect(_conninfo(self.db.url), autocommit=True, connect_timeout=10)
        self._lock_connection.execute("SELECT pg_advisory_lock(%s, %s)", (LOCK_CLASS, _lock_key(self.id)))

    def _keep_lock(self) -> None:
        """Take the lock again if its connection was lost (a database restart): until then the
        peers take this process for gone, fail its runs and forget it, so it registers again."""
        assert self._lock_connection is not None
        try:
            self._lock_connection.execute("SELECT 1")
            return
        except psycopg.Error:
            self._lock_connection.close()
        self._lock()
        self._register_again()

    def _register_again(self) -> None:
        now = utcnow()
        with self.db.write() as session:
            if session.get(ServerInstance, self.id) is None:
                session.add(ServerInstance(id=self.id, label=self.label, started_at=now, heartbeat_at=now))
                log.warning("registered again after losing the database connection")

    def start_heartbeat(self) -> None:
        self._thread = threading.Thread(target=self._beat, name="agentos-heartbeat", daemon=True)
        self._thread.start()

    def _beat(self) -> None:
        last_beat = time.monotonic()
        every = LIVENESS if self._lock_connection is not None else HEARTBEAT
        while not self._stop.wait(every):
            try:
                if self._lock_connection is not None:
                    self._keep_lock()
                    self._sweep_dead()
                if time.monotonic() - last_beat < HEARTBEAT:
                    continue
                last_beat = time.monotonic()
                now = utcnow()
                with self.db.write() as session:
                    beat = cast(CursorResult[Any], session.execute(
                        update(ServerInstance).where(ServerInstance.id == self.id).values(heartbeat_at=now)
                    ))
                    if not beat.rowcount:  # a peer took this process for gone: be seen again
                        session.add(ServerInstance(id=self.id, label=self.label, started_at=now, heartbeat_at=now))
                    # A peer that crashed without a restart: its runs end here.
                    failed = _sweep(session, ServerInstance.heartbeat_at < now - STALE, now)
                self._announce(failed)
            except Exception:
                log.exception("heartbeat failed")

    def _sweep_dead(self) -> None:
        """Fail the runs of instances whose advisory lock is gone (their process died)."""
        with self.db.read() as session:
            # Instances first: one registered after this read took its lock before its row
            # existed, so every instance read here already holds its lock if it lives.
            instances = list(session.scalars(select(ServerInstance.id)))
            held = set(session.scalars(text(
                "SELECT objid::bigint FROM pg_locks WHERE locktype = 'advisory' AND classid = :c"
                " AND objsubid = 2 AND granted"
                " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
            ), {"c": LOCK_CLASS}))
        dead = [i for i in instances if i != self.id and _lock_key(i) not in held]
        if not dead:
            return
        with self.db.write() as session:
            failed = _sweep(session, ServerInstance.id.in_(dead), utcnow(), DIED)
        self._announce(failed)
        if failed:
            log.warning("marked %d run(s) of a stopped process failed", len(failed))

    def _announce(self, failed: list[tuple[str, int]]) -> None:
        """Tell followers in other processes that these runs ended (their events are stored)."""
        if self.broker is not None:
            for run_id, seq in failed:
                self.broker.send(Message(run_id, seq, True, None))

    def stop(self) -> None:
        """Fail this process's unfinished runs and deregister."""
        self._stop.set()
        now = utcnow()
        with self.db.write() as session:
            failed = _fail_runs(session, [Run.owner_id == self.id], now)
            session.execute(
                update(Evaluation)
                .where(Evaluation.owner_id == self.id, Evaluation.status == "running")
                .values(status="failed", error=INTERRUPTED, completed_at=now)
            )
            session.execute(delete(ServerInstance).where(ServerInstance.id == self.id))
        self._announce(failed)
        if self._lock_connection is not None:
            self._lock_connection.close()
            self._lock_connection = None


def _conninfo(url: str) -> str:
    return "postgresql://" + url.split("://", 1)[1]


def _lock_key(instance_id: str) -> int:
    return int(instance_id[:8], 16) & 0x7FFFFFFF if len(instance_id) >= 8 else 0


def _sweep(session: Session, gone_when: Any, now: datetime, error: str = INTERRUPTED) -> list[tuple[str, int]]:
    """Fail the unfinished runs and evaluations of instances matching `gone_when` (and of no
    live instance at all), then forget those instances."""
    gone = list(session.scalars(select(ServerInstance.id).where(gone_when)))
    live = select(ServerInstance.id)
    if gone:
        live = live.where(ServerInstance.id.not_in(gone))
    failed = _fail_runs(session, [or_(Run.owner_id.is_(None), Run.owner_id.not_in(live))], now, error)
    session.execute(
        update(Evaluation)
        .where(
            Evaluation.status == "running",
            or_(Evaluation.owner_id.is_(None), Evaluation.owner_id.not_in(live)),
        )
        .values(status="failed", error=error, completed_at=now)
        .execution_options(synchronize_session=False)
    )
    if gone:
        session.execute(delete(ServerInstance).where(ServerInstance.id.in_(gone)))
    return failed


def _fail_runs(
    session: Session, where: list[Any], now: datetime, error: str = INTERRUPTED
) -> list[tuple[str, int]]:
    """Fail unfinished runs matching `where`, closing each event stream with `run_finished`;
    returns each run's id and the seq of that last event."""
    unfinished = session.execute(
        select(Run.id, Run.workspace_id, Run.created_at, Run.cost_usd)
        .where(Run.status.in_(("queued", "running")), *where)
        .with_for_update()
    ).all()
    if not unfinished:
        return []
    ids = [row.id for row in unfinished]
    session.execute(
        update(Run)
        .where(Run.id.in_(ids), Run.status.in_(("queued", "running")))
        .values(status="failed", error=error, finished_at=now, evals=None)
        .execution_options(synchronize_session=False)
    )
    add_finished(session.connection(), [
        {"id": row.id, "workspace_id": row.workspace_id, "created_at": row.created_at, "status": "failed",
         "cost_usd": row.cost_usd, "evals_passed": None, "evals_total": None}
        for row in unfinished
    ])
    last: dict[str, int] = {
        run_id: seq
        for run_id, seq in session.execute(
            select(RunEvent.run_id, func.max(RunEvent.seq)).where(RunEvent.run_id.in_(ids)).group_by(RunEvent.run_id)
        )
    }
    at = iso(now)
    session.execute(
        insert(RunEvent),
        [
            {
                "run_id": run_id,
                "seq": last.get(run_id, 0) + 1,
                "type": "run_finished",
                "data": {"type": "run_finished", "run_id": run_id, "at": at, "seq": last.get(run_id, 0) + 1,
                         "status": "failed", "error": error, "cost_usd": 0.0, "duration_ms": None},
            }
            for run_id in ids
        ],
    )
    return [(run_id, last.get(run_id, 0) + 1) for run_id in ids]
