"""A uvicorn server that stops at once, for servers started and stopped inside a process
(the embedded Ancha server, the model gateway) and for ``ancha serve``."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

import uvicorn


def event_loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop where it is installed (``uvicorn[standard]`` brings it): a third off each call;
    None (asyncio's own loop) elsewhere."""
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop  # type: ignore[no-any-return]


def run_on_fast_loop(main: Coroutine[Any, Any, None]) -> None:
    """``asyncio.run(main)`` on ``event_loop_factory()``'s loop."""
    with asyncio.Runner(loop_factory=event_loop_factory()) as runner:
        runner.run(main)


async def serve_all(servers: Sequence[uvicorn.Server]) -> None:
    await asyncio.gather(*(server.serve() for server in servers))


class Listener(uvicorn.Server):
    """uvicorn's server, stopping at once: its main loop waits for ``wake()`` between its
    ticks (the Date header, ``should_exit``) instead of sleeping through them, and its
    shutdown polls for the last connections every few milliseconds instead of pausing a
    tenth of a second at each step. Stopping the embedded server took 200 ms."""

    TICK_S = 0.1
    """uvicorn's own tick."""
    POLL_S = 0.005
    SHUTDOWN_S = 3.0
    """The longest it waits for open connections (long polls, streams) before it cancels them."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self._woken: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def request_exit(self) -> None:
        """Stop now, from any thread."""
        self.should_exit = True
        loop, woken = self._loop, self._woken
        if loop is not None and woken is not None:
            with contextlib.suppress(RuntimeError):  # its loop has closed: it has stopped already
                loop.call_soon_threadsafe(woken.set)

    async def main_loop(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._woken = asyncio.Event()
        counter = 0
        should_exit = await self.on_tick(counter)
        while not should_exit:
            counter = (counter + 1) % 864000
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._woken.wait(), self.TICK_S)
            should_exit = await self.on_tick(counter)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        state = self.server_state
        for connection in list(state.connections):
            connection.shutdown()  # an idle one closes now, a busy one after its response
        deadline = time.monotonic() + (self.config.timeout_graceful_shutdown or self.SHUTDOWN_S)
        while (state.connections or state.tasks) and time.monotonic() < deadline and not self.force_exit:
            await asyncio.sleep(self.POLL_S)
        for task in state.tasks:
            task.cancel(msg="the server is stopping")
        for server in self.servers:
            await server.wait_closed()
