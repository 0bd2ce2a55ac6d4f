"""Metrics: the seed's series, submitted points and faults' held values, read as Datadog's
v1 timeseries query answers them, and the monitor-query parser that evaluates on them.

A metric's value in a time bucket is, first, a fault's held value (``datadog.metric``)
active in that bucket; else the average of points (seeded or submitted through
``POST /api/v2/series``) in it that match the query's scope; else its seed ``baseline``
plus deterministic noise (a hash of the trial's metric seed, the name and the bucket: the
same trial gives the same series); else nothing. Nothing runs on the clock: values are
computed when read.
"""

from __future__ import annotations

import bisect
import hashlib
import struct
from dataclasses import dataclass, field

import re2

from ancha.durations import parse_duration
from ancha.world.kernel.query_limits import too_long

MAX_POINTS = 1500
"""A query answers at most about this many points (Datadog rolls up longer ranges)."""

RE2_OPTIONS = re2.Options()
RE2_OPTIONS.log_errors = False
# The query regexes run on what agents write, so they are RE2's (linear time): with Python's
# backtracking engine, ``avg(last_5m):`` and 4,000 spaces held the server for five minutes.
_METRIC = re2.compile(
    r"^\s*(?P<space>avg|sum|min|max):(?P<name>[A-Za-z0-9_.]+)\s*\{(?P<scope>[^}]*)\}\s*"
    r"(?:by\s*\{(?P<by>[^}]*)\}\s*)?(?:\.rollup\([^)]*\)\s*)?$", RE2_OPTIONS)
_MONITOR = re2.compile(
    r"^\s*(?P<agg>avg|max|min|sum|last)\(last_(?P<window>\d+[smhdw])\)\s*:\s*(?P<metric>.+?)\s*"
    r"(?P<op>>=|<=|>|<|==)\s*(?P<threshold>-?\d+(?:\.\d+)?)\s*$", RE2_OPTIONS)


def re2_text(text: str) -> str:
    """``text`` as RE2 can read it (UTF-8): a lone surrogate, which no metric name, tag or
    number holds, becomes ``?``."""
    try:
        text.encode()
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode()
    return text


@dataclass(slots=True)
class Override:
    """A fault's held value: from ``start`` until ``end`` (None while the fault is active)."""

    key: str
    value: float
    start: float
    end: float | None = None
    tags: tuple[str, ...] = ()


@dataclass(slots=True)
class Metric:
    name: str
    baseline: float | None = None
    noise: float = 0.0
    times: list[float] = field(default_factory=list)
    points: list[tuple[float, float, tuple[str, ...]]] = field(default_factory=list)
    """(at, value, tags) sorted by time; ``times`` mirrors the ats for bisecting."""
    overrides: list[Override] = field(default_factory=list)
    unit: str | None = None

    def add_point(self, at: float, value: float, tags: tuple[str, ...] = ()) -> None:
        i = bisect.bisect_right(self.times, at)
        self.times.insert(i, at)
        self.points.insert(i, (at, value, tags))

    def override_at(self, t0: float, t1: float) -> float | None:
        """The held value of the latest fault active at some time in [t0, t1)."""
        found: Override | None = None
        for o in self.overrides:
            if o.start < t1 and (o.end is None or o.end > t0) and (found is None or o.start >= found.start):
                found = o
        return None if found is None else found.value


@dataclass(frozen=True, slots=True)
class MetricQuery:
    space: str
    name: str
    scope: tuple[str, ...]
    """Tags a point must carry (``*`` or empty: all)."""
    text: str

    @property
    def scope_text(self) -> str:
        return ",".join(self.scope) or "*"


@dataclass(frozen=True, slots=True)
class MonitorQuery:
    aggregation: str
    window: float
    metric: MetricQuery
    op: str
    threshold: float

    def crosses(self, value: float, threshold: float | None = None) -> bool:
        limit = self.threshold if threshold is None else threshold
        return {">": value > limit, ">=": value >= limit, "<": value < limit, "<=": value <= limit,
                "==": value == limit}[self.op]


