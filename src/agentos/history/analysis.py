"""What a team's run history shows about its scenes: which flake, where they regressed, and how
their pass rate moved from commit to commit.

Pure functions over `SceneOutcome` rows (one per uploaded run and scene); the caller reads the
rows from storage. An agent's trials are noisy, so a lower pass rate on one commit is not by
itself a regression: a scene that passes 80% of the time over 5 trials lands on 3/5 or worse
about one commit in four, so 4/5 followed by 3/5 is noise, while 20/20 followed by 2/10 is far
outside it. `regressions` therefore asks an exact test whether a drop is larger than the noise
of the trials on both sides of it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from fractions import Fraction
from itertools import pairwise

from scipy.stats import fisher_exact

from agentos.errors import BadRequest


@dataclass(frozen=True)
class SceneOutcome:
    """One scene's judged trials in one uploaded run.

    `outcomes` holds each judged trial's pass (True) or fail in trial order; it is empty when
    the upload did not say, and then only `trials` and `passed` count.
    """

    run_id: str
    started_at: datetime
    commit: str | None
    branch: str | None
    scene: str
    trials: int
    passed: int
    outcomes: tuple[bool, ...] = ()

    def __post_init__(self) -> None:
        where = f"run {self.run_id!r}, scene {self.scene!r}"
        if not 0 <= self.passed <= self.trials:
            raise ValueError(f"{where}: passed ({self.passed}) must be between 0 and trials ({self.trials})")
        if self.outcomes and (len(self.outcomes) != self.trials or sum(self.outcomes) != self.passed):
            raise ValueError(
                f"{where}: outcomes hold {len(self.outcomes)} trials with {sum(self.outcomes)} passed, "
                f"but the row says {self.passed} of {self.trials}; send outcomes that match, or none"
            )


@dataclass(frozen=True)
class FlakyScene:
    """A scene whose trials both passed and failed in the runs looked at.

    `flips` counts the changes between consecutive trial outcomes in time order, and
    `flip_rate` is flips per chance to flip (trials - 1): a coin flip scores about 0.5, a scene
    that fails one trial in ten about 0.18, and one that broke once and stayed broken near 0.
    The run ids point at the first and last runs where the scene passed and where it failed.
    """

    scene: str
    runs: int
    trials: int
    passed: int
    pass_rate: float
    flips: int
    flip_rate: float
    first_passed_run_id: str
    last_passed_run_id: str
    first_failed_run_id: str
    last_failed_run_id: str


@dataclass(frozen=True)
class Regression:
    """The commit where a scene's pass rate fell by more than its noise.

    `baseline_passed`/`baseline_trials` pool the `baseline_commits` commits before `commit`
    (up to the window); `p_value` is the one-sided Fisher exact test's. The page links
    `last_good_run_id` (the baseline's newest run of the scene) with `first_bad_run_id` (the
    regressing commit's earliest run of it).
    """

    scene: str
    commit: str
    previous_commit: str
    branch: str | None
    baseline_rate: float
    rate: float
    baseline_passed: int
    baseline_trials: int
    passed: int
    trials: int
    baseline_commits: int
    p_value: float
    last_good_run_id: str
    first_bad_run_id: str


@dataclass(frozen=True)
class CommitPoint:
    """A scene's trials pooled over one commit's runs; `started_at` is the commit's first run."""

    commit: str
    started_at: datetime
    runs: int
    trials: int
    passed: int
    rate: float


@dataclass
class _CommitSample:
    commit: str
    started_at: datetime
    rows: list[SceneOutcome]

    @property
    def trials(self) -> int:
        return sum(row.trials for row in self.rows)

    @property
    def passed(self) -> int:
        return sum(row.passed for row in self.rows)


def flaky_scenes(
    rows: Iterable[SceneOutcome], *, last: int = 20, commit: str | None = None, branch: str | None = None
) -> list[FlakyScene]:
    """The scenes that both passed and failed over the last `last` runs (by start time) on
    `commit`, on `branch`, or on all of history when neither is given; most flips first.

    Ties on flip rate go to the scene that failed most recently, then by name. When a run's
    trial order is unknown (no outcomes), its trials count with the fewest flips they could
    have had, so a missing order never makes a scene look flakier than it was.
    """
    if commit is not None and branch is not None:
        raise BadRequest("Flaky scenes are looked for on one commit or one branch: give commit or branch, not both")
    if last < 1:
        raise BadRequest(f"last must be 1 or more runs (got {last})")
    chosen = [row for row in rows if (commit is None or row.commit == commit)
              and (branch is None or row.branch == branch)]
    recent = set(_runs_in_order(chosen)[-last:])
    by_scene: dict[str, list[SceneOutcome]] = defaultdict(list)
    for row in _in_run_order(chosen):
        if row.run_id in recent and row.trials:
            by_scene[row.scene].append(row)
    flaky = [(_flaky_scene(scene, scene_rows), scene_rows) for scene, scene_rows in by_scene.items()
             if 0 < sum(row.passed for row in scene_rows) < sum(row.trials for row in scene_rows)]
    flaky.sort(key=lambda found: found[0].scene)
    flaky.sort(key=lambda found: max(row.started_at for row in found[1] if row.passed < row.trials), reverse=True)
    flaky.sort(key=lambda found: Fraction(found[0].flips, found[0].trials - 1), reverse=True)
    return [scene for scene, _ in flaky]


def regressions(
    rows: Iterable[SceneOutcome], *, branch: str | None = None, alpha: float = 0.05, window: int = 10
) -> list[Regression]:
    """Every commit where a scene's pass rate fell by more than its noise, oldest first per scene.

    Commits are ordered by their first run (on `branch` when given; rows without a commit are
    left out), and each commit's trials of a scene are pooled. A commit regresses when its
    pooled pass rate is lower than that of up to `window` commits before it, pooled, and a
    one-sided Fisher exact test puts the drop beyond chance. The test sees both sample sizes:
    4/5 after 4/5 is not flagged, 2/10 after 20/20 is. After a regression the scan goes on
    with the regressing commit as the new baseline, so a later second drop is found too.

    The scan tests every commit, and at p < alpha per commit a scene steady at 80% would
    raise a false alarm in about half of all 30-commit histories. So each commit is held to
    alpha / window: `alpha` bounds the chance of a false alarm within any `window`
    consecutive commits, and a commit's verdict never changes as newer commits arrive.
    """
    if not 0 < alpha < 1:
        raise BadRequest(f"alpha is a probability between 0 and 1 (got {alpha})")
    if window < 1:
        raise BadRequest(f"window must be 1 or more commits (got {window})")
    chosen = [row for row in rows if branch is None or row.branch == branch]
    threshold = alpha / window
    found: list[Regression] = []
    for scene in sorted({row.scene for row in chosen}):
        samples = _commit_samples(chosen, scene)
        baseline_start = 0
        for index in range(1, len(samples)):
            baseline = samples[max(baseline_start, index - window):index]
            regression = _regression(scene, baseline, samples[index], threshold)
            if regression is not None:
                found.append(regression)
                baseline_start = index
    return found


def pass_rate_series(rows: Iterable[SceneOutcome], scene: str) -> list[CommitPoint]:
    """The scene's pass rate on each commit where it had judged trials, in commit order (each
    commit at its first run; rows without a commit are left out), for a chart."""
    return [CommitPoint(commit=sample.commit, started_at=sample.started_at,
                        runs=len({row.run_id for row in sample.rows}), trials=sample.trials,
                        passed=sample.passed, rate=sample.passed / sample.trials)
            for sample in _commit_samples(list(rows), scene)]


def _run_started(rows: Iterable[SceneOutcome]) -> dict[str, datetime]:
    started: dict[str, datetime] = {}
    for row in rows:
        if row.run_id not in started or row.started_at < started[row.run_id]:
            started[row.run_id] = row.started_at
    return started


def _runs_in_order(rows: Sequence[SceneOutcome]) -> list[str]:
    started = _run_started(rows)
    return sorted(started, key=lambda run_id: (started[run_id], run_id))


def _in_run_order(rows: Sequence[SceneOutcome]) -> list[SceneOutcome]:
    started = _run_started(rows)
    return sorted(rows, key=lambda row: (started[row.run_id], row.run_id))


def _flaky_scene(scene: str, rows: Sequence[SceneOutcome]) -> FlakyScene:
    trials = sum(row.trials for row in rows)
    passed = sum(row.passed for row in rows)
    flips = _fewest_flips(rows)
    passing = [row.run_id for row in rows if row.passed]
    failing = [row.run_id for row in rows if row.passed < row.trials]
    return FlakyScene(
        scene=scene, runs=len({row.run_id for row in rows}), trials=trials, passed=passed,
        pass_rate=passed / trials, flips=flips, flip_rate=flips / (trials - 1),
        first_passed_run_id=passing[0], last_passed_run_id=passing[-1],
        first_failed_run_id=failing[0], last_failed_run_id=failing[-1],
    )


def _fewest_flips(rows: Sequence[SceneOutcome]) -> int:
    """Flips between consecutive outcomes of rows in time order. A row without outcomes may
    have had its trials in any order: it is laid out passes together and failures together,
    in whichever order flips least with its neighbours (tracked as the fewest flips so far
    ending on a pass, and ending on a failure)."""
    unreachable = 1 << 62
    ending: dict[bool, int] | None = None  # None before the first trial
    for row in rows:
        if row.outcomes:
            first, flips_within, final = row.outcomes[0], _flips(row.outcomes), row.outcomes[-1]
            entered = 0 if ending is None else min(ending[first], ending[not first] + 1)
            ending = {final: entered + flips_within, not final: unreachable}
        elif 0 < row.passed < row.trials:
            # Ending on a pass means the failures came first, and the other way round.
            ending = {final: (0 if ending is None else min(ending[not final], ending[final] + 1)) + 1
                      for final in (True, False)}
        else:
            outcome = row.passed == row.trials
            entered = 0 if ending is None else min(ending[outcome], ending[not outcome] + 1)
            ending = {outcome: entered, not outcome: unreachable}
    return 0 if ending is None else min(ending.values())


def _flips(outcomes: Sequence[bool]) -> int:
    return sum(before != after for before, after in pairwise(outcomes))


def _commit_samples(rows: Sequence[SceneOutcome], scene: str) -> list[_CommitSample]:
    """The scene's rows grouped by commit, in the order of each commit's first run of any scene;
    commits where the scene had no judged trial are left out."""
    committed = [row for row in rows if row.commit is not None]
    first_run: dict[str, datetime] = {}
    for row in committed:
        assert row.commit is not None
        if row.commit not in first_run or row.started_at < first_run[row.commit]:
            first_run[row.commit] = row.started_at
    samples: dict[str, _CommitSample] = {}
    for row in _in_run_order(committed):
        if row.scene == scene and row.commit is not None:
            samples.setdefault(row.commit, _CommitSample(row.commit, first_run[row.commit], [])).rows.append(row)
    ordered = sorted(samples.values(), key=lambda sample: (sample.started_at, sample.commit))
    return [sample for sample in ordered if sample.trials]


def _regression(
    scene: str, baseline: Sequence[_CommitSample], sample: _CommitSample, threshold: float
) -> Regression | None:
    baseline_passed = sum(before.passed for before in baseline)
    baseline_trials = sum(before.trials for before in baseline)
    if sample.passed * baseline_trials >= baseline_passed * sample.trials:
        return None
    # Rows: this commit, the baseline; columns: passed, failed. "less": this commit's odds of a
    # pass are lower than the baseline's.
    table = [[sample.passed, sample.trials - sample.passed],
             [baseline_passed, baseline_trials - baseline_passed]]
    p_value = float(fisher_exact(table, alternative="less").pvalue)
    if p_value >= threshold:
        return None
    last_good = max((row for before in baseline for row in before.rows if row.trials),
                    key=lambda row: (row.started_at, row.run_id))
    first_bad = next(row for row in sample.rows if row.trials)
    return Regression(
        scene=scene, commit=sample.commit, previous_commit=baseline[-1].commit, branch=first_bad.branch,
        baseline_rate=baseline_passed / baseline_trials, rate=sample.passed / sample.trials,
        baseline_passed=baseline_passed, baseline_trials=baseline_trials,
        passed=sample.passed, trials=sample.trials, baseline_commits=len(baseline),
        p_value=p_value, last_good_run_id=last_good.run_id, first_bad_run_id=first_bad.run_id,
    )
