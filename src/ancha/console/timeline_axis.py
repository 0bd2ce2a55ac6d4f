"""The timeline's axis: simulated time fitted to the span where things happen.

A trial's clock jumps while the agent waits, so its events come in bursts separated by long
idle stretches (orders-latency: a seeded monitor state at +0s, then everything after +1h3m).
Such a stretch becomes a *break*: a narrow, marked part of the axis, so the bursts share the
width at one scale. The page zooms within this axis (in its percent space) and places ticks
with the same rules as here (static/timeline.js mirrors ``tick_step`` and ``tick_label``).
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass
from statistics import median_low

IDLE_FACTOR = 20.0
"""A gap is idle when it is this many times longer than the trial's typical gap between events…"""
IDLE_SHARE = 0.08
"""…and longer than this share of the whole span (so an evenly paced trial has no break)."""
IDLE_MIN_SECONDS = 1.0
"""…and at least this long (sub-second gaps are never a clock jump)."""
BREAK_WIDTH = 3.0
"""Percent of the axis a break takes (less when there are many: all breaks take ≤ 20%)."""
BREAK_PAD = 0.02
"""Either side of a break, this share of the busy time stays on the axis, so a lone event
beside a break is not drawn on its edge."""
TICK_SERIES = (
    *(m * 10.0 ** e for e in (-3, -2, -1) for m in (1, 2, 5)),  # 1 ms … 500 ms
    1, 2, 5, 10, 20, 30,  # seconds
    60, 120, 300, 600, 1200, 1800,  # minutes
    3600, 7200, 6 * 3600, 12 * 3600,  # hours: 1, 2, 6, 12 (the clock's divisions)
    *(m * 86400.0 * 10 ** e for e in range(4) for m in (1, 2, 5)),  # days: 1 … 5000
)
"""Tick steps in seconds: a 1-2-5 series of ms, s, min (30 s and 30 min where 50 would not divide
the next unit), hours as the clock divides them, then days."""
MAX_TICKS = 8
"""Ticks across the whole axis when the page does not say its width (the page uses ~1 per 90 px)."""


@dataclass(frozen=True, slots=True)
class Stretch:
    """A part of the axis: busy time at the axis' scale, or an idle break."""

    start: float
    end: float
    """Epoch seconds."""
    left: float
    width: float
    """Percent of the axis."""
    idle: bool

    @property
    def seconds(self) -> float:
        return self.end - self.start


@dataclass(frozen=True, slots=True)
class Tick:
    left: float
    label: str


@dataclass(frozen=True, slots=True)
class Axis:
    origin: float
    """Epoch seconds of +0 (the first thing that happened)."""
    stretches: tuple[Stretch, ...]

    @property
    def breaks(self) -> list[Stretch]:
        return [s for s in self.stretches if s.idle]

    @property
    def scale(self) -> float:
        """Seconds per percent of the axis, in its busy stretches."""
        busy = [s for s in self.stretches if not s.idle]
        return sum(s.seconds for s in busy) / max(sum(s.width for s in busy), 1e-9)

    def position(self, at: float) -> float:
        """Where ``at`` is on the axis, in percent (0 to 100)."""
        starts = [s.start for s in self.stretches]
        stretch = self.stretches[max(bisect_right(starts, at) - 1, 0)]
        share = (at - stretch.start) / stretch.seconds if stretch.seconds > 0 else 0.0
        return round(min(max(stretch.left + share * stretch.width, 0.0), 100.0), 4)

    def ticks(self, max_ticks: int = MAX_TICKS) -> list[Tick]:
        """Ticks across the whole axis, at one step, labelled in one format."""
        step = tick_step(self.scale * 100, max_ticks)
        busy = [s for s in self.stretches if not s.idle]
        in_ms = step < 1 and busy[-1].end - self.origin < 1
        out: list[Tick] = []
        for stretch in busy:
            first = math.ceil((stretch.start - self.origin) / step - 1e-9)
            last = math.floor((stretch.end - self.origin) / step + 1e-9)
            steps = [k * step for k in range(first, last + 1)]
            if not steps:  # a burst shorter than a step, between breaks: one tick at its middle
                steps = [round(((stretch.start + stretch.end) / 2 - self.origin) / step) * step]
                lefts = [round(stretch.left + stretch.width / 2, 4)]
            else:
                lefts = [self.position(self.origin + offset) for offset in steps]
            for offset, left in zip(steps, lefts, strict=True):
                label = tick_label(offset, step, in_ms=in_ms)
                if out and (left - out[-1].left < 50 / max_ticks or label == out[-1].label):
                    continue  # too close (either side of a break) or said already
                out.append(Tick(left, label))
        return out

    def to_json(self) -> dict[str, object]:
        """What static/timeline.js needs to zoom and tick."""
        return {"origin": self.origin, "scale": self.scale,
                "stretches": [[s.start, s.end, s.left, s.width, s.idle] for s in self.stretches]}


