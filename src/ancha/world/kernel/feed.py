"""The agent's event feed: an append-only list with long-polling readers.

A reader that is blocked (its cursor is at the end of the feed) is what tells the
clock the agent is waiting; the moment an event is pushed past its cursor it no
longer counts, even before its coroutine has resumed, so a jump that produces an
event for the agent is the last jump before the agent sees it.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from typing import Any


class EventFeed:
    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self._changed: asyncio.Event | None = None
        self.closed = False
        self._readers: dict[int, int] = {}
        """reader number -> its cursor, for every long-poll in progress."""
        self._reader_ids = itertools.count(1)
        self._released: set[int] = set()
        """Readers whose wake-up time came (``release``): they answer, with what there is."""
        self.on_change: Callable[[], None] | None = None
        """Called when a reader starts or stops waiting, an event is pushed or the feed closes
        (whether the agent waits may have changed)."""

    def __getstate__(self) -> dict[str, Any]:
        """A checkpoint keeps the events; the long-polls in progress belong to the live world."""
        state = dict(self.__dict__)
        state.update(_changed=None, _readers={}, _released=set(), _reader_ids=None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._reader_ids = itertools.count(1)

    @property
    def waiting(self) -> int:
        """How many long-polls are in progress."""
        return len(self._readers)

    @property
    def blocked(self) -> int:
        """How many long-polls are blocked with nothing to read (the clock may jump then)."""
        if self.closed:
            return 0
        end = len(self.events)
        return sum(1 for reader, cursor in self._readers.items() if cursor >= end and reader not in self._released)

    def _signal(self) -> asyncio.Event:
        if self._changed is None:
            self._changed = asyncio.Event()
        return self._changed

    def push(self, event: dict[str, Any]) -> dict[str, Any]:
        event = {"id": str(len(self.events) + 1), **event}
        self.events.append(event)
        self._signal().set()
        self._changed_hook()
        return event

    def close(self) -> None:
        self.closed = True
        self._signal().set()
        self._changed_hook()

    def _changed_hook(self) -> None:
        if self.on_change is not None:
            self.on_change()

    def after(self, cursor: int) -> list[dict[str, Any]]:
        return self.events[cursor:]

    def release(self, reader: int) -> None:
        """End one long-poll now (the agent asked to be woken at this time): from this moment it
        no longer counts as blocked, even before its coroutine has resumed."""
        if reader in self._readers and reader not in self._released:
            self._released.add(reader)
            self._signal().set()
            self._changed_hook()

    async def wait(self, cursor: int, timeout: float,
                   on_reader: Callable[[int], None] | None = None) -> list[dict[str, Any]]:
        """Events after ``cursor``, waiting up to ``timeout`` real seconds for the first, or until
        ``release``d. ``on_reader`` is told the reader's number (what ``release`` takes) once it
        waits, before anyone can see it blocked."""
        if len(self.events) > cursor or self.closed:
            return self.events[cursor:]
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        reader = next(self._reader_ids)
        self._readers[reader] = cursor
        if on_reader is not None:
            on_reader(reader)
        self._changed_hook()
        try:
            while len(self.events) <= cursor and not self.closed and reader not in self._released:
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
            del self._readers[reader]
            self._released.discard(reader)
            self._changed_hook()
        return self.events[cursor:]
