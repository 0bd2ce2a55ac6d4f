"""Runs that branch off a trial: ``ancha replay`` and ``ancha fork``.

A trial's folder keeps what rebuilds its world (``replay.json``: id, seed, trial, how it
ended) and the agent's calls (``calls.jsonl``). A replay is a new run of one trial with
the same seed and trial number, under the agent as it is now, or (``--calls``) with the
recorded calls instead of an agent. A fork makes the recorded calls up to a moment in a
world with no agent, checkpoints it, and starts N trials of the agent from there.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from ancha.config.model import AnchaConfig
from ancha.durations import parse_duration
from ancha.errors import AnchaUserError
from ancha.results.run_folder import RunFolder, TrialFolder
from ancha.results.runs_folder import RunsFolder
from ancha.runner.control import ControlClient, ServerError, connect
from ancha.runner.trial import Fork
from ancha.scene.model import Scene

EXIT_USAGE = 2


class BranchRefused(AnchaUserError):
    """A replay or fork that cannot be made (the message says why and what to do)."""


@dataclass(frozen=True)
class TrialAddress:
    """``RUN/SCENE/TRIAL``: one trial of an earlier run."""

    run: RunFolder
    scene: str
    trial: int

    @property
    def folder(self) -> TrialFolder:
        return self.run.trial(self.scene, self.trial)

    @property
    def label(self) -> str:
        return f"{self.run.run_id}/{self.scene}/{self.trial}"

    def origin(self, kind: str, **more: Any) -> dict[str, Any]:
        return {"kind": kind, "run": self.run.run_id, "scene": self.scene, "trial": self.trial, **more}


def find_trial(spec: str, runs: RunsFolder | None) -> TrialAddress:
    """The trial ``spec`` names (``RUN/SCENE/TRIAL``, RUN a run id or ``latest``), which must have
    been graded and keep what rebuilds its world."""
    parts = spec.strip("/").split("/")
    if len(parts) != 3 or not parts[2].isdigit():
        raise BranchRefused(f"error[TRIAL_UNKNOWN]: {spec!r} names no trial\n"
                            "hint: write RUN/SCENE/TRIAL, as `ancha explain` shows them (RUN may be latest)")
    return _replayable(TrialAddress(_run(parts[0], runs), parts[1], int(parts[2])))


def find_trials(spec: str, runs: RunsFolder | None) -> list[TrialAddress]:
    """The trials ``spec`` names: ``RUN`` (every graded trial of the run), ``RUN/SCENE`` (every
    trial of that scene) or ``RUN/SCENE/TRIAL``; each must keep what rebuilds its world."""
    parts = spec.strip("/").split("/")
    if len(parts) == 3:
        return [find_trial(spec, runs)]
    if len(parts) > 3 or not parts[0]:
        raise BranchRefused(f"error[TRIAL_UNKNOWN]: {spec!r} names no run, scene or trial\n"
                            "hint: write RUN, RUN/SCENE or RUN/SCENE/TRIAL, as `ancha explain` shows them "
                            "(RUN may be latest)")
    run = _run(parts[0], runs)
    graded = [folder for folder in run.graded_trials() if folder.trial.isdigit()
              and (len(parts) == 1 or folder.scene == parts[1])]
    if not graded:
        what = f"scene {parts[1]!r}" if len(parts) == 2 else "trial"
        raise BranchRefused(f"error[TRIAL_UNKNOWN]: run {run.run_id} has no graded {what}\n"
                            "hint: `ancha explain` lists each trial of a run")
    graded.sort(key=lambda folder: (folder.scene, int(folder.trial)))
    return [_replayable(TrialAddress(run, folder.scene, int(folder.trial))) for folder in graded]


def _run(name: str, runs: RunsFolder | None) -> RunFolder:
    if runs is None:
        raise BranchRefused("error[TRIAL_UNKNOWN]: no runs folder here (.ancha/runs)\n"
                            "hint: run it from your project, where `ancha run` wrote its runs")
    run_id = runs.latest_id() if name == "latest" else name
    run = runs.run(run_id) if run_id else None
    if run is None:
        raise BranchRefused(f"error[TRIAL_UNKNOWN]: no run {name} in {runs.path}\n"
                            "hint: list the runs with `ls .ancha/runs`, or use latest")
    return run


def _replayable(address: TrialAddress) -> TrialAddress:
    folder = address.folder
    if not folder.is_graded():
        raise BranchRefused(f"error[TRIAL_UNKNOWN]: run {address.run.run_id} has no graded trial "
                            f"{address.scene}/{address.trial}\nhint: `ancha explain` lists each trial of a run")
    if folder.read_world_line() is None:
        raise BranchRefused(f"error[TRIAL_NOT_REPLAYABLE]: {address.label} keeps no replay.json: it was run by an "
                            "Ancha that did not record what rebuilds a world\nhint: run the scene again, then "
                            "replay or fork that run's trial")
    return address


def check_scene(scene: Scene, address: TrialAddress, changed_ok: bool) -> None:
    """Refuse a scene that changed since the trial ran (its world would not be the one that was)."""
    line = address.folder.read_world_line() or {}
    recorded = str(line.get("source_hash") or "")
    found = line.get("origin")
    origin: dict[str, Any] = found if isinstance(found, dict) else {}
    if recorded and recorded != scene.source_hash and not changed_ok and origin.get("set"):
        raise BranchRefused(f"error[SCENE_CHANGED]: {address.label} ran under {scene.path or scene.name} changed by "
                            f"ancha fork --set/--patch ({', '.join(map(str, origin['set']))}), not the file as it is\n"
                            f"hint: branch off its origin, {origin.get('run')}/{origin.get('scene')}/"
                            f"{origin.get('trial')}, with the same changes, or pass --scene-changed-ok")
    if recorded and recorded != scene.source_hash and not changed_ok:
        raise BranchRefused(f"error[SCENE_CHANGED]: {scene.path or scene.name} changed since {address.label} ran "
                            f"(its hash was {recorded[:12]}, it is {scene.source_hash[:12]} now)\n"
                            "hint: restore the scene as it was, or pass --scene-changed-ok to run the new one "
                            "with the same seed and trial")


def scene_named(scenes: list[Scene], name: str, address: TrialAddress) -> Scene:
    for scene in scenes:
        if scene.name == name:
            return scene
    raise BranchRefused(f"error[SCENE_UNKNOWN]: {address.label}'s scene {name!r} is not among this project's scenes\n"
                        "hint: run from the project the run belongs to (ancha.yaml's scenes)")


@dataclass(frozen=True)
class Cut:
    """Where a fork starts: after the calls up to ``seq``, at the instant ``until``."""

    calls: list[dict[str, Any]]
    until: str
    seq: int
    """The last trace entry the prefix holds (the world's own entries up to ``until`` included)."""


def cut(folder: TrialFolder, scene: Scene, at: str) -> Cut:
    """The recorded calls a fork makes before its checkpoint, and the instant it stands at:
    ``at`` is a trace seq (after that entry) or a duration of simulated time from the start."""
    calls = folder.read_calls()
    trace = folder.read_trace()
    if at.isdigit():
        seq = int(at)
        entry = trace.get(seq)
        if entry is None:
            raise BranchRefused(f"error[FORK_POINT]: {folder.scene}/{folder.trial} has no trace entry {seq} "
                                f"(it has {len(trace)})\nhint: --at takes a trace seq (as the console's timeline "
                                "shows) or a duration such as 10m")
        until = str(entry["at"])
        return Cut([c for c in calls if int(c.get("seq", 0)) <= seq], until, seq)
    try:
        seconds = parse_duration(at)
    except ValueError as exc:
        raise BranchRefused(f"error[FORK_POINT]: --at {at!r}: {exc}\nhint: a trace seq such as 12, "
                            "or a duration of simulated time such as 10m or 1h30m") from exc
    instant = scene.clock.start.timestamp() + seconds
    until = datetime.fromtimestamp(instant, UTC).isoformat().replace("+00:00", "Z")
    kept = [c for c in calls if _epoch(str(c.get("arrived"))) <= instant]
    seq = max((int(seq) for seq, entry in trace.items() if _epoch(str(entry.get("at"))) <= instant), default=0)
    return Cut(kept, until, seq)


async def checkpoint_at(config: AnchaConfig, scene: Scene, address: TrialAddress, point: Cut) -> tuple[dict[str, Any], bytes, float]:
    """Rebuild the trial's world up to ``point`` by making its recorded calls, and checkpoint it:
    the server's answer, the checkpoint's bytes and the seconds the rebuild took."""
    line = address.folder.read_world_line() or {}
    server, control = await connect(config, ControlClient)
    started = time.perf_counter()
    try:
        context = await control.create_env(scene, int(line.get("trial") or address.trial), {"mode": "command"},
                                           seed=line.get("seed"), replay=True, env_id=line.get("env_id"))
        env_id = str(context["env_id"])
        try:
            for start in range(0, max(len(point.calls), 1), 2000):
                last = start + 2000 >= len(point.calls)
                await control.make_calls(env_id, point.calls[start:start + 2000], until=point.until if last else None)
            made, data = await control.checkpoint(env_id)
        finally:
            await control.delete(env_id)
    except ServerError as exc:
        raise BranchRefused(f"error[FORK_FAILED]: the world of {address.label} could not be rebuilt: {exc}") from exc
    finally:
        await control.close()
        if server is not None:
            server.stop()
    return made, data, time.perf_counter() - started


def fork_of(made: dict[str, Any], data: bytes, address: TrialAddress, at: str, point: Cut,
            original: Scene | None, changes: list[str]) -> Fork:
    """The fork's start: the checkpoint, where it stands, and the original trial's state journal
    (each forked trial's ``state/`` is the agent's state folder as it was after ``point.seq``)."""
    origin = address.origin("fork", at=at, seq=point.seq, forked_at=made["at"], **({"set": changes} if changes else {}))
    journal = address.folder.state_journal_path
    return Fork(data, str(made["at"]), state_journal=journal if journal.is_dir() else None, seq=point.seq,
                world_line={"origin": origin}, original=original)


def _epoch(text: str) -> float:
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return float("inf")


def read_origin(run: RunFolder) -> dict[str, Any] | None:
    """``summary.json``'s ``origin`` of a replay or fork run (None for a plain run)."""
    summary = run.read_summary() or {}
    origin = summary.get("origin")
    return origin if isinstance(origin, dict) else None


def dumps(value: Any) -> str:
    return json.dumps(value, indent=2)
