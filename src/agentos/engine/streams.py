"""Live run events inside one process: every event of an active run, plus its subscribers.

The runner publishes from worker threads; WebSocket handlers subscribe from the event
loop, getting the events so far and a queue for the rest (None marks the end). Runs
active in another process are followed through the database instead (see routes.stream).
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field
from typing import Any

Event = dict[str, Any]


@dataclass
class _Channel:
    events: list[Event] = field(default_factory=list)
    subscribers: list[tuple[asyncio.AbstractEventLoop, asyncio.Queue[Event | None]]] = field(
        default_factory=list
    )


class RunStreams:
    def __init__(self) -> None:
        self._channels: dict[str, _Channel] = {}
        self._lock = threading.Lock()

    def open(self, run_id: str) -> None:
        with self._lock:
            self._channels.setdefault(run_id, _Channel())

    def publish(self, run_id: str, event: Event) -> None:
        with self._lock:
            channel = self._channels.get(run_id)
            if channel is None:
                return
            channel.events.append(event)
            subscribers = list(channel.subscribers)
        for loop, queue in subscribers:
            _deliver(loop, queue, event)

    def close(self, run_id: str) -> None:
        """The run's events are all published and persisted; end every subscription."""
        with self._lock:
            channel = self._channels.pop(run_id, None)
        if channel is not None:
            for loop, queue in channel.subscribers:
                _deliver(loop, queue, None)

    def subscribe(
        self, run_id: str, loop: asyncio.AbstractEventLoop
    ) -> tuple[list[Event], asyncio.Queue[Event | None]] | None:
        """Events so far and a queue of the next ones, or None if the run is not active here."""
        with self._lock:
            channel = self._channels.get(run_id)
            if channel is None:
                return None
            queue: asyncio.Queue[Event | None] = asyncio.Queue()
            channel.subscribers.append((loop, queue))
            return list(channel.events), queue

    def unsubscribe(self, run_id: str, queue: asyncio.Queue[Event | None]) -> None:
        with self._lock:
            channel = self._channels.get(run_id)
            if channel is not None:
                channel.subscribers = [s for s in channel.subscribers if s[1] is not queue]


def _deliver(loop: asyncio.AbstractEventLoop, queue: asyncio.Queue[Event | None], item: Event | None) -> None:
    try:
        loop.call_soon_threadsafe(queue.put_nowait, item)
    except RuntimeError:  # the subscriber's loop is closed; it is gone
        pass
