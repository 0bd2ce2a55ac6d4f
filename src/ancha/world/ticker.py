"""Moving an environment's simulated time: run what is due, jump when the agent waits.

While the agent works, the clock flows at ``speed`` and due items run when their time
comes. When the agent waits (``Environment.agent_waiting``: a blocked feed long-poll
with no agent request in flight, or the runner saying so between ``per_event``
invocations) nothing the agent does can happen before the next due item, so the
clock jumps straight to it and runs it. A jump that produces an event for the agent
releases its long-poll, and the jumping stops there.

With nothing due, a waiting agent ends the trial: ``idle`` once the world has been
quiet (no trace entry, no record) for ``agent.idle`` simulated seconds, or
``timed_out`` when that, or the next due item, lies past ``clock.limit``. A command
agent's feed wait with a duration is itself a due item (a wake-up, see
``Environment.wait_feed``); a command agent that waits with no deadline while nothing is
due can never be woken, and its trial ends ``idle`` at once. A working
agent is never ended for being quiet (a model call can take a while); its trial ends
when it exits or says it is done, or at the limit.

``Timekeeper`` holds these rules as plain synchronous steps, so an environment with
no event loop (in-process tests) can be driven by hand; ``Ticker`` runs them as one
asyncio task per environment in the server's loop, sleeping in real time until the
next due item and woken early whenever something is scheduled or the agent starts
waiting.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ancha.world.environment import Environment

log = logging.getLogger(__name__)

class Timekeeper:
    """The synchronous rules of simulated time for one environment."""

    def __init__(self, env: Environment) -> None:
        self.env = env
        self.jumps = 0
        """How many times the clock jumped (for tests and benchmarks)."""

    def run_due(self, upto: float | None = None) -> int:
        """End the trial if the clock passed the limit, else run every item due by now (or by
        ``upto``), in order; return how many ran. Each runs with the clock held at its own
        time, however late it is run: what it does is stamped the same in a replay."""
        env = self.env
        clock = env.clock
        ran = 0
        while env.status == "running" and not env.check_limit():
            item = env.scheduler.pop_due(clock.peek() if upto is None else upto)
            if item is None:
                break
            ran += 1
            clock.hold(item.at)
            try:
                item.callback()
            except Exception as exc:  # one broken item must not stop the world's clock
                log.exception("scheduled item %r failed", item.label)
                env.record("engine_error", label=item.label, error=f"{type(exc).__name__}: {exc}")
            finally:
                clock.release()
        return ran

    def jump(self) -> bool:
        """The agent waits: move the clock to the next thing that can happen and do it.
        Return False when the trial ended instead (idle or timed out)."""
        env = self.env
        if env.status != "running":
            return False
        self.run_due()
        if env.status != "running":
            return False
        clock = env.clock
        upcoming = env.scheduler.next_at()
        if upcoming is not None and upcoming <= env.deadline:
            clock.advance_to(upcoming)
            self.jumps += 1
            self.run_due()
            return env.status == "running"
        if upcoming is None and env.wakes_on_wait:
            env.finish("idle", "the agent waited with no deadline, and nothing in the world was due that "
                               "could ever wake it")
            return False
        if upcoming is None:
            quiet_until = max(clock.peek(), env.last_activity + env.idle)
            if quiet_until <= env.deadline:
                clock.advance_to(quiet_until)
                if env.hand_over_task():
                    return True
                env.finish("idle", f"nothing was pending and the world was quiet for {env.idle:g}s "
                                   "of simulated time while the agent waited")
                return False
        clock.advance_to(env.deadline)
        env.finish("timed_out", "the clock reached clock.limit while the agent waited")
        return False

    def settle(self, max_jumps: int = 10_000) -> None:
        """Run what is due; while the agent waits, keep jumping (for driving an environment
        without an event loop)."""
        self.run_due()
        for _ in range(max_jumps):
            if self.env.status != "running" or not self.env.agent_waiting:
                return
            self.jump()

    def real_seconds_to_next(self) -> float | None:
        """Real seconds until the next thing due or the limit at the current speed (None:
        only a wake-up can change anything)."""
        env = self.env
        speed = env.clock.speed
        if speed <= 0:
            return None
        target = env.deadline
        upcoming = env.scheduler.next_at()
        if upcoming is not None:
            target = min(target, upcoming)
        return max(0.0, (target - env.clock.peek()) / speed)


class Ticker:
    """The asyncio task that keeps one environment's time moving."""

    def __init__(self, env: Environment) -> None:
        self.env = env
        self.timekeeper = env.timekeeper
        self._wake: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def start(self) -> None:
        """Start in the running loop (the server's)."""
        self._loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()
        self._task = self._loop.create_task(self._run(), name=f"ticker-{self.env.id}")

    def wake(self) -> None:
        """Reconsider now: something was scheduled, the agent began waiting, the trial ended."""
        if self._wake is None or self._loop is None:
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self._loop:
            self._wake.set()
        elif not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._wake.set)

    def later(self, seconds: float, callback: Callable[[], None]) -> None:
        """Call ``callback`` in the ticker's loop after ``seconds`` real seconds (from any thread)."""
        if self._loop is None or self._loop.is_closed():
            return
        self._loop.call_soon_threadsafe(self._loop.call_later, seconds, callback)

    def stop(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    async def _run(self) -> None:
        env, keeper = self.env, self.timekeeper
        assert self._wake is not None
        while env.status == "running":
            self._wake.clear()
            keeper.run_due()
            if env.status != "running":
                break
            if env.agent_waiting:
                keeper.jump()
                # Let the long-poll that a jump released (and the agent's next request) run.
                await asyncio.sleep(0)
                continue
            timeout = keeper.real_seconds_to_next()
            if timeout is not None and timeout <= 0:
                await asyncio.sleep(0)
                continue
            try:
                await asyncio.wait_for(self._wake.wait(), timeout)
            except TimeoutError:
                pass
