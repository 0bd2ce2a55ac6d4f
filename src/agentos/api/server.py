"""Serving the app with uvicorn, and stopping promptly on SIGTERM or Ctrl-C.

uvicorn stops by waiting for every connection and task to finish, then runs the app's
shutdown. A client waiting on a stuck run, or a stream subscriber to one, would hold it
up for as long as the run takes. So the runs are stopped first: every unfinished run of
this process is stored as failed ("interrupted: the server stopped"), its stream sends
the end and closes, and its waits end. What still hangs (a thread blocked in a network
call) gets GRACE_SECONDS, then the process exits anyway: its run is already stored.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from typing import Any

import uvicorn
from fastapi import FastAPI
from starlette.concurrency import run_in_threadpool

log = logging.getLogger("agentos.api")

GRACE_SECONDS = 3


class _Server(uvicorn.Server):
    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        app: Any = self.config.app
        await run_in_threadpool(app.state.services.runner.stop)
        await super().shutdown(sockets)


def serve_until_stopped(
    app: FastAPI, *, host: str, port: int, log_level: str, sockets: list[socket.socket] | None = None
) -> None:
    """Serve `app` (on `sockets` when given, bound by `agentos serve --workers`) until SIGTERM
    or SIGINT; returns within a few seconds of the signal."""
    config = uvicorn.Config(app, host=host, port=port, log_level=log_level, timeout_graceful_shutdown=GRACE_SECONDS)
    _Server(config).run(sockets=sockets)
    stuck = [t for t in threading.enumerate() if t is not threading.main_thread() and not t.daemon and t.is_alive()]
    if stuck:
        # Worker threads blocked in a network call would keep the interpreter alive at exit;
        # their runs are stored as failed already, so nothing is lost by not waiting.
        log.warning("exiting with %d run thread(s) still blocked; their runs are stored as failed", len(stuck))
        logging.shutdown()
        os._exit(0)
