"""The agent's event feed: an append-only list with long-polling readers."""

from __future__ import annotations

import asyncio
from typing import Any


class EventFeed:
    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self._changed = asyncio.Event() if _has_loop() else None
        self.closed = False
        self.waiting = 0
        """How many readers are blocked on the feed right now (the clock may jump then)."""

    def _signal(self) -> asyncio.Event:
        if self._changed is None:
            self._changed = asyncio.Event()
        return self._changed

    def push(self, event: dict[str, Any]) -> None:
        event = {"id": str(len(self.events) + 1), **event}
        self.events.append(event)
        self._signal().set()

    def close(self) -> None:
        self.closed = True
        self._signal().set()

    def after(self, cursor: int) -> list[dict[str, Any]]:
        return self.events[cursor:]

    async def wait(self, cursor: int, timeout: float) -> list[dict[str, Any]]:
        """Events after ``cursor``, waiting up to ``timeout`` seconds for the first."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        self.waiting += 1
        try:
            while len(self.events) <= cursor and not self.closed:
                remaining = deadline - loop.time()
                if remaining <= 0:
                    break
                signal = self._signal()
                signal.clear()
                try:
                    await asyncio.wait_for(signal.wait(), remaining)
                except TimeoutError:
                    break
        finally:
            self.waiting -= 1
        return self.events[cursor:]


def _has_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True
