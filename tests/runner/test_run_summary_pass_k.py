"""pass^k and pass@k of a scene: k is its judged trials; invalid trials stay apart."""

from __future__ import annotations

from rich.console import Console

from ancha.runner.report import SceneSummary, summary_table
from ancha.runner.trial import TrialOutcome


def scene(*verdicts: str) -> SceneSummary:
    summary = SceneSummary("hello", "scenes/hello/scene.yaml", len(verdicts), 1.0)
    summary.outcomes = [TrialOutcome("hello", i, v) for i, v in enumerate(verdicts, 1)]
    return summary


def test_pass_k__every_judged_trial_passed_is_pass_hat_k() -> None:
    s = scene("passed", "passed", "passed")
    assert (s.k, s.pass_hat_k, s.pass_at_k) == (3, True, True)


def test_pass_k__one_failed_trial_breaks_pass_hat_k_but_not_pass_at_k() -> None:
    s = scene("passed", "failed", "passed")
    assert (s.k, s.pass_hat_k, s.pass_at_k) == (3, False, True)


def test_pass_k__no_passed_trial_is_neither() -> None:
    s = scene("failed", "failed")
    assert (s.pass_hat_k, s.pass_at_k) == (False, False)


def test_pass_k__invalid_trials_are_left_out_of_k_not_counted_as_failed() -> None:
    s = scene("passed", "invalid", "passed")
    assert (s.k, s.pass_hat_k, s.pass_at_k) == (2, True, True)
    assert s.to_dict()["invalid"] == 1


def test_pass_k__nothing_judged_is_none_in_summary_json() -> None:
    data = scene("invalid", "invalid").to_dict()
    assert (data["k"], data["pass_hat_k"], data["pass_at_k"]) == (0, None, None)


def test_pass_k__summary_json_keeps_every_earlier_field() -> None:
    data = scene("passed").to_dict()
    earlier = ["scene", "path", "trials", "ran", "passed", "failed", "invalid", "pass_rate", "min_pass_rate",
               "gate_met", "trial_results"]
    assert set(earlier) <= set(data)


def test_pass_k__the_table_shows_both_beside_the_pass_rate() -> None:
    console = Console(width=160, record=True)
    console.print(summary_table([scene("passed", "failed"), scene("invalid")], interrupted=False))
    text = console.export_text()
    header = next(line for line in text.splitlines() if "pass rate" in line)
    assert header.index("pass rate") < header.index("pass^k") < header.index("pass@k") < header.index("gate")
    assert "no (k=2)" in text and "yes (k=2)" in text and "—" in text
