"""Simulated time: one clock per environment.

Time runs at ``speed`` x real time while the agent works, and can jump forward
when the agent waits (``advance_to``). While the agent waits the clock is paused
(``pause``/``resume``): it moves only by jumps, so the times of what happens then
(replies, events) are exact and reproducible, not smeared by real processing time. ``now()`` never returns the same instant
twice: each reading is at least one microsecond after the one before, so every
record, ``ts`` and trace entry is strictly ordered.
"""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime

TICK = 1e-6


class SimClock:
    def __init__(self, start: datetime, speed: float = 1.0) -> None:
        self.start = start.timestamp()
        self.speed = speed
        self._origin = time.monotonic()
        self._offset = 0.0
        self._last = self.start - TICK
        self._paused_at: float | None = None
        self._lock = threading.Lock()

    def _running(self) -> float:
        return self.start + (time.monotonic() - self._origin) * self.speed + self._offset

    def _flowing(self) -> float:
        return self._paused_at if self._paused_at is not None else self._running()

    @property
    def paused(self) -> bool:
        return self._paused_at is not None

    def pause(self) -> None:
        """Stop flowing with real time (the agent waits); ``advance_to`` still jumps."""
        with self._lock:
            if self._paused_at is None:
                self._paused_at = max(self._running(), self._last)

    def resume(self) -> None:
        """Flow again at ``speed`` from where the clock stands (the agent works)."""
        with self._lock:
            if self._paused_at is not None:
                self._offset += self._paused_at - self._running()
                self._paused_at = None

    def now(self) -> float:
        """Simulated epoch seconds, strictly later than every earlier reading."""
        with self._lock:
            last = self._last
            paused = self._paused_at
            t = paused if paused is not None else self._running()
            if t < last + TICK:
                t = last + TICK
            # Round to the microsecond so that ts strings made from it (microsecond ids) keep the
            # order: whole microseconds over 1e6 (``round(t, 6)`` costs five times as much).
            t = round(t * 1_000_000) / 1_000_000
            if t <= last:
                t = (round(last * 1_000_000) + 1) / 1_000_000
            self._last = t
            return t

    def peek(self) -> float:
        """The current simulated time without consuming an instant."""
        with self._lock:
            return max(self._flowing(), self._last)

    def elapsed(self) -> float:
        return self.peek() - self.start

    def advance_to(self, t: float) -> None:
        """Jump forward to ``t`` (never backward)."""
        with self._lock:
            if self._paused_at is not None:
                self._paused_at = max(self._paused_at, t)
                return
            gap = t - self._running()
            if gap > 0:
                self._offset += gap

    def isoformat(self, t: float | None = None) -> str:
        value = self.peek() if t is None else t
        return datetime.fromtimestamp(value, UTC).isoformat().replace("+00:00", "Z")
