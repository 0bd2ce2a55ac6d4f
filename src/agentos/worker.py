"""`agentos worker`: an arq worker that executes the runs API processes queue.

Each worker is an instance like an API process (see agentos.instances): the runs it
claims are owned by it, it publishes their events through the broker, and when it is
killed its runs are failed by the others with a reason. A worker stopped by SIGTERM or
Ctrl-C fails its unfinished runs itself ("interrupted: the server stopped").

Each arq job carries the runs an API process queued together (see
`agentos.engine.queue`). Between its polls of the queue the worker waits for a wake-up on
the queue's pub/sub channel, so a queued run starts at once rather than at the next poll.
The runs of the jobs arq starts while the worker is busy claiming are claimed together,
in one transaction (`RunBatches`), and the instant runs among them (no node waits on the
network or a timer) are executed one after the other in one thread and their ends stored
together: under load a run costs a share of two transactions instead of three of its own.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from collections.abc import Sequence
from typing import Any

from agentos.broker import open_broker
from agentos.db import Database
from agentos.engine.providers import Providers
from agentos.engine.queue import (
    EXECUTE_RUN,
    EXECUTE_RUNS,
    JOB_TIMEOUT,
    MAX_TRIES,
    POLL_DELAY,
    queue_name,
    redis_settings,
    wake_channel,
)
from agentos.engine.runner import ClaimedRun, Runner
from agentos.engine.streams import RunStreams
from agentos.instances import Instance
from agentos.telemetry.export import TracedRunStreams, open_tracer_provider

log = logging.getLogger("agentos.worker")


def run_worker(database_url: str, queue_url: str, broker_url: str | None, concurrency: int) -> None:
    """Execute queued runs, `concurrency` at a time, until SIGTERM or SIGINT."""
    from arq.worker import func

    settings = redis_settings(queue_url)
    # Fail fast on bad URLs, before arq starts its loop.
    db = Database(database_url)
    broker = open_broker(broker_url or os.environ.get("AGENTOS_BROKER_URL"), db.url)

    async def startup(ctx: dict[str, Any]) -> None:
        instance = Instance(db, f"worker:{socket.gethostname()}:{os.getpid()}", broker)
        await asyncio.to_thread(instance.register)
        instance.start_heartbeat()
        ctx["instance"] = instance
        # OTEL_* variables asking for OTLP traces: the runs this worker executes are exported too.
        run_spans = open_tracer_provider()
        ctx["run_spans"] = run_spans
        streams = RunStreams() if run_spans is None else TracedRunStreams(run_spans)
        # A thread per run at most, plus one claiming and one executing a batch of instant runs.
        runner = Runner(db, streams, Providers(), instance.id, broker=broker, threads=concurrency + 2)
        ctx["runner"] = runner
        ctx["batches"] = RunBatches(runner)
        ctx["wake_ups"] = asyncio.ensure_future(worker.listen_for_wake_ups())

    async def shutdown(ctx: dict[str, Any]) -> None:
        if "wake_ups" in ctx:
            ctx["wake_ups"].cancel()
            await asyncio.gather(ctx["wake_ups"], return_exceptions=True)
        runner: Runner | None = ctx.get("runner")
        if runner is not None:
            await asyncio.to_thread(runner.shutdown)
            runner.providers.close()
        if "instance" in ctx:
            await asyncio.to_thread(ctx["instance"].stop)
        if ctx.get("run_spans") is not None:
            await asyncio.to_thread(ctx["run_spans"].shutdown)  # exports the spans still batched
        broker.close()
        db.dispose()

    worker = _worker_class()(
        functions=[func(execute_runs, name=EXECUTE_RUNS, max_tries=MAX_TRIES, timeout=JOB_TIMEOUT),
                   func(execute_run, name=EXECUTE_RUN, max_tries=MAX_TRIES, timeout=JOB_TIMEOUT)],
        queue_name=queue_name(),
        redis_settings=settings,
        on_startup=startup,
        on_shutdown=shutdown,
        max_jobs=concurrency,
        keep_result=0,
        poll_delay=POLL_DELAY,
    )
    worker.run()


def _worker_class() -> Any:
    from arq.worker import Worker

    class RunWorker(Worker):  # type: ignore[misc]
        """arq's worker, woken through Redis pub/sub, and without the round trips that find
        a run of its own still running.

        arq polls its queue every `poll_delay`; this worker also looks as soon as a run is
        queued (`wake_channel`) or one of its jobs ends (a slot is free), so a run does not
        wait for the next poll, and an idle worker polls rarely. (It waits between polls
        itself: arq's own wait, the rest of `poll_delay`, cannot be cut short.)

        arq keeps a job in its queue until it finishes, and each poll checks every job it
        reads (three round trips each) to skip those in progress: with a batch of runs in
        flight, most of a worker's round trips were spent finding its own jobs running.
        Other workers' jobs are still checked by arq.
        """

        def __init__(self, *args: Any, poll_delay: float, **kwargs: Any) -> None:
            super().__init__(*args, poll_delay=0, **kwargs)
            self.idle_poll_delay = poll_delay
            self.woken = asyncio.Event()

        async def _poll_iteration(self) -> None:
            self.woken.clear()  # before the queue is read: what is queued later wakes the next
            await super()._poll_iteration()
            try:
                await asyncio.wait_for(self.woken.wait(), self.idle_poll_delay)
            except TimeoutError:
                pass

        async def start_jobs(self, job_ids: list[bytes]) -> None:
            await super().start_jobs([job_id for job_id in job_ids if job_id.decode() not in self.tasks])

        def _release_sem_dec_counter_on_complete(self) -> None:
            super()._release_sem_dec_counter_on_complete()
            self.woken.set()

        async def listen_for_wake_ups(self) -> None:
            """Set `woken` whenever an API process queues a run, until cancelled."""
            while True:
                try:
                    async with self.pool.pubsub(ignore_subscribe_messages=True) as pubsub:
                        await pubsub.subscribe(wake_channel())
                        self.woken.set()  # runs queued before the subscription
                        async for message in pubsub.listen():
                            if message.get("type") == "message":
                                self.woken.set()
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # polls find the queued runs meanwhile
                    log.warning("queue wake-ups lost (%s); subscribing again", type(exc).__name__)
                    await asyncio.sleep(1.0)

    return RunWorker


async def execute_runs(ctx: dict[str, Any], run_ids: list[str]) -> None:
    """The arq job: execute the queued runs `run_ids`; the job ends when they have."""
    batches: RunBatches = ctx["batches"]
    await batches.execute(run_ids)


async def execute_run(ctx: dict[str, Any], run_id: str) -> None:
    """The job of one run, as API processes queued it before jobs carried several."""
    await execute_runs(ctx, [run_id])


class RunBatches:
    """Hands the runs of the jobs arq starts to the runner in batches, on the worker's loop.

    A run whose job starts while no batch is being claimed is claimed at once, alone; the
    runs whose jobs start meanwhile wait for that claim and are claimed together next. So
    batches grow with the load and add no wait of their own. Of a claimed batch, the
    instant runs are executed together in one thread (their ends stored in one
    transaction); a run that waits on the network or a timer gets a thread of its own.
    """

    def __init__(self, runner: Runner) -> None:
        self.runner = runner
        self._waiting: dict[str, asyncio.Future[None]] = {}
        self._claiming: asyncio.Task[None] | None = None

    async def execute(self, run_ids: Sequence[str]) -> None:
        loop = asyncio.get_running_loop()
        done = [self._waiting.setdefault(run_id, loop.create_future()) for run_id in run_ids]
        if self._claiming is None:
            self._claiming = loop.create_task(self._claim_waiting())
        await asyncio.gather(*done)  # cancelled (the worker stops): runner.stop() fails the runs

    async def _claim_waiting(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            while self._waiting:
                batch, self._waiting = self._waiting, {}
                try:
                    claimed = await loop.run_in_executor(self.runner.pool, self.runner.claim_stored, list(batch))
                except Exception as exc:  # the database refused: each job fails with the reason
                    for done in batch.values():
                        _settle(done, exc)
                    continue
                for run_id in batch.keys() - {c.run.id for c in claimed}:
                    _settle(batch[run_id])  # no longer queued: nothing to execute
                instant = [c for c in claimed if not c.workflow.waits]
                groups = [instant] if instant else []
                groups += [[c] for c in claimed if c.workflow.waits]
                for group in groups:
                    self._execute(group, [batch[c.run.id] for c in group])
        finally:
            self._claiming = None

    def _execute(self, group: Sequence[ClaimedRun], done: list[asyncio.Future[None]]) -> None:
        execution = asyncio.get_running_loop().run_in_executor(self.runner.pool, self.runner.execute_claimed, group)

        def settle(finished: asyncio.Future[None]) -> None:
            error = None if finished.cancelled() else finished.exception()
            if error is not None:
                log.error("executing %d run(s) raised", len(group), exc_info=error)
            for future in done:
                _settle(future, error)

        execution.add_done_callback(settle)


def _settle(future: asyncio.Future[None], error: BaseException | None = None) -> None:
    if future.done():
        return
    if error is None:
        future.set_result(None)
    else:
        future.set_exception(error)
