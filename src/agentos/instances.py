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
from datetime import timedelta

from sqlalchemy import delete, or_, select, update

from agentos.db import Database
from agentos.ids import new_id
from agentos.models import Evaluation, Run, ServerInstance
from agentos.timestamps import utcnow

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
            gone = list(
                session.scalars(
                    select(ServerInstance.id).where(
                        or_(ServerInstance.label == self.label, ServerInstance.heartbeat_at < now - STALE)
                    )
                )
            )
            live = select(ServerInstance.id)
            if gone:
                live = live.where(ServerInstance.id.not_in(gone))
            orphaned = or_(Run.owner_id.is_(None), Run.owner_id.not_in(live))
            failed = session.execute(  # type: ignore[attr-defined]
                update(Run)
                .where(Run.status.in_(("queued", "running")), orphaned)
                .values(status="failed", error=INTERRUPTED, finished_at=now, evals=None)
                .execution_options(synchronize_session=False)
            ).rowcount
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
            session.add(ServerInstance(id=self.id, label=self.label, started_at=now, heartbeat_at=now))
        if failed:
            log.warning("marked %d interrupted run(s) failed", failed)
        return failed or 0

    def start_heartbeat(self) -> None:
        self._thread = threading.Thread(target=self._beat, name="agentos-heartbeat", daemon=True)
        self._thread.start()

    def _beat(self) -> None:
        while not self._stop.wait(HEARTBEAT):
            try:
                with self.db.write() as session:
                    session.execute(
                        update(ServerInstance).where(ServerInstance.id == self.id).values(heartbeat_at=utcnow())
                    )
            except Exception:
                log.exception("heartbeat failed")

    def stop(self) -> None:
        """Fail this process's unfinished runs and deregister."""
        self._stop.set()
        now = utcnow()
        with self.db.write() as session:
            session.execute(
                update(Run)
                .where(Run.owner_id == self.id, Run.status.in_(("queued", "running")))
                .values(status="failed", error=INTERRUPTED, finished_at=now)
            )
            session.execute(
                update(Evaluation)
                .where(Evaluation.owner_id == self.id, Evaluation.status == "running")
                .values(status="failed", error=INTERRUPTED, completed_at=now)
            )
            session.execute(delete(ServerInstance).where(ServerInstance.id == self.id))
