"""Where a run came from, as its pages say it: a run made by ``ancha replay`` or ``ancha fork``
keeps its ``origin`` in ``summary.json`` (a forked trial also in its ``replay.json``), and the
run's and its trials' pages link to what it replayed or forked, or name it as text once it is
gone. A graded trial that keeps its ``replay.json`` can be forked from any of its calls.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from ancha.console import links
from ancha.results.run_folder import SUMMARY, RunFolder, TrialFolder
from ancha.results.runs_folder import LATEST, RunsFolder, is_dir, is_folder_name


@dataclass(frozen=True, slots=True)
class Origin:
    """What a replay or fork run branched off: one trial (a fork, a replay of a trial), or each
    trial of a run or of one scene of it (``ancha replay RUN``, ``RUN/SCENE``: each trial keeps
    its scene and number)."""

    kind: str
    """``replay`` or ``fork``."""
    run_id: str
    scene: str | None
    trial: str | None
    present: bool
    """Whether it is still there (else it is named, not linked)."""
    calls: bool = False
    """A replay of the recorded calls (``--calls``), with no agent."""
    forked_at: str | None = None
    """A fork's instant, in the world's simulated time."""
    seq: int | None = None
    """A fork's last trace entry made again before the agent took over."""
    changes: tuple[str, ...] = ()
    """A fork's ``--set`` changes."""

    @property
    def ref(self) -> str:
        """``RUN/SCENE/TRIAL`` (``RUN/SCENE`` or ``RUN`` for a replay of many trials)."""
        return "/".join(part for part in (self.run_id, self.scene, self.trial) if part)

    @property
    def path(self) -> str | None:
        """The original trial's page (the run's, for many trials), while it is there."""
        if not self.present:
            return None
        if self.scene and self.trial:
            return links.trial_path(self.run_id, self.scene, self.trial)
        return links.run_path(self.run_id)

    @property
    def moment(self) -> str:
        """A fork's ``at TIME (seq N)``; '' for a replay."""
        if self.kind != "fork":
            return ""
        when = f" at {readable_instant(self.forked_at)}" if self.forked_at else ""
        return f"{when} (seq {self.seq})" if self.seq is not None else when

    def compare_links(self, run_id: str, trials: list[tuple[str, str]]) -> list[tuple[str, str]]:
        """(label, compare page) for each of the run's ``trials`` (scene, trial) beside its
        original, labelled by trial number (scene/trial when the run has several scenes);
        [] once the origin is gone."""
        if not self.present:
            return []
        scenes = {scene for scene, _ in trials}
        return [(trial if len(scenes) == 1 else f"{scene}/{trial}",
                 links.compare_path(links.trial_ref(run_id, scene, trial),
                                    links.trial_ref(self.run_id, self.scene or scene, self.trial or trial)))
                for scene, trial in trials]


class RunOrigins:
    """Each run's ``summary.json`` ``origin``, read again only when the summary changes: a trial's
    page needs it on every view, and a large run's summary is not small."""

    def __init__(self) -> None:
        self._seen: dict[Path, tuple[int, Any]] = {}
        self._lock = threading.Lock()

    def of(self, run: RunFolder | None) -> Any:
        """The run's ``origin`` as its summary has it (None without a summary or an origin)."""
        if run is None:
            return None
        path = run.path / SUMMARY
        try:
            stamp = path.stat().st_mtime_ns
        except OSError:
            return None
        with self._lock:
            seen = self._seen.get(path)
        if seen is not None and seen[0] == stamp:
            return seen[1]
        found = (run.read_summary() or {}).get("origin")
        with self._lock:
            self._seen[path] = (stamp, found)
        return found


def read_origin(found: Any, world_line: dict[str, Any] | None, runs: RunsFolder,
                trial: tuple[str, str] | None = None) -> Origin | None:
    """What a replay or fork run branched off: ``found``, the run's ``origin`` (``summary.json``),
    else a forked trial's own (its ``replay.json``, while its run is under way); None for a run
    made by ``ancha run`` or an origin that names no run. ``trial``: (scene, trial) of the run,
    for that trial's own original (the same scene and number, in a replay of a whole run)."""
    if not isinstance(found, dict):
        found = (world_line or {}).get("origin")
    if not isinstance(found, dict):
        return None
    kind, run_id, scene, number = (str(found.get(key) or "") for key in ("kind", "run", "scene", "trial"))
    if kind not in ("replay", "fork") or not run_id:
        return None
    if trial is not None:
        scene, number = scene or trial[0], number or trial[1]
    seq = found.get("seq")
    changes = found.get("set")
    return Origin(kind, run_id, scene or None, (number or None) if scene else None,
                  _present(runs, run_id, scene, number if scene else ""),
                  calls=found.get("calls") is True,
                  forked_at=str(found["forked_at"]) if found.get("forked_at") else None,
                  seq=seq if isinstance(seq, int) and not isinstance(seq, bool) else None,
                  changes=tuple(str(c) for c in changes) if isinstance(changes, list) else ())


def fork_from(folder: TrialFolder, world_line: dict[str, Any] | None) -> str | None:
    """``RUN/SCENE/TRIAL`` as ``ancha fork`` takes it, for a trial it can fork (graded, with its
    ``replay.json``); None for any other."""
    if world_line is None or not folder.is_graded():
        return None
    return links.trial_ref(folder.run_id, folder.scene, folder.trial)


def fork_command(trial_ref: str, seq: int) -> str:
    """The command that forks ``trial_ref`` after trace entry ``seq``."""
    return f"ancha fork {trial_ref} --at {seq}"


def readable_instant(text: str) -> str:
    """``2026-03-02T09:00:00.917068Z`` as ``2026-03-02 09:00:00.917``; other text as it is."""
    try:
        instant = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return text
    shown = instant.strftime("%Y-%m-%d %H:%M:%S")
    return shown + (f".{instant.microsecond // 1000:03d}" if instant.microsecond else "")


def _present(runs: RunsFolder, run_id: str, scene: str, trial: str) -> bool:
    """Whether the run (its scene, its trial, as far as they are named) is still in ``runs``."""
    names = [name for name in (run_id, scene, trial) if name]
    if run_id == LATEST or not all(is_folder_name(name) for name in names):
        return False  # a name that is no folder's (a hand-edited summary) is never a path
    run = runs.run(run_id)
    if run is None:
        return False
    return is_dir(run.path.joinpath(*names[1:]))
