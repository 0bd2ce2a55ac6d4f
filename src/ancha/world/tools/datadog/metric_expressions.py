"""Metric arithmetic and group-by, as Datadog's v1 query language writes them.

``avg:system.cpu.user{env:prod} by {host}``, ``sum:a{*} + sum:b{*}``,
``sum:errors{*} / sum:requests{*} * 100``, ``system.cpu.idle{*}`` (no space
aggregation: ``avg``), with ``.as_count()``, ``.as_rate()``, ``.rollup(...)`` and
``.fill(...)`` read and not applied, numbers, ``+ - * /``, parentheses and ``abs(...)``.

An expression evaluates to series keyed by group: ``()`` when nothing groups, else the
group's tags (``("host:web-1",)``). In a binary operation an ungrouped side (a number, or
a metric without ``by``) applies to every group of the other side; two grouped sides pair
equal groups. A bucket where a side has no value, or a division by zero, has no point.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import re2

from ancha.world.kernel.query_limits import MAX_QUERY_DEPTH, TOO_DEEP, too_long
from ancha.world.tools.datadog.metrics import (
    RE2_OPTIONS,
    MetricQuery,
    MetricStore,
    parse_metric_query,
    re2_text,
)

Group = tuple[str, ...]
Grouped = dict[Group, list[float | None]]
"""Per group, one value (or None) per time bucket."""

_MODIFIERS = (".as_count()", ".as_rate()")
_FUNCTIONS: dict[str, Callable[[float], float]] = {"abs": abs}
_OPS: dict[str, Callable[[float, float], float | None]] = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": lambda a, b: a / b if b != 0 else None,
}


@dataclass(frozen=True, slots=True)
class Term:
    metric: MetricQuery


@dataclass(frozen=True, slots=True)
class Number:
    value: float


@dataclass(frozen=True, slots=True)
class Binary:
    op: str
    left: Node
    right: Node


@dataclass(frozen=True, slots=True)
class Function:
    name: str
    arg: Node


Node = Term | Number | Binary | Function


@dataclass(frozen=True, slots=True)
class Expression:
    text: str
    node: Node
    metrics: tuple[MetricQuery, ...]

    @property
    def single(self) -> MetricQuery | None:
        """The metric when the expression is just one metric query."""
        return self.node.metric if isinstance(self.node, Term) else None

    @property
    def by(self) -> tuple[str, ...]:
        tags: list[str] = []
        for metric in self.metrics:
            tags.extend(t for t in metric.by if t not in tags)
        return tuple(tags)


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.metrics: list[MetricQuery] = []
        self.depth = 0

    def _skip(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def _peek(self) -> str:
        self._skip()
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def expression(self) -> Node:
        node = self.term()
        while self._peek() in ("+", "-"):
            op = self.text[self.pos]
            self.pos += 1
            node = Binary(op, node, self.term())
        return node

    def term(self) -> Node:
        node = self.factor()
        while self._peek() in ("*", "/"):
            op = self.text[self.pos]
            self.pos += 1
            node = Binary(op, node, self.factor())
        return node

    def factor(self) -> Node:
        self.depth += 1
        try:
            return self._factor()
        finally:
            self.depth -= 1

    def _factor(self) -> Node:
        if self.depth > MAX_QUERY_DEPTH:
            raise ValueError(TOO_DEEP)
        char = self._peek()
        if char == "(":
            self.pos += 1
            node = self.expression()
            if self._peek() != ")":
                raise ValueError("unbalanced parentheses")
            self.pos += 1
            return node
        if char == "-":
            self.pos += 1
            return Binary("-", Number(0.0), self.factor())
        if char.isdigit() or char == ".":
            start = self.pos
            while self.pos < len(self.text) and (self.text[self.pos].isdigit() or self.text[self.pos] == "."):
                self.pos += 1
            return Number(float(self.text[start : self.pos]))
        if char.isalpha() or char == "_":
            start = self.pos
            while self.pos < len(self.text) and (
                self.text[self.pos].isalnum() or self.text[self.pos] in "_.:"
            ):
                self.pos += 1
            word = self.text[start : self.pos]
            if word in _FUNCTIONS and self._peek() == "(":
                self.pos += 1
                arg = self.expression()
                if self._peek() != ")":
                    raise ValueError("unbalanced parentheses")
                self.pos += 1
                return Function(word, arg)
            return self.metric(start)
        raise ValueError(f"unexpected {char!r}")

    def metric(self, start: int) -> Node:
        """``[space:]name{scope}[ by {tags}][.rollup(..)|.as_count()|...]`` from ``start``."""
        close = self.text.find("}", self.pos)
        if self._peek() != "{" or close < 0:
            raise ValueError("a metric needs a {scope}")
        self.pos = close + 1
        save = self.pos
        self._skip()
        if self.text.startswith("by", self.pos):
            self.pos += 2
            if self._peek() == "{" and self.text.find("}", self.pos) >= 0:
                self.pos = self.text.find("}", self.pos) + 1
            else:
                self.pos = save
        else:
            self.pos = save
        while True:
            self._skip()
            rest = self.text[self.pos :]
            modifier = next((m for m in _MODIFIERS if rest.startswith(m)), None)
            if modifier:
                self.pos += len(modifier)
                continue
            if rest.startswith((".rollup(", ".fill(")):
                close = self.text.find(")", self.pos)
                if close < 0:
                    raise ValueError("unbalanced parentheses")
                self.pos = close + 1
                continue
            break
        text = self.text[start : self.pos]
        for modifier in _MODIFIERS:
            text = text.replace(modifier, "")
        metric = parse_metric_query(_strip_calls(text))
        if metric is None:
            raise ValueError(f"unable to parse {text}")
        self.metrics.append(metric)
        return Term(metric)


def _strip_calls(text: str) -> str:
    """``.rollup(...)`` and ``.fill(...)`` dropped: the metric parser reads the rest."""
    for call in (".fill(",):
        at = text.find(call)
        if at >= 0:
            close = text.find(")", at)
            text = text[:at] + text[close + 1 :]
    return text


def parse_expression(text: str) -> Expression | None:
    """The expression, or None when it is not one the replica reads (or past the shared limit)."""
    if not text.strip() or too_long(text):
        return None
    parser = _Parser(text)
    try:
        node = parser.expression()
    except (ValueError, IndexError):
        return None
    if parser._peek():
        return None
    return Expression(text.strip(), node, tuple(parser.metrics))


def combine(node: Node, leaf: Callable[[MetricQuery], Grouped], width: int) -> Grouped:
    """Evaluate ``node`` over ``width`` buckets, reading each metric through ``leaf``."""
    if isinstance(node, Term):
        return leaf(node.metric)
    if isinstance(node, Number):
        return {(): [node.value] * width}
    if isinstance(node, Function):
        inner = combine(node.arg, leaf, width)
        fn = _FUNCTIONS[node.name]
        return {g: [None if v is None else fn(v) for v in values] for g, values in inner.items()}
    left, right = combine(node.left, leaf, width), combine(node.right, leaf, width)
    op = _OPS[node.op]
    out: Grouped = {}
    for group, a_values, b_values in _pairs(left, right):
        out[group] = [
            None if a is None or b is None else op(a, b) for a, b in zip(a_values, b_values, strict=True)
        ]
    return out


def _pairs(left: Grouped, right: Grouped) -> list[tuple[Group, list[float | None], list[float | None]]]:
    if () in left and len(left) == 1:
        return [(g, left[()], values) for g, values in right.items()]
    if () in right and len(right) == 1:
        return [(g, values, right[()]) for g, values in left.items()]
    return [(g, values, right[g]) for g, values in left.items() if g in right]


_MONITOR = re2.compile(
    r"^\s*(?P<agg>avg|max|min|sum|last)\(\s*(?:last_(?P<last>\d+)(?P<unit>mo|[smhdwy])|current_1(?P<current>mo|[hdwy]))"
    r"\s*\)\s*:\s*(?P<expr>.+?)\s*(?P<op>>=|<=|!=|==|>|<)\s*(?P<threshold>-?\d+(?:\.\d+)?)\s*$",
    RE2_OPTIONS,
)
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "mo": 2592000, "y": 31536000}
MAX_WINDOW = 2 * 31536000


@dataclass(frozen=True, slots=True)
class MonitorQuery:
    """``avg(last_5m):avg:orders.latency.p99{*} by {host} > 2000`` as the replica evaluates it.

    A calendar window (``current_1mo``) is read as the trailing window of that length."""

    aggregation: str
    window: float
    expression: Expression
    op: str
    threshold: float

    @property
    def metric(self) -> MetricQuery:
        """The first metric the expression reads (its name and scope describe the monitor)."""
        return self.expression.metrics[0]

    @property
    def metric_names(self) -> set[str]:
        return {m.name for m in self.expression.metrics}

    def crosses(self, value: float, threshold: float | None = None) -> bool:
        limit = self.threshold if threshold is None else threshold
        return {
            ">": value > limit,
            ">=": value >= limit,
            "<": value < limit,
            "<=": value <= limit,
            "==": value == limit,
            "!=": value != limit,
        }[self.op]


def parse_monitor_query(text: str) -> MonitorQuery | None:
    """None when not a metric query the replica evaluates (or past the shared query length)."""
    if not text or too_long(text):
        return None
    match = _MONITOR.match(re2_text(text))
    if match is None:
        return None
    expression = parse_expression(match["expr"])
    if expression is None or not expression.metrics:
        return None
    if match["current"]:
        window = float(_UNIT_SECONDS[match["current"]])
    else:
        window = int(match["last"]) * _UNIT_SECONDS[match["unit"]]
        if window <= 0 or window > MAX_WINDOW:
            return None
    return MonitorQuery(match["agg"], float(window), expression, match["op"], float(match["threshold"]))


def window_values(store: MetricStore, query: MonitorQuery, now: float) -> dict[Group, float]:
    """Per group (``()`` when the query does not group), the query's aggregate over its window
    ending at ``now``; a group with no value in the window is left out (no data)."""
    step = max(60.0, query.window / 30)
    buckets: list[tuple[float, float]] = []
    t = now - query.window
    while t < now - 1e-9:
        buckets.append((t, min(t + step, now)))
        t += step
    grouped = combine(query.expression.node, lambda m: store.grouped(m, buckets), len(buckets))
    out: dict[Group, float] = {}
    for group, values in grouped.items():
        present = [v for v in values if v is not None]
        if not present:
            continue
        if query.aggregation == "last":
            out[group] = present[-1]
        elif query.aggregation == "sum":
            out[group] = sum(present)
        elif query.aggregation == "min":
            out[group] = min(present)
        elif query.aggregation == "max":
            out[group] = max(present)
        else:
            out[group] = sum(present) / len(present)
    return out


def timeseries(
    store: MetricStore, text: str, start: float, end: float, now: float
) -> tuple[list[dict[str, Any]], list[str]] | None:
    """``GET /api/v1/query``'s ``series`` (one per group with points) and ``group_by`` for
    ``text`` over [start, min(end, now)]; None when the replica cannot read ``text``."""
    expression = parse_expression(text)
    if expression is None or not expression.metrics:
        return None
    interval, buckets = store.buckets(start, end, now)
    grouped = combine(expression.node, lambda m: store.grouped(m, buckets), len(buckets)) if buckets else {}
    single = expression.single
    first = expression.metrics[0]
    series: list[dict[str, Any]] = []
    for group in sorted(grouped):
        points = [
            [t0 * 1000.0, value]
            for (t0, _), value in zip(buckets, grouped[group], strict=True)
            if value is not None
        ]
        if not points:
            continue
        name = single.name if single is not None else expression.text
        scope = [*first.scope, *group] if single is not None else [*group] or list(first.scope)
        series.append(
            {
                "aggr": first.space,
                "metric": name,
                "display_name": name,
                "expression": render(expression, group),
                "scope": ",".join(scope) or "*",
                "tag_set": list(group),
                "query_index": 0,
                "interval": interval,
                "length": len(points),
                "start": int(points[0][0]),
                "end": int(points[-1][0] + interval * 1000 - 1),
                "pointlist": points,
            }
        )
    return series, list(expression.by)


def render(expression: Expression, group: Group) -> str:
    """The expression as Datadog names one group's series: ``avg:cpu{host:a}``."""
    if not group:
        return expression.text
    parts: list[str] = []
    _render(expression.node, group, parts)
    return "".join(parts)


def _render(node: Node, group: Group, out: list[str]) -> None:
    if isinstance(node, Term):
        metric = node.metric
        scope = [*metric.scope, *(t for t in group if t.split(":", 1)[0] in metric.by)] or ["*"]
        out.append(f"{metric.space + ':' if metric.space else ''}{metric.name}{{{','.join(scope)}}}")
    elif isinstance(node, Number):
        out.append(f"{node.value:g}")
    elif isinstance(node, Function):
        out.append(f"{node.name}(")
        _render(node.arg, group, out)
        out.append(")")
    else:
        _render(node.left, group, out)
        out.append(f" {node.op} ")
        _render(node.right, group, out)
