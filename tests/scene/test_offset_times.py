"""Seed times written as offsets from clock.start: one-unit offsets (the common case of a
long messages_file) mean exactly what the general duration parser says they mean."""

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ancha.durations import parse_signed_offset
from ancha.scene.sources import parse_time

START = datetime(2026, 1, 5, 9, tzinfo=UTC)


@pytest.mark.parametrize("text", ["-90m", "10m", "+10m", " -3d ", "-0s", "-36h", "-2h30m", "-1m30s", "-500ms",
                                  "-315360000s", "-000000000090m", "-0000000000090m", "-\u0669m"])
def test_offset_is_start_plus_the_signed_duration(text: str) -> None:
    assert parse_time(text, START) == START + timedelta(seconds=parse_signed_offset(text))


@given(sign=st.sampled_from(["", "+", "-"]), count=st.integers(0, 10**13), unit=st.sampled_from("dhms"))
def test_one_unit_offset__the_duration_parser_s_value_or_refused_as_it_is(sign: str, count: int, unit: str) -> None:
    text = f"{sign}{count}{unit}"
    try:
        expected = START + timedelta(seconds=parse_signed_offset(text))
    except ValueError:
        with pytest.raises(ValueError):
            parse_time(text, START)
    else:
        assert parse_time(text, START) == expected


def test_offset_past_ten_years_is_refused() -> None:
    with pytest.raises(ValueError):
        parse_time("-3651d", START)


def test_iso_time_is_still_read_as_a_time() -> None:
    assert parse_time("2026-01-04T09:00:00Z", START) == START - timedelta(days=1)
