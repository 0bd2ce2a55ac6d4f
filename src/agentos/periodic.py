"""A daemon thread doing one piece of work every few seconds, off the request path."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)


class Periodic:
    """Calls `work` every `interval` seconds until stopped; a failed call is logged, and the
    next one comes at its time."""

    def __init__(self, name: str, interval: float, work: Callable[[], object]) -> None:
        self._work = work
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _loop(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                self._work()
            except Exception:
                log.exception("%s failed", self._thread.name)
