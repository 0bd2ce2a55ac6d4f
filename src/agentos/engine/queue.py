"""The run queue: arq on Redis, chosen by AGENTOS_QUEUE_URL (`redis://...`).

With a queue, an API process stores a run as `queued` and enqueues its id; an
`agentos worker` process (see `agentos.worker`) claims it (`queued` -> `running`, owned
by the worker) and executes it. A job carries the ids of the instant runs an API process
started together (see `engine.runner`), and its id is the first of them: each run is in
one job, enqueued once. A run's claim decides who executes it, so it executes once even
if its job ran twice.

Workers poll the queue every POLL_DELAY seconds, and are woken at once through Redis
pub/sub (`wake_channel`) when a run is queued: a queued run waits neither for a poll
nor for a busy loop of polls.

A job whose worker died before claiming its run is retried by arq (MAX_TRIES); a worker
that dies after claiming leaves its run to the liveness sweep (`agentos.instances`),
which fails it with a reason; arq's later retry then finds the run finished and does
nothing.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from typing import Any

from agentos.broker import BrokerError

EXECUTE_RUNS = "agentos.execute_runs"
# The job of one run, as API processes before batches queued it (still executed).
EXECUTE_RUN = "agentos.execute_run"
DEFAULT_QUEUE_NAME = "agentos:queue"
MAX_TRIES = 3
# A job's time limit, after which arq may hand it to another worker: longer than any run.
JOB_TIMEOUT = 24 * 3600
# How often an idle worker looks for queued runs (arq polls its queue), when no wake-up
# came: one lost while its pub/sub connection was down, say.
POLL_DELAY = 0.25


def queue_name() -> str:
    """AGENTOS_QUEUE_NAME, so that several AgentOS deployments can share one Redis."""
    return os.environ.get("AGENTOS_QUEUE_NAME") or DEFAULT_QUEUE_NAME


def wake_channel() -> str:
    """The Redis channel on which API processes wake the workers of their queue."""
    return queue_name() + ":queued"


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
    """Enqueues runs from any thread: arq jobs, each written in one round trip to Redis.

    A job is what arq's `enqueue_job` writes (the job under arq's key, serialized by arq,
    and its id in the queue's sorted set), sent in one MULTI/EXEC with the workers'
    wake-up, by a synchronous client on the calling thread. `enqueue_job` is asynchronous
    and first checks that no job has the id: from an API thread that cost a hop to an
    event loop and three round trips, about 0.5 ms of CPU per job against 0.07 ms now.
    The check is not needed: a job is named after its first run, just inserted (a primary
    key), and the writes do not overwrite anyway (NX)."""

    def __init__(self, url: str) -> None:
        import redis
        from arq.constants import expires_extra_ms, job_key_prefix
        from arq.jobs import serialize_job

        redis_settings(url)  # refuses what is not a Redis URL, or arq missing
        self._serialize_job = serialize_job
        self._job_key_prefix = job_key_prefix
        self._expires_ms = expires_extra_ms  # as enqueue_job: the job expires unless started within a day
        self._queue_name = queue_name()
        self._wake_channel = wake_channel()
        self._redis = redis.Redis.from_url(url, socket_timeout=10, socket_connect_timeout=5)
        try:
            self._redis.ping()
        except Exception as exc:
            self._redis.close()
            raise BrokerError(f"AGENTOS_QUEUE_URL: cannot reach Redis ({type(exc).__name__}: {exc})") from None

    def enqueue(self, run_ids: Sequence[str]) -> None:
        """Queue the runs `run_ids` for a worker, as one job, and wake the workers."""
        job_id = run_ids[0]
        now_ms = round(time.time() * 1000)
        job = self._serialize_job(EXECUTE_RUNS, (list(run_ids),), {}, None, now_ms)
        with self._redis.pipeline(transaction=True) as pipeline:
            pipeline.set(self._job_key_prefix + job_id, job, px=self._expires_ms, nx=True)
            pipeline.zadd(self._queue_name, {job_id: now_ms}, nx=True)
            pipeline.publish(self._wake_channel, job_id)
            pipeline.execute()

    def close(self) -> None:
        self._redis.close()
