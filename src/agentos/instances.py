"""Server instances, so that no run stays `running` after its process is gone.

Each API process registers itself (a label such as `host:port`) and beats every
HEARTBEAT seconds. On start, a process fails the queued/running runs (and running
evaluations) of every instance that is gone: one with its own label (the process it
replaces after a restart), one whose heartbeat is older than STALE, or none at all.
A process that stops cleanly fails its own unfinished runs on the way out. Several
processes can share one PostgreSQL database without failing each other's live runs.
"""

from __future__ import annotations

import logging
import threading
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import delete, func, insert, or_, select, update
from sqlalchemy.orm import Session

from agentos.db import Database
from agentos.ids import new_id
from agentos.models import Evaluation, Run, RunEvent, ServerInstance
from agentos.timestamps import iso, utcnow

log = logging.getLogger("agentos.instances")

HEARTBEAT = 10.0
STALE = timedelta(seconds=45)
INTERRUPTED = "interrupted by a server restart"


class Instance:
    def __init__(self, db: Database, label: str) -> None:
        self.db = db
        self.label = label
        self.id = new_id()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def register(self) -> int:
        """Record this process and fail what gone processes left unfinished; returns that count."""
        now = utcnow()
        with self.db.write() as session:
            failed = _sweep(
                session, or_(ServerInstance.label == self.label, ServerInstance.heartbeat_at < now - STALE), now
            )
            session.add(ServerInstance(id=self.id, label=self.label, started_at=now, heartbeat_at=now))
        if failed:
            log.warning("marked %d interrupted run(s) failed", failed)
        return failed

    def start_heartbeat(self) -> None:
        self._thread = threading.Thread(target=self._beat, name="agentos-heartbeat", daemon=True)
        self._thread.start()

    def _beat(self) -> None:
        while not self._stop.wait(HEARTBEAT):
            try:
                now = utcnow()
                with self.db.write() as session:
                    session.execute(
                        update(ServerInstance).where(ServerInstance.id == self.id).values(heartbeat_at=now)
                    )
                    # A peer that crashed without a restart: its runs end here.
                    _sweep(session, ServerInstance.heartbeat_at < now - STALE, now)
            except Exception:
                log.exception("heartbeat failed")

    def stop(self) -> None:
        """Fail this process's unfinished runs and deregister."""
        self._stop.set()
        now = utcnow()
        with self.db.write() as session:
            _fail_runs(session, [Run.owner_id == self.id], now)
            session.execute(
                update(Evaluation)
                .where(Evaluation.owner_id == self.id, Evaluation.status == "running")
                .values(status="failed", error=INTERRUPTED, completed_at=now)
            )
            session.execute(delete(ServerInstance).where(ServerInstance.id == self.id))


def _sweep(session: Session, gone_when: Any, now: datetime) -> int:
    """Fail the unfinished runs and evaluations of instances matching `gone_when` (and of no
    live instance at all), then forget those instances."""
    gone = list(session.scalars(select(ServerInstance.id).where(gone_when)))
    live = select(ServerInstance.id)
    if gone:
        live = live.where(ServerInstance.id.not_in(gone))
    failed = _fail_runs(session, [or_(Run.owner_id.is_(None), Run.owner_id.not_in(live))], now)
    session.execute(
        update(Evaluation)
        .where(
            Evaluation.status == "running",
            or_(Evaluation.owner_id.is_(None), Evaluation.owner_id.not_in(live)),
        )
        .values(status="failed", error=INTERRUPTED, completed_at=now)
        .execution_options(synchronize_session=False)
    )
    if gone:
        session.execute(delete(ServerInstance).where(ServerInstance.id.in_(gone)))
    return failed


def _fail_runs(session: Session, where: list[Any], now: datetime) -> int:
    """Fail unfinished runs matching `where`, closing each event stream with `run_finished`."""
    ids = list(session.scalars(select(Run.id).where(Run.status.in_(("queued", "running")), *where)))
    if not ids:
        return 0
    session.execute(
        update(Run)
        .where(Run.id.in_(ids), Run.status.in_(("queued", "running")))
        .values(status="failed", error=INTERRUPTED, finished_at=now, evals=None)
        .execution_options(synchronize_session=False)
    )
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
                         "status": "failed", "error": INTERRUPTED, "cost_usd": 0.0, "duration_ms": None},
            }
            for run_id in ids
        ],
    )
    return len(ids)