def parse_metric_query(text: str) -> MetricQuery | None:
    """``avg:orders.latency.p99{env:prod}`` (optionally ``by {host}``); None when unsupported
    or past the shared query length."""
    if too_long(text):
        return None
    match = _METRIC.match(re2_text(text))
    if match is None:
        return None
    scope = tuple(s.strip() for s in match["scope"].split(",") if s.strip() and s.strip() != "*")
    return MetricQuery(match["space"], match["name"], scope, text.strip())


def parse_monitor_query(text: str) -> MonitorQuery | None:
    """``avg(last_5m):avg:orders.latency.p99{*} > 2000``; None when not a metric query we evaluate
    (or past the shared query length)."""
    if not text or too_long(text):
        return None
    match = _MONITOR.match(re2_text(text))
    if match is None:
        return None
    metric = parse_metric_query(match["metric"])
    if metric is None:
        return None
    try:
        window = parse_duration(match["window"])
    except ValueError:  # a window past any duration Ancha keeps (last_99999…m): not one we evaluate
        return None
    return MonitorQuery(match["agg"], window, metric, match["op"], float(match["threshold"]))


class MetricStore:
    """Every metric of one trial's world."""

    def __init__(self, seed: bytes) -> None:
        self.seed = seed
        self.metrics: dict[str, Metric] = {}

    def get(self, name: str) -> Metric | None:
        return self.metrics.get(name)

    def ensure(self, name: str) -> Metric:
        metric = self.metrics.get(name)
        if metric is None:
            metric = self.metrics[name] = Metric(name)
        return metric

    def _noise(self, name: str, bucket: float) -> float:
        digest = hashlib.blake2b(self.seed + name.encode() + struct.pack(">d", bucket), digest_size=8).digest()
        return (int.from_bytes(digest, "big") / 2**64) * 2 - 1

    def bucket_value(self, metric: Metric, query: MetricQuery, t0: float, t1: float) -> float | None:
        """The metric's value over [t0, t1) as ``query`` reads it (see the module's doc)."""
        held = metric.override_at(t0, t1)
        if held is not None:
            return held
        lo, hi = bisect.bisect_left(metric.times, t0), bisect.bisect_left(metric.times, t1)
        values = [v for _, v, tags in metric.points[lo:hi] if not query.scope or all(s in tags for s in query.scope)]
        if values:
            return _aggregate(query.space, values)
        if metric.baseline is not None:
            return metric.baseline + metric.noise * self._noise(metric.name, t0)
        return None

    def series(self, query: MetricQuery, start: float, end: float, now: float) -> tuple[int, list[list[float]]]:
        """(interval s, pointlist [[epoch ms, value], ...]) over [start, min(end, now)]."""
        metric = self.metrics.get(query.name)
        end = min(end, now)
        if metric is None or end <= start:
            return 60, []
        step = 60.0
        while (end - start) / step > MAX_POINTS:
            step *= 2 if step < 3600 else 1.5
        interval = int(step)
        first = start - start % interval
        points: list[list[float]] = []
        t = first
        while t < end:
            value = self.bucket_value(metric, query, t, min(t + interval, end))
            if value is not None:
                points.append([t * 1000.0, value])
            t += interval
        return interval, points

    def window_value(self, query: MonitorQuery, now: float) -> float | None:
        """A monitor query's aggregate over its window ending at ``now``; None: no data."""
        metric = self.metrics.get(query.metric.name)
        if metric is None:
            return None
        step = max(60.0, query.window / 30)
        values: list[float] = []
        t = now - query.window
        while t < now - 1e-9:
            value = self.bucket_value(metric, query.metric, t, min(t + step, now))
            if value is not None:
                values.append(value)
            t += step
        if not values:
            return None
        if query.aggregation == "last":
            return values[-1]
        return _aggregate(query.aggregation, values)


def _aggregate(how: str, values: list[float]) -> float:
    if how == "sum":
        return sum(values)
    if how == "min":
        return min(values)
    if how == "max":
        return max(values)
    return sum(values) / len(values)
