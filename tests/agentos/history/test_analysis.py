"""The run history's analysis on synthetic histories: flaky scenes ranked by how often they flip,
regressions found at the commit where a pass rate fell beyond its noise (and only there), and a
scene's pass rate per commit in commit order."""

from __future__ import annotations

import random
from collections.abc import Sequence
from datetime import datetime, timedelta

import pytest

from agentos.errors import BadRequest
from agentos.history.analysis import SceneOutcome, flaky_scenes, pass_rate_series, regressions

T0 = datetime(2025, 3, 1, 9, 0)


def _row(run_id: str, minute: int, scene: str, outcomes: Sequence[bool], *, commit: str | None = "c0",
         branch: str | None = "main") -> SceneOutcome:
    return SceneOutcome(run_id=run_id, started_at=T0 + timedelta(minutes=minute), commit=commit, branch=branch,
                        scene=scene, trials=len(outcomes), passed=sum(outcomes), outcomes=tuple(outcomes))


def _history(rng: random.Random, rates: Sequence[float], *, scene: str = "deploy", trials_per_run: int = 10,
             runs_per_commit: int = 2, branch: str = "main", start: int = 0, prefix: str = "") -> list[SceneOutcome]:
    """One commit per rate ("c0", "c1", ...), each run `runs_per_commit` times ("r<commit>-<k>"),
    one minute apart from minute `start`; each trial passes with the commit's rate. `prefix`
    goes before the commits' and runs' names."""
    rows = []
    for index, rate in enumerate(rates):
        for k in range(runs_per_commit):
            minute = start + index * runs_per_commit + k
            outcomes = [rng.random() < rate for _ in range(trials_per_run)]
            rows.append(_row(f"{prefix}r{index}-{k}", minute, scene, outcomes, commit=f"{prefix}c{index}",
                             branch=branch))
    return rows


# Regressions


def test_regressions__a_stable_scene_at_80_percent_over_30_commits__reports_none() -> None:
    rows = _history(random.Random(7), [0.8] * 30)

    assert regressions(rows) == []


def test_regressions__stable_scenes_raise_a_false_alarm_in_few_histories() -> None:
    # alpha bounds a false alarm's chance within any 10 commits, so about one 30-commit history
    # in ten raises one; testing each commit at p < 0.05 would raise one in about half of them.
    alarmed = sum(bool(regressions(_history(random.Random(seed), [0.8] * 30))) for seed in range(40))

    assert alarmed <= 8


def test_regressions__a_drop_from_95_to_40_percent__is_found_at_the_commit_that_dropped() -> None:
    rows = _history(random.Random(3), [0.95] * 17 + [0.4] * 13)

    [found] = regressions(rows)

    assert (found.scene, found.commit, found.previous_commit, found.branch) == ("deploy", "c17", "c16", "main")
    assert (found.last_good_run_id, found.first_bad_run_id) == ("r16-1", "r17-0")
    assert found.baseline_commits == 10
    assert (found.baseline_trials, found.trials) == (200, 20)
    assert found.baseline_rate == found.baseline_passed / 200 > 0.85
    assert found.rate == found.passed / 20 < found.baseline_rate - 0.2
    assert found.p_value < 0.05 / 10


def test_regressions__a_second_later_drop__is_found_too_oldest_first() -> None:
    rows = _history(random.Random(11), [0.95] * 12 + [0.5] * 12 + [0.05] * 8)

    found = regressions(rows)

    assert [(r.commit, r.previous_commit) for r in found] == [("c12", "c11"), ("c24", "c23")]
    assert found[1].last_good_run_id == "r23-1" and found[1].first_bad_run_id == "r24-0"
    # The second drop is measured against the commits after the first one.
    assert found[1].baseline_commits == 10 and 0.3 < found[1].baseline_rate < 0.7


def test_regressions__tiny_samples__are_not_flagged() -> None:
    four_then_three = [_row("a", 0, "s", [True, True, True, True, False], commit="c1"),
                       _row("b", 1, "s", [True, True, False, True, False], commit="c2")]
    one_then_none = [_row("a", 0, "s", [True], commit="c1"), _row("b", 1, "s", [False], commit="c2")]

    assert regressions(four_then_three) == []
    assert regressions(one_then_none) == []


def test_regressions__twenty_of_twenty_then_two_of_ten__is_flagged() -> None:
    rows = [_row("a", 0, "s", [True] * 20, commit="c1"),
            _row("b", 1, "s", [True, False, False, False, True, False, False, False, False, False], commit="c2")]

    [found] = regressions(rows)

    assert (found.commit, found.baseline_passed, found.baseline_trials, found.passed, found.trials) == (
        "c2", 20, 20, 2, 10)


def test_regressions__a_rise__is_not_a_regression() -> None:
    rows = _history(random.Random(5), [0.3] * 10 + [0.95] * 10)

    assert regressions(rows) == []


def test_regressions__with_a_branch__look_only_at_that_branchs_runs() -> None:
    main = _history(random.Random(3), [0.95] * 20, branch="main")
    feature = _history(random.Random(4), [0.1] * 3, branch="feature", start=100, prefix="f-")

    assert regressions(main + feature, branch="main") == []
    [found] = regressions(main + feature)
    assert (found.commit, found.branch, found.previous_commit) == ("f-c0", "feature", "c19")


def test_regressions__each_scene_is_scanned_on_its_own() -> None:
    steady = _history(random.Random(1), [0.9] * 20, scene="steady")
    broken = _history(random.Random(2), [0.95] * 10 + [0.2] * 10, scene="broken")

    assert [(r.scene, r.commit) for r in regressions(steady + broken)] == [("broken", "c10")]


