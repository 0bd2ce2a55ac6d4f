"""Every number a user writes has a range, and a value outside it is a problem (exit 2), never
a traceback, a hang or memory growing without end."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.runner.test_run_cli import ancha
from tests.scene.scene_files import SLACK, problems_of

from ancha.config import ConfigInvalid, ConfigOverrides, load_config
from ancha.durations import parse_duration
from ancha.world.registry import config_catalog


def config_problems(tmp_path: Path, text: str, overrides: ConfigOverrides | None = None) -> list[str]:
    (tmp_path / "ancha.yaml").write_text(text)
    with pytest.raises(ConfigInvalid) as info:
        load_config(None, tmp_path, overrides or ConfigOverrides(), catalog=config_catalog())
    return [f"{p.path}: {p.message}" for p in info.value.problems]


@pytest.mark.parametrize(("text", "expected"), [
    ("trials: 100000000000000000000\n", "trials: expected at most 10000, got 100000000000000000000"),
    ("parallel: 100000\n", "parallel: expected at most 256, got 100000"),
    ("trials: 0\n", "trials: expected a positive integer, got 0"),
    ("agent:\n  command: x\n  idle: " + "9" * 400 + "s\n", "agent.idle: expected a duration of at most 366d"),
    ("agent:\n  command: x\n  startup_timeout: 0s\n", "agent.startup_timeout: expected a duration of more than 0s"),
    ("agent:\n  command: x\n  idle: 367d\n", "agent.idle: expected a duration of at most 366d"),
])
def test_config__numbers_out_of_range_are_problems(tmp_path: Path, text: str, expected: str) -> None:
    assert any(p.startswith(expected) for p in config_problems(tmp_path, text)), config_problems(tmp_path, text)


def test_config__overrides_out_of_range_are_problems(tmp_path: Path) -> None:
    problems = config_problems(tmp_path, "trials: 1\n", ConfigOverrides(trials=10**20, parallel=10**6))
    assert problems == ["-n: expected an integer from 1 to 10000, got 100000000000000000000",
                        "--parallel: expected an integer from 1 to 256, got 1000000"]


@pytest.mark.parametrize(("clock", "path", "message"), [
    ("{ speed: .inf }", "clock.speed", "expected a number above 0 and at most 100000"),
    ("{ speed: .nan }", "clock.speed", "expected a number above 0 and at most 100000"),
    ("{ speed: 1e308 }", "clock.speed", "expected a number above 0 and at most 100000"),
    ("{ speed: 0 }", "clock.speed", "expected a number above 0 and at most 100000"),
    ("{ limit: " + "9" * 400 + "s }", "clock.limit", "expected a duration of at most 366d"),
    ("{ limit: 367d }", "clock.limit", "expected a duration of at most 366d"),
    ("{ limit: 0s }", "clock.limit", "expected a duration of more than 0s"),
    ("{ start: 9999-12-31T00:00:00Z }", "clock.start", "expected a time from 1970 to 2200"),
    ("{ start: 1000-01-01T00:00:00Z }", "clock.start", "expected a time from 1970 to 2200"),
])
def test_scene_clock__out_of_range_is_a_problem(tmp_path: Path, clock: str, path: str, message: str) -> None:
    problems = problems_of(tmp_path, f"name: x\nclock: {clock}\n")
    assert [(p.path, p.message[:len(message)]) for p in problems] == [(path, message)]


@pytest.mark.parametrize("at", ["-" + "9" * 400 + "d", "9" * 400 + "s"])
def test_scene_times__huge_offsets_are_problems(tmp_path: Path, at: str) -> None:
    problems = problems_of(tmp_path, SLACK.replace("at: -3d", f"at: {at}"))
    assert [p.path for p in problems] == ["world.slack.messages[0].at"]


def test_scene_durations__huge_is_a_problem_not_a_traceback(tmp_path: Path) -> None:
    text = SLACK + "checks:\n  - { id: a, within: { event: { message: { from: $slack_bot } }, limit: " + "9" * 400 + "s } }\n"
    problems = problems_of(tmp_path, text)
    assert [p.path for p in problems] == ["checks[0].within.limit"]
    assert "at most 3650d" in problems[0].message


def test_seed_numbers__non_finite_and_huge_are_problems(tmp_path: Path) -> None:
    text = ("world:\n  datadog:\n    metrics:\n      m: { points: [[-1m, .inf]] }\n"
            "      n: { baseline: " + "9" * 30 + " }\n")
    found = {p.path: p.message for p in problems_of(tmp_path, text)}
    assert found["world.datadog.metrics.m.points[0]"] == "expected a finite number, got inf"
    assert found["world.datadog.metrics.n.baseline"].startswith("expected a number of at most 9,007,199,254,740,992")


def test_durations__are_finite_and_at_most_ten_years() -> None:
    with pytest.raises(ValueError, match="at most 3650d"):
        parse_duration("9" * 400 + "s")
    assert parse_duration("3650d") == 3650 * 86400


def test_run__infinite_speed_exits_2(tmp_path: Path) -> None:
    (tmp_path / "scenes" / "a").mkdir(parents=True)
    (tmp_path / "scenes" / "a" / "scene.yaml").write_text(
        "name: a\ntask: hi\nclock: { speed: .inf }\nchecks: [{ id: c, trace: { called: GET /x } }]\n")
    (tmp_path / "ancha.yaml").write_text("agent:\n  command: \"true\"\ntrials: 1\n")
    result = ancha("run", cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "clock.speed" in result.stderr and "Traceback" not in result.stderr
