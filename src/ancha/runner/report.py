"""The run's summary: per scene pass rates against the gate, on disk and as a table."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.table import Table

from ancha.results import coverage_gaps
from ancha.runner.trial import TrialOutcome


@dataclass
class SceneSummary:
    scene: str
    path: str
    trials: int
    min_pass_rate: float
    outcomes: list[TrialOutcome] = field(default_factory=list)
    source_hash: str = ""
    """The scene file's content hash: the console rebuilds a trial's seed world from the
    file only while it still has this hash."""

    def count(self, verdict: str) -> int:
        return sum(1 for o in self.outcomes if o.verdict == verdict)

    @property
    def judged(self) -> int:
        return self.count("passed") + self.count("failed")

    @property
    def pass_rate(self) -> float | None:
        """Passed over judged trials: invalid trials are left out; None when nothing was judged."""
        return self.count("passed") / self.judged if self.judged else None

    @property
    def k(self) -> int:
        """The k of pass^k and pass@k: the scene's judged trials (invalid ones are left out,
        as they are of the pass rate)."""
        return self.judged

    @property
    def pass_hat_k(self) -> bool | None:
        """pass^k: every one of the k judged trials passed; None when nothing was judged."""
        return self.count("passed") == self.k if self.k else None

    @property
    def pass_at_k(self) -> bool | None:
        """pass@k: at least one of the k judged trials passed; None when nothing was judged."""
        return self.count("passed") > 0 if self.k else None

    @property
    def gate_met(self) -> bool:
        # A scene whose trials are all invalid (or that ran none) fails its gate.
        rate = self.pass_rate
        return rate is not None and rate >= self.min_pass_rate - 1e-12 and len(self.outcomes) == self.trials

    @property
    def cost(self) -> dict[str, Any] | None:
        """The scene's model calls through the model gateway, summed over its trials (``usd``
        counts priced calls only); None when no trial went through a gateway."""
        costs = [o.cost for o in self.outcomes if o.cost is not None]
        if not costs:
            return None
        priced = [c["usd"] for c in costs if c.get("usd") is not None]
        total: dict[str, Any] = {"usd": round(sum(priced), 8) if priced else None}
        for key in ("calls", "input_tokens", "output_tokens"):
            total[key] = sum(int(c.get(key) or 0) for c in costs)
        unpriced = sum(int(c.get("unpriced_calls") or 0) for c in costs)
        if unpriced:
            total["unpriced_calls"] = unpriced
        total["over_budget"] = sum(1 for o in self.outcomes if o.status == "over_budget")
        return total

    @property
    def coverage_gaps(self) -> dict[str, Any] | None:
        """The scene's calls to operations the replica does not implement, over its trials
        (``calls``, ``trials`` that hit one, ``operations``); None when there were none."""
        hit = [o.coverage_gaps for o in self.outcomes if o.coverage_gaps]
        if not hit:
            return None
        return {**coverage_gaps.checks_field(coverage_gaps.merged(hit)), "trials": len(hit)}

    def to_dict(self) -> dict[str, Any]:
        return {
            "scene": self.scene,
            "path": self.path,
            "source_hash": self.source_hash,
            "trials": self.trials,
            "ran": len(self.outcomes),
            "passed": self.count("passed"),
            "failed": self.count("failed"),
            "invalid": self.count("invalid"),
            "pass_rate": self.pass_rate,
            "k": self.k,
            "pass_hat_k": self.pass_hat_k,
            "pass_at_k": self.pass_at_k,
            "min_pass_rate": self.min_pass_rate,
            "gate_met": self.gate_met,
            **({"cost": self.cost} if self.cost is not None else {}),
            **({"coverage_gaps": self.coverage_gaps} if self.coverage_gaps is not None else {}),
            "trial_results": [_trial_result(o) for o in sorted(self.outcomes, key=lambda o: o.trial)],
        }


def _trial_result(o: TrialOutcome) -> dict[str, Any]:
    result: dict[str, Any] = {"trial": o.trial, "verdict": o.verdict, "status": o.status, "reason": o.reason,
                              "timings": {k: round(v, 4) for k, v in o.timings.items()}}
    if o.retried is not None:  # --retry-invalid ran it twice: the first attempt's reason
        result["retried"] = o.retried
    if o.coverage_gaps:
        result["coverage_gaps"] = coverage_gaps.checks_field(o.coverage_gaps)
    return result


def summary_title(interrupted: bool) -> str:
    return "ancha run — interrupted, partial results" if interrupted else "ancha run"


def summary_table(scenes: list[SceneSummary], interrupted: bool) -> Table:
    """The pass table; its title (``summary_title``) is printed on its own line above it, since
    rich pads a table's title to the table's width."""
    table = Table()
    costs = any(s.cost is not None for s in scenes)  # a cost column only when a model gateway ran
    columns = ("scene", "trials", "passed", "failed", "invalid", "pass rate", "pass^k", "pass@k", "gate")
    for column in (*columns, "cost") if costs else columns:
        table.add_column(column, justify="left" if column == "scene" else "right", no_wrap=True)
    for s in scenes:
        rate = "—" if s.pass_rate is None else f"{s.pass_rate:.0%}"
        gate = f"[green]met[/] (≥ {s.min_pass_rate:.0%})" if s.gate_met else f"[red]not met[/] (≥ {s.min_pass_rate:.0%})"
        trials = str(s.trials) if len(s.outcomes) == s.trials else f"{len(s.outcomes)}/{s.trials}"
        cells = [s.scene, trials, str(s.count("passed")), str(s.count("failed")), str(s.count("invalid")),
                 rate, yes_no(s.pass_hat_k, s.k), yes_no(s.pass_at_k, s.k), gate]
        table.add_row(*cells, *([cost_cell(s.cost)] if costs else []))
    return table


def cost_cell(cost: dict[str, Any] | None) -> str:
    """A scene's cost cell: ``$0.0123``, with calls the price table did not know counted apart."""
    if cost is None or not cost.get("calls"):
        return "—"
    usd = "?" if cost.get("usd") is None else f"${cost['usd']:.4f}"
    unpriced = cost.get("unpriced_calls")
    return f"{usd} (+{unpriced} unpriced)" if unpriced else usd


