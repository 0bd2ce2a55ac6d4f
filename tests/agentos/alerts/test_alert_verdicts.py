"""When an alert rule fires and resolves: the binomial test against the evaluated rate."""

from __future__ import annotations

import pytest

from agentos.alerts import judge


def test_a_window_clearly_below_the_evaluated_rate_fires():
    verdict = judge(passed=0, total=6, baseline=0.9, alpha=0.01, firing=False)
    assert verdict is not None and verdict.firing and verdict.p_value == pytest.approx(0.1**6)


def test_a_dip_within_chance_does_not_fire():
    # 8 of 10 against 90%: P(X <= 8) is about 0.26
    verdict = judge(passed=8, total=10, baseline=0.9, alpha=0.01, firing=False)
    assert verdict is not None and not verdict.firing and verdict.pass_rate == 0.8


def test_a_firing_rule_stays_firing_until_the_rate_is_back():
    assert judge(passed=8, total=10, baseline=0.9, alpha=0.01, firing=True).firing  # type: ignore[union-attr]
    assert not judge(passed=9, total=10, baseline=0.9, alpha=0.01, firing=True).firing  # type: ignore[union-attr]


def test_no_scored_runs_no_verdict():
    assert judge(passed=0, total=0, baseline=0.9, alpha=0.01, firing=False) is None
