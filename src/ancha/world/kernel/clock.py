"""Simulated time: one clock per environment.

Time runs at ``speed`` x real time while the agent works, and can jump forward
when the agent waits (``advance_to``). While the agent waits the clock is paused
(``pause``/``resume``): it moves only by jumps, so the times of what happens then
(replies, events) are exact and reproducible, not smeared by real processing time. ``now()`` never returns the same instant
twice: each reading is at least one microsecond after the one before, so every
record, ``ts`` and trace entry is strictly ordered.

While something happens in the world (an agent's call, a due item) the clock is *held*
(``hold``/``release``): every reading is then the held instant, or one microsecond past
the reading before, however long the work takes in real time. What happens at one
instant is stamped the same way whenever and however fast it runs, so the same calls
at the same simulated times give the same world (``ancha replay``).
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
        self._held_at: float | None = None
        self._holds = 0
        self._stopped = False
        self._lock = threading.Lock()

    def __getstate__(self) -> dict[str, object]:
        """A checkpoint keeps where the clock stands; a restored clock flows on from there."""
        state = {k: v for k, v in self.__dict__.items() if k != "_lock"}
        state["_standing"] = self.peek()
        return state

    def __setstate__(self, state: dict[str, object]) -> None:
        standing = float(state.pop("_standing"))  # type: ignore[arg-type]
        self.__dict__.update(state)
        self._lock = threading.Lock()
        self._origin = time.monotonic()
        self._offset = standing - self.start
        self._paused_at = self._held_at = None
        self._holds = 0
        self._stopped = False

    def _running(self) -> float:
        return self.start + (time.monotonic() - self._origin) * self.speed + self._offset

    def _flowing(self) -> float:
        if self._held_at is not None:
            return self._held_at
        return self._paused_at if self._paused_at is not None else self._running()

    @property
    def held(self) -> bool:
        return self._held_at is not None

    def hold(self, at: float | None = None) -> float:
        """Stop the clock at ``at`` (or where it stands) while one thing happens in the world;
        holds nest, and the outermost one decides the instant. Readings meanwhile are that
        instant, each a microsecond past the one before. Returns the held instant."""
        with self._lock:
            self._holds += 1
            if self._held_at is None:
                base = self._flowing() if at is None else at
                self._held_at = round(base * 1_000_000) / 1_000_000
            return self._held_at

    def release(self) -> None:
        """End a ``hold``: the outermost release lets the clock flow (or stay paused) again,
        never behind its last reading."""
        with self._lock:
            if self._holds == 0:
                return
            self._holds -= 1
            if self._holds == 0:
                self._held_at = None

    @property
    def paused(self) -> bool:
        return self._paused_at is not None

    def pause(self, at: float | None = None) -> None:
        """Stop flowing with real time (the agent waits); ``advance_to`` still jumps. ``at``:
        stop there (not where real time has taken the clock)."""
        with self._lock:
            if self._paused_at is None:
                self._paused_at = max(self._running() if at is None else at, self._last)

    def stop(self, at: float) -> None:
        """The trial ended at ``at``: the clock stands there for good (what is graded, read and
        written afterwards is stamped then, however late it comes)."""
        with self._lock:
            self._stopped = True
            self._paused_at = max(at, self._last) if self._paused_at is None else max(self._paused_at, at)

    def resume_from_here(self) -> None:
        """Flow on from the last reading (a world just built: its building took no simulated time)."""
        with self._lock:
            if self._paused_at is None and self._held_at is None:
                self._offset += self._last - self._running()

    def resume(self) -> None:
        """Flow again at ``speed`` from where the clock stands (the agent works); never once stopped."""
        with self._lock:
            if self._paused_at is not None and not self._stopped:
                self._offset += self._paused_at - self._running()
                self._paused_at = None

    def now(self) -> float:
        """Simulated epoch seconds, strictly later than every earlier reading."""
        with self._lock:
            last = self._last
            t = self._flowing()
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
            if self._held_at is not None:  # (a jump during a hold moves the instant)
                self._held_at = max(self._held_at, t)
            if self._paused_at is not None:
                self._paused_at = max(self._paused_at, t)
                return
            gap = t - self._running()
            if gap > 0:
                self._offset += gap

    def isoformat(self, t: float | None = None) -> str:
        value = self.peek() if t is None else t
        return datetime.fromtimestamp(value, UTC).isoformat().replace("+00:00", "Z")
