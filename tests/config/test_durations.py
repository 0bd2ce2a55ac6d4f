from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ancha.durations import format_duration, parse_duration, parse_signed_offset


@pytest.mark.parametrize(("text", "seconds"), [
    ("500ms", 0.5), ("10s", 10.0), ("1m30s", 90.0), ("1h", 3600.0), ("2d", 172800.0), ("1h30m", 5400.0),
    ("0s", 0.0), ("1.5s", 1.5),
])
def test_parse_duration(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["10", "", "s", "10x", "30s1m", "1m1m", "-5s", "1 m"])
def test_parse_duration__rejects_with_message(text: str) -> None:
    with pytest.raises(ValueError, match="got"):
        parse_duration(text)


def test_parse_signed_offset() -> None:
    assert parse_signed_offset("-3d") == -259200.0
    assert parse_signed_offset("-2h30m") == -9000.0
    assert parse_signed_offset("10m") == 600.0
    assert parse_signed_offset("+10m") == 600.0
    with pytest.raises(ValueError, match="signed duration"):
        parse_signed_offset("yesterday")


@pytest.mark.parametrize(("seconds", "text"), [(90, "1m30s"), (0.5, "500ms"), (0, "0s"), (3600, "1h"),
                                               (172800, "2d"), (-60, "-1m")])
def test_format_duration(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text


@given(st.integers(min_value=0, max_value=10**10))
def test_format_then_parse__round_trips_milliseconds(millis: int) -> None:
    assert parse_duration(format_duration(millis / 1000)) == pytest.approx(millis / 1000)
