"""The run queue: arq on Redis, chosen by AGENTOS_QUEUE_URL (`redis://...`).

With a queue, an API process stores a run as `queued` and enqueues its id; an
`agentos worker` process (see `agentos.worker`) claims it (`queued` -> `running`, owned
by the worker) and executes it. The job id is the run id, so a run is enqueued once.

A job whose worker died before claiming its run is retried by arq (MAX_TRIES); a worker
that dies after claiming leaves its run to the liveness sweep (`agentos.instances`),
which fails it with a reason; arq's later retry then finds the run finished and does
nothing.
"""

from __future__ import annotations

import os
from typing import Any

from agentos.broker import BrokerError

EXECUTE_RUN = "agentos.execute_run"
DEFAULT_QUEUE_NAME = "agentos:queue"
MAX_TRIES = 3
# A job's time limit, after which arq may hand it to another worker: longer than any run.
JOB_TIMEOUT = 24 * 3600


def queue_name() -> str:
    """AGENTOS_QUEUE_NAME, so that several AgentOS deployments can share one Redis."""
    return os.environ.get("AGENTOS_QUEUE_NAME") or DEFAULT_QUEUE_NAME


def redis_settings(url: str) -> Any:
    try:
        from arq.connections import RedisSettings
    except ImportError:
        raise BrokerError(
            "AGENTOS_QUEUE_URL is set but arq is not installed: pip install 'ancha[agentos-redis]'"
        ) from None
    if url.split("://", 1)[0].lower() not in ("redis", "rediss", "unix"):
        raise BrokerError(f"AGENTOS_QUEUE_URL must be a Redis URL (redis://host:6379/0), not {url.split('://', 1)[0]!r}")
    return RedisSettings.from_dsn(url)


class RunQueue:
    """Enqueues runs from any thread, through a private event loop that holds the arq pool."""

    def __init__(self, url: str) -> None:
        from anyio.from_thread import start_blocking_portal
        from arq.connections import create_pool

        self.settings = redis_settings(url)
        self._portal_context = start_blocking_portal()
        self._portal = self._portal_context.__enter__()
        try:
            self._pool = self._portal.call(self._connect, create_pool)
        except Exception as exc:
            self._portal_context.__exit__(None, None, None)
            raise BrokerError(f"AGENTOS_QUEUE_URL: cannot reach Redis ({type(exc).__name__}: {exc})") from None

    async def _connect(self, create_pool: Any) -> Any:
        return await create_pool(self.settings, default_queue_name=queue_name())

    def enqueue(self, run_id: str) -> None:
        self._portal.call(self._enqueue, run_id)

    async def _enqueue(self, run_id: str) -> None:
        await self._pool.enqueue_job(EXECUTE_RUN, run_id, _job_id=run_id)

    def close(self) -> None:
        try:
            self._portal.call(self._pool.aclose)
        finally:
            self._portal_context.__exit__(None, None, None)
