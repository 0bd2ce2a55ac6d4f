"""What is due in one environment, and when: people's replies, world-rule events, ...

A heap of ``(time, seq, item)``: items due at the same simulated instant run in the
order they were scheduled (``seq`` breaks ties), so the same agent behaviour gives
the same world. The scheduler only keeps the queue; the environment's ticker
(``ticker.py``) decides when simulated time has come and runs what is due.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(slots=True)
class Due:
    """One scheduled item (``Scheduler.cancel`` drops it without running it)."""

    at: float
    seq: int
    callback: Callable[[], None] = field(compare=False)
    label: str = field(default="", compare=False)
    cancelled: bool = field(default=False, compare=False)


class Scheduler:
    def __init__(self) -> None:
        self._heap: list[tuple[float, int, Due]] = []
        self._seq = itertools.count(1)
        self.on_change: Callable[[], None] | None = None
        """Called whenever something is scheduled (the ticker wakes to reconsider its sleep)."""

    def schedule(self, at: float, callback: Callable[[], None], label: str = "") -> Due:
        """Run ``callback`` once simulated time reaches ``at``."""
        item = Due(at, next(self._seq), callback, label)
        heapq.heappush(self._heap, (at, item.seq, item))
        if self.on_change is not None:
            self.on_change()
        return item

    def cancel(self, item: Due) -> None:
        item.cancelled = True

    def __len__(self) -> int:
        """How many items are still to run."""
        return sum(1 for _, _, item in self._heap if not item.cancelled)

    def next_at(self) -> float | None:
        """The time of the earliest item still to run, or None when nothing is due."""
        self._drop_cancelled()
        return self._heap[0][0] if self._heap else None

    def pop_due(self, now: float) -> Due | None:
        """The earliest item due at or before ``now`` (removed from the queue), or None."""
        self._drop_cancelled()
        if not self._heap or self._heap[0][0] > now:
            return None
        return heapq.heappop(self._heap)[2]

    def labels(self) -> list[tuple[float, str]]:
        """``(time, label)`` of every item still to run, earliest first (for status and debugging)."""
        return sorted((at, item.label) for at, _, item in self._heap if not item.cancelled)

    def _drop_cancelled(self) -> None:
        while self._heap and self._heap[0][2].cancelled:
            heapq.heappop(self._heap)
