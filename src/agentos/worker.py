"""`agentos worker`: an arq worker that executes the runs API processes queue.

Each worker is an instance like an API process (see agentos.instances): the runs it
claims are owned by it, it publishes their events through the broker, and when it is
killed its runs are failed by the others with a reason. A worker stopped by SIGTERM or
Ctrl-C fails its unfinished runs itself ("interrupted: the server stopped").
"""

from __future__ import annotations

import asyncio
import os
import socket
from typing import Any

from agentos.broker import open_broker
from agentos.db import Database
from agentos.engine.providers import Providers
from agentos.engine.queue import EXECUTE_RUN, JOB_TIMEOUT, MAX_TRIES, queue_name, redis_settings
from agentos.engine.runner import Runner
from agentos.engine.streams import RunStreams
from agentos.instances import Instance


def run_worker(database_url: str, queue_url: str, broker_url: str | None, concurrency: int) -> None:
    """Execute queued runs, `concurrency` at a time, until SIGTERM or SIGINT."""
    from arq.worker import Worker, func

    settings = redis_settings(queue_url)
    # Fail fast on bad URLs, before arq starts its loop.
    db = Database(database_url)
    broker = open_broker(broker_url or os.environ.get("AGENTOS_BROKER_URL"), db.url)

    async def startup(ctx: dict[str, Any]) -> None:
        instance = Instance(db, f"worker:{socket.gethostname()}:{os.getpid()}", broker)
        await asyncio.to_thread(instance.register)
        instance.start_heartbeat()
        ctx["instance"] = instance
        ctx["runner"] = Runner(db, RunStreams(), Providers(), instance.id, broker=broker, threads=concurrency)

    async def shutdown(ctx: dict[str, Any]) -> None:
        runner: Runner | None = ctx.get("runner")
        if runner is not None:
            await asyncio.to_thread(runner.shutdown)
            runner.providers.close()
        if "instance" in ctx:
            await asyncio.to_thread(ctx["instance"].stop)
        broker.close()
        db.dispose()

    worker = Worker(
        functions=[func(execute_run, name=EXECUTE_RUN, max_tries=MAX_TRIES, timeout=JOB_TIMEOUT)],
        queue_name=queue_name(),
        redis_settings=settings,
        on_startup=startup,
        on_shutdown=shutdown,
        max_jobs=concurrency,
        keep_result=0,
        poll_delay=0.01,  # how long a queued run may wait for an idle worker to look
    )
    worker.run()


async def execute_run(ctx: dict[str, Any], run_id: str) -> None:
    runner: Runner = ctx["runner"]
    await asyncio.get_running_loop().run_in_executor(runner.pool, runner.execute_stored, run_id)
