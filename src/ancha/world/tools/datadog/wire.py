"""Datadog's time formats and id shapes, in one place."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from ancha.durations import parse_duration
from ancha.world.kernel.plain_numbers import is_plain_int


def iso_micro(t: float) -> str:
    """``2026-01-05T09:00:00.000000+00:00``: monitors' created / modified, downtimes."""
    return datetime.fromtimestamp(t, UTC).isoformat(timespec="microseconds")


def iso_seconds(t: float) -> str:
    """``2026-01-05T09:00:00+00:00``: overall_state_modified."""
    return datetime.fromtimestamp(t, UTC).isoformat(timespec="seconds")


def iso_millis_z(t: float) -> str:
    """``2026-01-05T09:00:00.000Z``: logs' and v2 events' timestamps."""
    return datetime.fromtimestamp(t, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


_RELATIVE = re.compile(r"^now(?:\s*([+-])\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w|mo)?)?$")
_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "mo": 2592000, None: 1}


def parse_when(text: str, now: float) -> float | None:
    """A time as Datadog's search APIs take it: ``now``, ``now-15m``, ISO 8601, or epoch
    milliseconds (digits); None when it is none of them."""
    text = text.strip()
    match = _RELATIVE.match(text)
    if match:
        sign, amount, unit = match.groups()
        if sign is None:
            return now
        delta = float(amount) * _UNITS[unit]
        return now - delta if sign == "-" else now + delta
    if is_plain_int(text.lstrip("-")):
        value = int(text)
        return value / 1000 if abs(value) > 10**11 else float(value)
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return (parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).timestamp()


def parse_iso(text: object) -> float | None:
    """An ISO 8601 time (``Z`` allowed) as epoch seconds; None when it is not one."""
    if not isinstance(text, str):
        return None
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return (parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).timestamp()


def window_seconds(text: str) -> float:
    """``5m`` / ``1h`` / ``1d`` (a monitor's ``last_5m``) as seconds."""
    return parse_duration(text)
