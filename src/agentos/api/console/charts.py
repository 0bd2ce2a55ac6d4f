"""A scene's pass rate over commits as an inline SVG (no script: the page's policy runs none inline)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

WIDTH, HEIGHT, PAD = 900, 220, 30


@dataclass(frozen=True)
class ChartPoint:
    x: float
    y: float
    rate: float
    label: str
    low: bool


@dataclass(frozen=True)
class Chart:
    width: int
    height: int
    points: list[ChartPoint]
    path: str
    gridlines: list[tuple[float, str]]


def pass_rate_chart(series: list[Any]) -> Chart:
    """Points of ``analysis.pass_rate_series`` (commit order) placed on a 0–100% axis."""
    count = len(series)
    inner_w, inner_h = WIDTH - 2 * PAD, HEIGHT - 2 * PAD
    points = []
    for index, point in enumerate(series):
        x = PAD + (inner_w * index / (count - 1) if count > 1 else inner_w / 2)
        y = PAD + inner_h * (1 - point.rate)
        label = f"{(point.commit or 'no commit')[:10]}: {point.passed}/{point.trials} passed ({point.rate:.0%}), {point.runs} run(s)"
        points.append(ChartPoint(round(x, 1), round(y, 1), point.rate, label, point.rate < 0.5))
    path = " ".join(f"{'M' if i == 0 else 'L'}{p.x},{p.y}" for i, p in enumerate(points))
    gridlines = [(PAD + inner_h * (1 - level), f"{level:.0%}") for level in (0.0, 0.5, 1.0)]
    return Chart(WIDTH, HEIGHT, points, path, gridlines)
