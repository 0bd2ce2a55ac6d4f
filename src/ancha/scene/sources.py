"""Where a value came from (file and line), so every scene problem points back at it."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from ancha.durations import MAX_SECONDS, UNITS, parse_signed_offset
from ancha.errors import Problem


@dataclass(slots=True)
class Source:
    """A file being validated: its displayed name and how to find a dotted path's line."""

    file: str
    line_of: Callable[[str], int | None]
    problems: list[Problem] = field(default_factory=list)

    def add(self, path: str, message: str, hint: str | None = None) -> None:
        self.problems.append(Problem(path, message, hint, self.line_of(path), self.file))

    def reporter(self, path: str) -> Callable[[str, str | None], None]:
        return lambda message, hint: self.add(path, message, hint)


_ONE_UNIT = re.compile(r"([+-]?)(\d{1,12})([dhms])")
"""An offset of one whole unit (``-90m``): the common case of a long history, parsed directly."""
_UNIT_SECONDS = {unit: int(UNITS[unit]) for unit in "dhms"}


def one_unit_offset(text: str) -> int | None:
    """The signed whole seconds of an offset of one unit (``-90m``, ``3d``): the common case
    of a long history, read without the general parser; None for anything else, or past the
    longest offset (the general parser then says what is wrong)."""
    simple = _ONE_UNIT.fullmatch(text)
    if simple is None:
        return None
    sign, count, unit = simple.groups()
    seconds = int(count) * _UNIT_SECONDS[unit]  # whole seconds: the same value float arithmetic gives
    if seconds > MAX_SECONDS:
        return None
    return -seconds if sign == "-" else seconds


def parse_time(value: object, start: datetime) -> datetime:
    """An ISO time, or a signed duration from ``start`` (``-3d``, ``-2h30m``, ``10m``), in UTC."""
    if isinstance(value, datetime):
        return (value if value.tzinfo else value.replace(tzinfo=UTC)).astimezone(UTC)
    if isinstance(value, str):
        text = value.strip()
        seconds = one_unit_offset(text)
        if seconds is not None:
            return start + timedelta(0, seconds)
        try:
            return start + timedelta(seconds=parse_signed_offset(text))
        except (ValueError, OverflowError):
            pass
        try:
            parsed = datetime.fromisoformat(text)
        except ValueError:
            pass
        else:
            return (parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).astimezone(UTC)
    raise ValueError(f"expected an ISO time such as 2026-01-05T09:00:00Z or an offset from clock.start "
                     f"such as -3d, got {value!r}")
