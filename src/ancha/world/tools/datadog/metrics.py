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

from ancha.world.kernel.query_limits import too_long

MAX_POINTS = 1500
"""A query answers at most about this many points (Datadog rolls up longer ranges)."""

RE2_OPTIONS = re2.Options()
RE2_OPTIONS.log_errors = False
# The query regexes run on what agents write, so they are RE2's (linear time): with Python's
# backtracking engine, ``avg(last_5m):`` and 4,000 spaces held the server for five minutes.
_METRIC = re2.compile(
    r"^\s*(?:(?P<space>avg|sum|min|max):)?(?P<name>[A-Za-z][A-Za-z0-9_.]*)\s*\{(?P<scope>[^}]*)\}\s*"
    r"(?:by\s*\{(?P<by>[^}]*)\}\s*)?(?:\.rollup\([^)]*\)\s*)?$",
    RE2_OPTIONS,
)


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
    space: str | None
    """``avg``/``sum``/``min``/``max``; None when the query names none (read as ``avg``)."""
    name: str
    scope: tuple[str, ...]
    """Tags a point must carry (``*`` or empty: all)."""
    text: str
    by: tuple[str, ...] = ()
    """Tag keys the query groups by (``by {host}``)."""

    @property
    def scope_text(self) -> str:
        return ",".join(self.scope) or "*"


def parse_metric_query(text: str) -> MetricQuery | None:
    """``avg:orders.latency.p99{env:prod}`` (optionally ``by {host}``; the space aggregation
    may be left out); None when unsupported or past the shared query length."""
    if too_long(text):
        return None
    match = _METRIC.match(re2_text(text))
    if match is None:
        return None
    scope = tuple(s.strip() for s in match["scope"].split(",") if s.strip() and s.strip() != "*")
    by = tuple(t.strip() for t in (match["by"] or "").split(",") if t.strip() and t.strip() != "*")
    return MetricQuery(match["space"], match["name"], scope, text.strip(), by)


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
        digest = hashlib.blake2b(
            self.seed + name.encode() + struct.pack(">d", bucket), digest_size=8
        ).digest()
        return (int.from_bytes(digest, "big") / 2**64) * 2 - 1

    def bucket_value(self, metric: Metric, query: MetricQuery, t0: float, t1: float) -> float | None:
        """The metric's value over [t0, t1) as ``query`` reads it (see the module's doc)."""
        held = metric.override_at(t0, t1)
        if held is not None:
            return held
        lo, hi = bisect.bisect_left(metric.times, t0), bisect.bisect_left(metric.times, t1)
        values = [
            v for _, v, tags in metric.points[lo:hi] if not query.scope or all(s in tags for s in query.scope)
        ]
        if values:
            return _aggregate(query.space or "avg", values)
        if metric.baseline is not None:
            return metric.baseline + metric.noise * self._noise(metric.name, t0)
        return None

    def buckets(self, start: float, end: float, now: float) -> tuple[int, list[tuple[float, float]]]:
        """(interval s, [(t0, t1), ...]) covering [start, min(end, now)], at most ``MAX_POINTS``."""
        end = min(end, now)
        if end <= start:
            return 60, []
        step = 60.0
        while (end - start) / step > MAX_POINTS:
            step *= 2 if step < 3600 else 1.5
        interval = int(step)
        t = start - start % interval
        out: list[tuple[float, float]] = []
        while t < end:
            out.append((t, min(t + interval, end)))
            t += interval
        return interval, out

    def grouped(
        self, query: MetricQuery, buckets: list[tuple[float, float]]
    ) -> dict[tuple[str, ...], list[float | None]]:
        """Per group (``()`` when the query does not group), the value in each bucket.

        A group is the query's ``by`` tags of a point that carries all of them; a fault's held
        value covers every group the metric has shown in the scope; the seed's baseline,
        which carries no tags, forms no group.
        """
        metric = self.metrics.get(query.name)
        if metric is None:
            return {}
        if not query.by:
            values = [self.bucket_value(metric, query, t0, t1) for t0, t1 in buckets]
            return {(): values} if any(v is not None for v in values) else {}
        known: dict[tuple[str, ...], None] = {}
        for _, _, tags in metric.points:
            key = _group_key(query, tags)
            if key is not None:
                known.setdefault(key)
        out: dict[tuple[str, ...], list[float | None]] = {key: [None] * len(buckets) for key in known}
        for i, (t0, t1) in enumerate(buckets):
            held = metric.override_at(t0, t1)
            if held is not None:
                for key in out:
                    out[key][i] = held
                continue
            lo, hi = bisect.bisect_left(metric.times, t0), bisect.bisect_left(metric.times, t1)
            by_group: dict[tuple[str, ...], list[float]] = {}
            for _, value, tags in metric.points[lo:hi]:
                key = _group_key(query, tags)
                if key is not None:
                    by_group.setdefault(key, []).append(value)
            for key, found in by_group.items():
                out[key][i] = _aggregate(query.space or "avg", found)
        return out

    def series(
        self, query: MetricQuery, start: float, end: float, now: float
    ) -> tuple[int, list[list[float]]]:
        """(interval s, pointlist [[epoch ms, value], ...]) over [start, min(end, now)]."""
        interval, buckets = self.buckets(start, end, now)
        metric = self.metrics.get(query.name)
        if metric is None or not buckets:
            return interval, []
        points: list[list[float]] = []
        for t0, t1 in buckets:
            value = self.bucket_value(metric, query, t0, t1)
            if value is not None:
                points.append([t0 * 1000.0, value])
        return interval, points


def _group_key(query: MetricQuery, tags: tuple[str, ...]) -> tuple[str, ...] | None:
    """The point's group under ``query`` (None: outside the scope, or lacking a ``by`` tag)."""
    if query.scope and not all(s in tags for s in query.scope):
        return None
    key: list[str] = []
    for name in query.by:
        found = next((t for t in tags if t.split(":", 1)[0] == name), None)
        if found is None:
            return None
        key.append(found if ":" in found else f"{found}:")
    return tuple(key)


def _aggregate(how: str, values: list[float]) -> float:
    if how == "sum":
        return sum(values)
    if how == "min":
        return min(values)
    if how == "max":
        return max(values)
    return sum(values) / len(values)
