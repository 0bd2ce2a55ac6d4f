"""Two runs compared check by check: what regressed, what improved, what is flaky.

Per run, a check of a scene is *passing* when every judged trial passed it, *failing*
when every one failed it and *flaky* when its results are mixed. Between run A and run
B, a check *regressed* when it was passing in A and is failing or flaky in B, and
*improved* when it was failing or flaky in A and is passing in B. A check that is flaky
in a run is also listed as flaky. Invalid trials are left out, as they are of the pass
rate; a check skipped without being required is left out of its trial.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ancha.results.run_folder import RunFolder, failed_checks

_UNJUDGED = ("invalid", "unreadable", None)


@dataclass(slots=True)
class CheckTally:
    """One check of one scene in one run: of the judged trials that graded it, how many passed it."""

    passed: int = 0
    graded: int = 0

    @property
    def state(self) -> str:
        if self.passed == self.graded:
            return "passing"
        return "failing" if self.passed == 0 else "flaky"

    def __str__(self) -> str:
        return f"{self.passed}/{self.graded}"


@dataclass(slots=True)
class CheckChange:
    scene: str
    check: str
    a: CheckTally | None
    b: CheckTally | None

    @property
    def regressed(self) -> bool:
        return self.a is not None and self.b is not None and self.a.state == "passing" and self.b.state != "passing"

    @property
    def improved(self) -> bool:
        return self.a is not None and self.b is not None and self.a.state != "passing" and self.b.state == "passing"

    @property
    def flaky(self) -> bool:
        return any(t is not None and t.state == "flaky" for t in (self.a, self.b))


@dataclass
class RunDiff:
    run_a: str
    run_b: str
    changes: list[CheckChange] = field(default_factory=list)

    @property
    def regressed(self) -> list[CheckChange]:
        return [c for c in self.changes if c.regressed]

    @property
    def improved(self) -> list[CheckChange]:
        return [c for c in self.changes if c.improved]

    @property
    def flaky(self) -> list[CheckChange]:
        return [c for c in self.changes if c.flaky]

    @property
    def only_in_one(self) -> list[CheckChange]:
        return [c for c in self.changes if c.a is None or c.b is None]


def tally_checks(run_dir: Path) -> dict[tuple[str, str], CheckTally]:
    """Per (scene, check id), the check's results over the run's judged trials."""
    tallies: dict[tuple[str, str], CheckTally] = {}
    for folder in RunFolder(run_dir).graded_trials():
        checks = folder.read_checks()
        if checks.get("verdict") in _UNJUDGED:
            continue
        scene = str(checks.get("scene") or folder.scene)
        for check, passed in check_outcomes(checks):
            tally = tallies.setdefault((scene, check), CheckTally())
            tally.graded += 1
            tally.passed += passed
    return tallies


def check_outcomes(checks: dict[str, Any]) -> list[tuple[str, bool]]:
    """One trial's ``checks.json``: each check id, in order, and whether the trial passed it.
    A check skipped without being required is left out (it was not graded)."""
    failing = {id(r) for r in failed_checks(checks)}
    return [(str(result.get("id")), id(result) not in failing) for result in checks.get("results") or []
            if isinstance(result, dict) and not (result.get("status") == "skipped" and id(result) not in failing)]


def diff_runs(run_a: Path, run_b: Path) -> RunDiff:
    a, b = tally_checks(run_a), tally_checks(run_b)
    changes = [CheckChange(scene, check, a.get((scene, check)), b.get((scene, check)))
               for scene, check in sorted(a.keys() | b.keys())]
    return RunDiff(RunFolder(run_a).run_id, RunFolder(run_b).run_id, changes)


def render_diff(diff: RunDiff) -> str:
    """What ``ancha diff`` prints: per scene, each check that regressed, improved, is flaky
    or is in one run only, with its passed/graded trials in A and in B."""
    lines = [f"ancha diff {diff.run_a} → {diff.run_b}"]
    scene = None
    for change in diff.changes:
        label = _label(change)
        if label is None:
            continue
        if change.scene != scene:
            scene = change.scene
            lines += ["", scene]
        before = "—" if change.a is None else str(change.a)
        after = "—" if change.b is None else str(change.b)
        lines.append(f"  {label:<10} {change.check}  {before} → {after}")
    if scene is None:
        lines += ["", f"no changes: {len(diff.changes)} checks pass and fail as they did"]
    lines += ["", f"{len(diff.regressed)} regressed, {len(diff.improved)} improved, {len(diff.flaky)} flaky"]
    return "\n".join(lines)


def _label(change: CheckChange) -> str | None:
    if change.a is None:
        return "new"
    if change.b is None:
        return "gone"
    if change.regressed:
        return "regressed"
    if change.improved:
        return "improved"
    return "flaky" if change.flaky else None
