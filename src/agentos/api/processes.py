"""`agentos serve --workers N`: N API processes accepting on one socket.

The parent binds the socket and starts N children (spawned, so each builds its own app,
database pool and broker connection); the kernel spreads connections over them. Child i
is labelled `host:port/i`: when it dies it is started again under the same label, and
the new one fails the runs its predecessor left unfinished at once (see
agentos.instances). SIGTERM or Ctrl-C stops every child the way one `agentos serve`
stops, then the parent.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import socket
import sys
import time
from multiprocessing.process import BaseProcess
from types import FrameType

RESTART_PAUSE = 1.0
STOP_SECONDS = 15.0


def serve_processes(workers: int, *, host: str, port: int, database_url: str, log_level: str) -> None:
    """Serve with `workers` processes until SIGTERM or SIGINT."""
    listener = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((host, port))
    listener.listen(2048)
    listener.set_inheritable(True)
    context = multiprocessing.get_context("spawn")
    stopping = False

    def stop(_signum: int, _frame: FrameType | None) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)

    def start(index: int) -> BaseProcess:
        child = context.Process(
            target=_child,
            args=(index, listener, host, port, database_url, log_level),
            name=f"agentos-api-{index}",
        )
        child.start()
        return child

    children = [start(i) for i in range(workers)]
    started = [time.monotonic()] * workers
    while not stopping:
        time.sleep(0.2)
        for i, child in enumerate(children):
            if stopping or child.is_alive():
                continue
            if child.exitcode == 3 and time.monotonic() - started[i] < 10:
                # It failed while starting (a bad database or broker URL): so will the others.
                stopping = True
                break
            time.sleep(RESTART_PAUSE)
            children[i], started[i] = start(i), time.monotonic()
    for child in children:
        if child.is_alive() and child.pid is not None:
            os.kill(child.pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_SECONDS
    for child in children:
        child.join(max(0.0, deadline - time.monotonic()))
        if child.is_alive():
            child.kill()
    listener.close()


def _child(index: int, listener: socket.socket, host: str, port: int, database_url: str, log_level: str) -> None:
    from agentos.api.app import create_app
    from agentos.api.server import serve_until_stopped

    try:
        app = create_app(database_url, instance_label=f"{socket.gethostname()}:{port}/{index}")
    except Exception as exc:
        print(f"agentos: worker {index} could not start: {exc}", file=sys.stderr)
        sys.exit(3)
    serve_until_stopped(app, host=host, port=port, log_level=log_level, sockets=[listener])
