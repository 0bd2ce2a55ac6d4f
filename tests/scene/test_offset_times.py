"""Seed times written as offsets from clock.start: one-unit offsets (the common case of a
long messages_file) mean exactly what the general duration parser says they mean."""

from datetime import UTC, datetime, timedelta

import pytest

from ancha.durations import parse_signed_offset
from ancha.scene.sources import parse_time

START = datetime(2026, 1, 5, 9, tzinfo=UTC)


@pytest.mark.parametrize("text", ["-90m", "10m", "+10m", " -3d ", "-0s", "-36h", "-2h30m", "-1m30s", "-500ms"])
def test_offset_is_start_plus_the_signed_duration(text: str) -> None:
    assert parse_time(text, START) == START + timedelta(seconds=parse_signed_offset(text))


def test_offset_past_ten_years_is_refused() -> None:
    with pytest.raises(ValueError):
        parse_time("-3651d", START)


def test_iso_time_is_still_read_as_a_time() -> None:
    assert parse_time("2026-01-04T09:00:00Z", START) == START - timedelta(days=1)
