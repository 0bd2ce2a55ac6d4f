"""Durations as users write them (``500ms``, ``10s``, ``1m30s``, ``1h``, ``2d``), as float seconds.

Units go from largest to smallest, each at most once, so ``1m30s`` is valid and
``30s1m`` is not: the written form stays unambiguous and matches ``format_duration``.
"""

from __future__ import annotations

import re

UNITS: dict[str, float] = {"d": 86400.0, "h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
EXAMPLES = "500ms, 10s or 1m30s"
MAX_SECONDS = 3650 * 86400.0
"""Every duration (and every offset from clock.start) is at most 3650d: ten years."""


class DurationTooLong(ValueError):
    """A duration past ``MAX_SECONDS`` (a 400-digit one, say): its message says the range."""

_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|d|h|m|s)")
_ORDER = list(UNITS)


def parse_duration(text: str) -> float:
    """``"1m30s"`` -> ``90.0``. Raises ``ValueError`` for anything but a unit-suffixed duration."""
    if not isinstance(text, str):
        raise ValueError(f"expected a duration such as {EXAMPLES}, got {text!r}")
    written = text.strip()
    total = 0.0
    pos = 0
    last = -1
    while pos < len(written):
        match = _PART.match(written, pos)
        if match is None:
            break
        rank = _ORDER.index(match.group(2))
        if rank <= last:
            raise ValueError(f"expected units from largest to smallest, each once (such as 1m30s), got {text!r}")
        last = rank
        total += float(match.group(1)) * UNITS[match.group(2)]
        pos = match.end()
    if not written or pos != len(written):
        raise ValueError(f"expected a duration such as {EXAMPLES}, got {text!r}")
    if not total <= MAX_SECONDS:  # also inf, from a number past float's range
        shown = text if len(text) <= 40 else text[:37] + "..."
        raise DurationTooLong(f"expected a duration of at most {format_duration(MAX_SECONDS)}, got {shown!r}")
    return total


def parse_signed_offset(text: str) -> float:
    """``"-3d"`` -> ``-259200.0``; ``"10m"`` and ``"+10m"`` -> ``600.0``."""
    if not isinstance(text, str):
        raise ValueError(f"expected a signed duration such as -3d, -2h30m or 10m, got {text!r}")
    written = text.strip()
    sign = -1.0 if written.startswith("-") else 1.0
    try:
        return sign * parse_duration(written.lstrip("+-") if written[:1] in "+-" else written)
    except DurationTooLong:
        raise
    except ValueError:
        raise ValueError(f"expected a signed duration such as -3d, -2h30m or 10m, got {text!r}") from None


def format_duration(seconds: float) -> str:
    """``90`` -> ``"1m30s"``; ``0.5`` -> ``"500ms"``; ``0`` -> ``"0s"``; negatives get a ``-``."""
    sign = "-" if seconds < 0 else ""
    millis = round(abs(seconds) * 1000)
    if millis == 0:
        return "0s"
    parts = []
    for unit in _ORDER:
        size = round(UNITS[unit] * 1000)
        count, millis = divmod(millis, size)
        if count:
            parts.append(f"{count}{unit}")
    return sign + "".join(parts)