def test_regressions__bad_alpha_or_window__say_what_is_expected() -> None:
    with pytest.raises(BadRequest, match="alpha"):
        regressions([], alpha=1.5)
    with pytest.raises(BadRequest, match="window"):
        regressions([], window=0)


# Flaky scenes


def _flaky_history(rng: random.Random) -> list[SceneOutcome]:
    rows = []
    for run in range(20):
        run_id = f"r{run}"
        rows += [_row(run_id, run, "coin", [rng.random() < 0.5 for _ in range(5)]),
                 _row(run_id, run, "mostly", [rng.random() < 0.9 for _ in range(5)]),
                 _row(run_id, run, "green", [True] * 5),
                 _row(run_id, run, "red", [False] * 5)]
    return rows


def test_flaky_scenes__a_coin_flip_ranks_above_a_90_percent_scene__steady_ones_left_out() -> None:
    found = flaky_scenes(_flaky_history(random.Random(2)))

    assert [scene.scene for scene in found] == ["coin", "mostly"]
    coin, mostly = found
    assert coin.flip_rate > 0.35 > 0.3 > mostly.flip_rate > 0
    assert (coin.runs, coin.trials) == (20, 100)
    assert 0.3 < coin.pass_rate < 0.7 < mostly.pass_rate < 1


def test_flaky_scenes__flips_count_changes_between_consecutive_trials_across_runs() -> None:
    rows = [_row("b", 2, "s", [False, True]),
            _row("a", 1, "s", [True, True, False]),  # started first: counted first
            _row("c", 3, "s", [True, True])]

    [scene] = flaky_scenes(rows)

    # T T F | F T | T T: two flips in six chances.
    assert (scene.flips, scene.flip_rate, scene.trials, scene.passed) == (2, 2 / 6, 7, 5)
    assert (scene.first_passed_run_id, scene.last_passed_run_id) == ("a", "c")
    assert (scene.first_failed_run_id, scene.last_failed_run_id) == ("a", "b")


def test_flaky_scenes__a_run_without_trial_order__counts_its_fewest_flips() -> None:
    unordered = SceneOutcome(run_id="b", started_at=T0 + timedelta(minutes=2), commit="c0", branch="main",
                             scene="s", trials=4, passed=2)
    rows = [_row("a", 1, "s", [False, False]), unordered, _row("c", 3, "s", [True])]

    [scene] = flaky_scenes(rows)

    # F F | F F T T | T: failures first continues the run before, passes last meets the run after.
    assert (scene.flips, scene.trials, scene.passed) == (1, 7, 3)


def test_flaky_scenes__equal_flip_rates__the_latest_failure_first_then_by_name() -> None:
    rows = [_row("r1", 1, "beta", [True, False]), _row("r1", 1, "alpha", [True, False]),
            _row("r2", 2, "gamma", [True, False]), _row("r2", 2, "delta", [True, True])]

    assert [scene.scene for scene in flaky_scenes(rows)] == ["gamma", "alpha", "beta"]


def test_flaky_scenes__only_the_last_runs_count() -> None:
    rows = [_row(f"r{run}", run, "s", [run >= 3] * 3) for run in range(10)]  # failed only in runs 0-2

    assert [scene.scene for scene in flaky_scenes(rows)] == ["s"]
    assert flaky_scenes(rows, last=7) == []
    assert flaky_scenes(rows, last=8)[0].first_failed_run_id == "r2"


def test_flaky_scenes__on_one_branch_or_one_commit() -> None:
    rows = [_row("m1", 1, "s", [True, True], commit="c1", branch="main"),
            _row("m2", 2, "s", [True, True], commit="c2", branch="main"),
            _row("f1", 3, "s", [True, False], commit="c3", branch="feature"),
            _row("f2", 4, "s", [True, True], commit="c4", branch="feature")]

    assert flaky_scenes(rows, branch="main") == []
    assert [scene.runs for scene in flaky_scenes(rows, branch="feature")] == [2]
    assert flaky_scenes(rows, commit="c4") == []
    assert [scene.last_failed_run_id for scene in flaky_scenes(rows, commit="c3")] == ["f1"]
    # The last 2 runs of all history are both on the feature branch.
    assert [scene.runs for scene in flaky_scenes(rows, last=2)] == [2]


def test_flaky_scenes__commit_and_branch_together__are_refused() -> None:
    with pytest.raises(BadRequest, match="not both"):
        flaky_scenes([], commit="c1", branch="main")


# Pass rate series


def test_pass_rate_series__one_point_per_commit_in_the_order_of_its_first_run() -> None:
    rows = [_row("late", 30, "s", [True, False], commit="b"),
            _row("c-run", 20, "s", [False, False], commit="c"),
            _row("b-run", 10, "s", [True, True], commit="b"),
            _row("a-run", 5, "other", [True], commit="a"),  # commit a has no trial of s
            _row("orphan", 1, "s", [True], commit=None)]

    series = pass_rate_series(rows, "s")

    assert [(p.commit, p.runs, p.trials, p.passed, p.rate) for p in series] == [
        ("b", 2, 4, 3, 0.75), ("c", 1, 2, 0, 0.0)]
    assert [p.started_at for p in series] == [T0 + timedelta(minutes=10), T0 + timedelta(minutes=20)]


# Rows


def test_scene_outcome__outcomes_that_disagree_with_the_counts__are_refused() -> None:
    with pytest.raises(ValueError, match="outcomes hold 2 trials with 1 passed"):
        SceneOutcome(run_id="r", started_at=T0, commit="c", branch="main", scene="s", trials=3, passed=1,
                     outcomes=(True, False))
    with pytest.raises(ValueError, match="between 0 and trials"):
        SceneOutcome(run_id="r", started_at=T0, commit="c", branch="main", scene="s", trials=1, passed=2)
