"""The runs a console shows: every run folder under ``.ancha/runs``, newest first, and a
scene's pass rate across them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ancha.results.run_folder import RunFolder, TrialFolder
from ancha.results.runs_folder import RunsFolder


@dataclass
class SceneRow:
    """One scene of one run, as the runs page lists it."""

    scene: str
    trials: int
    passed: int
    failed: int
    invalid: int
    pass_rate: float | None
    pass_hat_k: bool | None
    k: int
    cost_usd: float | None
    duration_s: float | None
    gate_met: bool | None
    trial_verdicts: list[tuple[str, str]] = field(default_factory=list)
    """(trial, verdict) by trial number; ``running`` for a trial still under way."""


@dataclass
class RunRow:
    run_id: str
    started_at: str | None
    duration_s: float | None
    exit_code: int | None
    live: bool
    """No summary yet: the run is under way (or was stopped hard)."""
    scenes: list[SceneRow]

    @property
    def passed(self) -> int:
        return sum(s.passed for s in self.scenes)

    @property
    def failed(self) -> int:
        return sum(s.failed for s in self.scenes)

    @property
    def invalid(self) -> int:
        return sum(s.invalid for s in self.scenes)


class ConsoleRuns(RunsFolder):
    """``.ancha/runs`` as the console lists it: a row per run, a scene across runs."""

    def rows(self, limit: int = 200) -> list[RunRow]:
        rows = []
        for run_id in self.run_ids()[:limit]:
            folder = RunFolder(self.path / run_id)
            if folder.is_run() or folder.has_running_trials():
                rows.append(run_row(folder))
        return rows

    def scene_history(self, scene: str, limit: int = 200) -> list[tuple[RunRow, SceneRow]]:
        """The scene's row in each run that ran it, newest first."""
        found = []
        for row in self.rows(limit):
            for scene_row in row.scenes:
                if scene_row.scene == scene:
                    found.append((row, scene_row))
        return found


def run_row(folder: RunFolder) -> RunRow:
    summary = folder.read_summary()
    if summary is not None:
        scenes = [_scene_row(s, folder) for s in summary.get("scenes") or [] if isinstance(s, dict)]
        return RunRow(folder.run_id, summary.get("started_at"), summary.get("duration_s"), summary.get("exit_code"),
                      False, scenes)
    return RunRow(folder.run_id, None, None, None, True, _scenes_on_disk(folder))


def _scene_row(data: dict[str, Any], folder: RunFolder) -> SceneRow:
    results = [t for t in data.get("trial_results") or [] if isinstance(t, dict)]
    cost = data.get("cost")
    cost_usd = cost.get("usd") if isinstance(cost, dict) else cost if isinstance(cost, int | float) else None
    duration = sum(float((t.get("timings") or {}).get("total_s") or 0) for t in results) or None
    return SceneRow(
        scene=str(data.get("scene")), trials=int(data.get("trials") or 0), passed=int(data.get("passed") or 0),
        failed=int(data.get("failed") or 0), invalid=int(data.get("invalid") or 0), pass_rate=data.get("pass_rate"),
        pass_hat_k=data.get("pass_hat_k"), k=int(data.get("k") or 0), cost_usd=cost_usd, duration_s=duration,
        gate_met=data.get("gate_met"),
        trial_verdicts=[(str(t.get("trial")), str(t.get("verdict"))) for t in results])


def _scenes_on_disk(folder: RunFolder) -> list[SceneRow]:
    """A run without a summary, from its trial folders: graded ones by verdict, others running."""
    by_scene: dict[str, list[TrialFolder]] = {}
    for trial in folder.trials():
        by_scene.setdefault(trial.scene, []).append(trial)
    rows = []
    for scene, trials in sorted(by_scene.items()):
        verdicts = []
        for trial in sorted(trials, key=lambda t: _number(t.trial)):
            verdict = "running" if trial.is_running() else None
            if trial.is_graded():
                verdict = str(trial.read_checks().get("verdict"))
            if verdict:
                verdicts.append((trial.trial, verdict))
        if not verdicts:
            continue
        count = {v: sum(1 for _, x in verdicts if x == v) for v in ("passed", "failed", "invalid")}
        judged = count["passed"] + count["failed"]
        rows.append(SceneRow(scene, len(verdicts), count["passed"], count["failed"], count["invalid"],
                             count["passed"] / judged if judged else None, None, judged, None, None, None, verdicts))
    return rows


def _number(name: str) -> tuple[int, str]:
    return (int(name), "") if name.isdigit() else (1 << 30, name)