def idle_gaps(times: Iterable[float]) -> list[tuple[float, float]]:
    """The idle stretches between ``times``: gaps far longer than the typical one."""
    moments = sorted(set(times))
    gaps = [(a, b) for a, b in zip(moments, moments[1:], strict=False)]
    if len(gaps) < 2:
        return []
    typical = median_low(b - a for a, b in gaps)
    span = moments[-1] - moments[0]
    return [(a, b) for a, b in gaps
            if b - a >= max(IDLE_FACTOR * typical, IDLE_SHARE * span, IDLE_MIN_SECONDS)]


def fit_axis(times: Iterable[float]) -> Axis:
    """An axis from the first to the last of ``times``, its idle stretches drawn as breaks."""
    moments = sorted(set(times)) or [0.0]
    start, end = moments[0], moments[-1]
    if end - start < 1e-6:
        end = start + 1.0
    gaps = idle_gaps(moments)
    if not gaps:
        return Axis(start, (Stretch(start, end, 0.0, 100.0, False),))
    busy = (end - start) - sum(b - a for a, b in gaps)
    pad = BREAK_PAD * busy
    edges = [start] + [t for a, b in gaps for t in (a + pad, b - pad)] + [end]
    ranges = [(edges[i], edges[i + 1], i % 2 == 1) for i in range(len(edges) - 1)]
    break_width = min(BREAK_WIDTH, 20.0 / len(gaps))
    busy_width = 100.0 - break_width * len(gaps)
    busy_seconds = sum(b - a for a, b, idle in ranges if not idle)
    stretches, left = [], 0.0
    for a, b, idle in ranges:
        width = break_width if idle else busy_width * (b - a) / busy_seconds
        stretches.append(Stretch(a, b, round(left, 4), round(width, 4), idle))
        left += width
    return Axis(start, tuple(stretches))


def tick_step(seconds: float, max_ticks: int) -> float:
    """The smallest step of ``TICK_SERIES`` that puts at most ``max_ticks`` ticks on ``seconds``."""
    wanted = seconds / max(max_ticks, 1)
    return next((step for step in TICK_SERIES if step >= wanted * (1 - 1e-9)), TICK_SERIES[-1])


def tick_label(offset: float, step: float, *, in_ms: bool = False) -> str:
    """``offset`` seconds after +0 as ``+1h3m20s``, down to ``step``'s unit: ``+250ms`` (``in_ms``,
    when the whole view is under a second), ``+1m5.25s`` below a second, else whole units
    (``+45s``, ``+1h20m``, ``+2d6h``); the same step always gives the same format."""
    millis = round(offset * 1000)
    if in_ms:
        return f"+{millis}ms"
    seconds, ms = divmod(millis, 1000)
    minutes, secs = divmod(seconds, 60)
    hours, mins = divmod(minutes, 60)
    days, hrs = divmod(hours, 24)
    if step < 1:
        decimals = max(1, math.ceil(-math.log10(step) - 1e-9))
        head = _components([(days, "d"), (hrs, "h"), (mins, "m")], keep_zeros=True)
        return f"+{head}{secs}.{ms:03d}"[: -(3 - decimals) or None] + "s"
    unit = 0 if step < 60 else 1 if step < 3600 else 2 if step < 86400 else 3
    parts = [(days, "d"), (hrs, "h"), (mins, "m"), (secs, "s")][: 4 - unit]
    return "+" + (_components(parts, keep_zeros=False) or f"0{parts[-1][1]}")


def _components(parts: list[tuple[int, str]], *, keep_zeros: bool) -> str:
    """``1h0m20s``: from the first non-zero part on, to the last non-zero one (or to the end)."""
    nonzero = [i for i, (value, _) in enumerate(parts) if value]
    if not nonzero:
        return ""
    last = len(parts) - 1 if keep_zeros else nonzero[-1]
    return "".join(f"{value}{unit}" for value, unit in parts[nonzero[0]: last + 1])
