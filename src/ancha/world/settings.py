"""The numbers an environment runs on, checked before anything is built.

A scene's ``clock`` and the runner's ``agent`` settings reach a server as JSON, from
``ancha run`` or from any client of the control API. NaN, infinities, 1e308 or a year
past 9000 pass JSON and pydantic, then break the clock's arithmetic: a date overflow on
the first status, a ticker spinning on a NaN deadline. ``check_settings`` refuses them
with a message naming the setting and its range.
"""

from __future__ import annotations

import math
from datetime import timedelta
from typing import Any

from ancha.durations import parse_duration
from ancha.scene.model import Scene

SPEED_RANGE = (0.0, 100_000.0)
"""``clock.speed``: simulated seconds per real second, above 0 and at most 100,000."""
LIMIT_RANGE = (0.0, 366 * 86400.0)
"""``clock.limit``: simulated seconds, above 0 and at most 366 days."""
IDLE_RANGE = (0.0, 366 * 86400.0)
"""``agent.idle``: simulated seconds of quiet, above 0 and at most 366 days."""
START_YEARS = (1970, 2200)
"""``clock.start``: a year from 1970 to 2200 (UTC)."""


class InvalidSettings(ValueError):
    """An environment setting out of its range: the environment is not built."""


def check_settings(scene: Scene, agent: dict[str, Any] | None) -> None:
    """Raise ``InvalidSettings`` naming the first setting out of range."""
    clock = scene.clock
    _in_range("clock.speed", clock.speed, SPEED_RANGE, "e.g. 1 (real time) or 60 (a minute per second)")
    _in_range("clock.limit", clock.limit, LIMIT_RANGE, "e.g. 3600 (an hour)")
    low, high = START_YEARS
    if not low <= clock.start.year <= high:
        raise InvalidSettings(f"clock.start must be in the years {low} to {high}, got {clock.start.isoformat()}")
    end = clock.start + timedelta(seconds=clock.limit)
    if end.year > high:
        raise InvalidSettings(f"clock.start + clock.limit must end by the year {high}, got {end.isoformat()}")
    agent_idle(agent)


def agent_idle(agent: dict[str, Any] | None, default: float = 10.0) -> float:
    """``agent.idle`` in seconds (a number, or a duration such as ``10s``), checked."""
    value = (agent or {}).get("idle")
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise InvalidSettings(f"agent.idle must be seconds or a duration such as 10s, got {value!r}")
    try:
        seconds = parse_duration(value) if isinstance(value, str) else float(value)
    except (ValueError, OverflowError) as exc:
        raise InvalidSettings(f"agent.idle: {exc}") from exc
    _in_range("agent.idle", seconds, IDLE_RANGE, "e.g. 10s")
    return seconds


def _in_range(name: str, value: float, bounds: tuple[float, float], example: str) -> None:
    low, high = bounds
    if not (math.isfinite(value) and low < value <= high):
        raise InvalidSettings(f"{name} must be a finite number above {low:g} and at most {high:g}, "
                              f"got {value!r} ({example})")