def yes_no(value: bool | None, k: int) -> str:
    """A pass^k or pass@k cell: ``yes (k=3)``, ``no (k=3)``, or ``—`` when nothing was judged."""
    return "—" if value is None else f"{'yes' if value else 'no'} (k={k})"


def coverage_notes(scenes: list[SceneSummary]) -> list[str]:
    """A line per scene whose agent hit operations the replica does not implement."""
    notes = []
    for s in scenes:
        gaps = s.coverage_gaps
        if gaps is not None:
            trials = f"{gaps['trials']} of {len(s.outcomes)} trial{'' if len(s.outcomes) == 1 else 's'}"
            notes.append(f"coverage gap: {s.scene} ({trials}): {coverage_gaps.describe(gaps['operations'])}")
    return notes


def print_summary(console: Console, scenes: list[SceneSummary], interrupted: bool, run_dir: str) -> None:
    console.print(summary_title(interrupted), markup=False, highlight=False, style="italic")
    console.print(summary_table(scenes, interrupted))
    for note in coverage_notes(scenes):  # under the table, which stays as it is without gaps
        console.print(note, markup=False, highlight=False, soft_wrap=True)
    if interrupted:
        console.print("[yellow]The run was interrupted:[/] agents were stopped; results written so far are kept.")
    failed = any(s.count("failed") or s.count("invalid") for s in scenes)
    # soft_wrap: a long path stays on one line, to be copied whole
    console.print(f"results: {run_dir}" + ("   (failed checks: `ancha explain`)" if failed else ""), soft_wrap=True)
