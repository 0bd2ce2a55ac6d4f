"""Replay and fork: what a checkpoint of a world costs, and how long the commands take.

    .venv/bin/python bench/replay.py [--messages 200000] [--repeats 7] [--fork-trials 5]

1. Checkpoints of the bundled examples. A copy of examples/ runs once (``ancha run -n 1``).
   For each scene this process rebuilds trial 1's world from its run folder as ``ancha
   replay --calls`` does (``world/replay.py``: a replay world with the trial's env id, seed
   and trial number from ``replay.json``, each call of ``calls.jsonl`` made at the instant it
   arrived, then the trial's ending), then takes ``--repeats`` checkpoints
   (``ancha.world.checkpoint.checkpoint``, what ``Environment.checkpoint()`` and ``POST
   /envs/{id}/checkpoint`` make, unsigned) and restores as many (``restore``, a live world
   under the same id). Per scene: the checkpoint's bytes, the median checkpoint and restore
   times, and whether the restored world's ``world.json`` and records are the original's.
2. The same for a ``--messages``-message scene: bench/harness.py's ``seeded_scene`` (one
   channel, a ``messages_file``) and bench/memory.py's agent (it lists the channels, reads a
   page of history and posts), run once by ``ancha run``. Targets: checkpoint <= 50 ms and
   <= 50 MB.
3. The commands, in the copy of examples/ (``.venv/bin`` first in PATH, ``--no-progress``):
   ``ancha replay RUN/SCENE/1 --calls`` and ``ancha replay RUN/SCENE/1`` (the agent again) for
   every scene, and ``ancha fork RUN/orders-latency/1 --at SEQ -n --fork-trials`` with SEQ the
   middle entry of that trial's trace. Wall seconds per command, process start to exit.

The first checkpoint a process makes also fingerprints the world's code (``build()``, once
per process); it is timed apart. Prints markdown tables, each figure with its target where
the issue sets one. Not part of the test suite: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from harness import seeded_scene  # noqa: E402
from memory import READER  # noqa: E402

from ancha.config.loading import ConfigOverrides, load_config  # noqa: E402
from ancha.results.run_folder import TrialFolder  # noqa: E402
from ancha.results.runs_folder import RunsFolder  # noqa: E402
from ancha.scene.loading import load_scenes  # noqa: E402
from ancha.scene.model import Scene  # noqa: E402
from ancha.world import replay  # noqa: E402
from ancha.world.checkpoint import build, checkpoint, restore  # noqa: E402
from ancha.world.environment import Environment  # noqa: E402
from ancha.world.registry import catalog, config_catalog  # noqa: E402

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
CHECKPOINT_TARGET_MS = 50.0
CHECKPOINT_TARGET_MB = 50.0
AGENT = {"mode": "command"}
FORKED = re.compile(r"(\d+) calls made again in ([\d.]+)s; checkpoint ([\d,]+) bytes in ([\d.]+) ms")


@dataclass
class Measured:
    scene: str
    trace_entries: int
    original_entries: int
    size: int
    checkpoint_ms: list[float]
    restore_ms: list[float]
    same: bool


def ancha(project: Path, *args: str) -> tuple[float, subprocess.CompletedProcess[str]]:
    """``ancha ARGS`` in ``project``: its wall seconds and what it printed (exit 0 or 1, as a
    run whose gate is missed exits; anything else stops the benchmark)."""
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    started = time.perf_counter()
    done = subprocess.run([str(bin_dir / "ancha"), *args], cwd=project, env=env, capture_output=True, text=True)
    took = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"ancha {' '.join(args)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return took, done


def latest_run(project: Path) -> str:
    run_id = RunsFolder.of_project(project).latest_id()
    if run_id is None:
        raise SystemExit(f"no run in {project}/.ancha/runs")
    return run_id


def examples_project(tmp: Path) -> Path:
    project = tmp / "examples"
    shutil.copytree(EXAMPLES, project, ignore=shutil.ignore_patterns("__pycache__", ".ancha"))
    return project


def seeded_project(tmp: Path, messages: int) -> Path:
    project = tmp / "seeded"
    (project / "scenes" / "seeded").mkdir(parents=True)
    seeded_scene(project / "scenes" / "seeded", messages)
    (project / "reader.py").write_text(READER)
    (project / "ancha.yaml").write_text(f"agent:\n  command: {sys.executable} reader.py\n"
                                        "scenes: [scenes/*/scene.yaml]\ntrials: 1\nparallel: 1\n")
    return project


def project_scenes(project: Path) -> list[Scene]:
    config = load_config(None, project, ConfigOverrides(), catalog=config_catalog())
    return load_scenes(list(config.scenes), config.root, catalog())


def rebuilt(scene: Scene, folder: TrialFolder) -> Environment:
    """The trial's world at its end, made again from its recorded calls (as ``ancha replay --calls``)."""
    line = folder.read_world_line()
    if line is None:
        raise SystemExit(f"{folder.path} keeps no replay.json")
    env = Environment(str(line["env_id"]), scene, int(line["trial"]), AGENT, seed=line.get("seed"), replay=True)
    for number, call in enumerate(folder.read_calls(), 1):
        replay.make(env, replay.RecordedCall.of_dict(call, f"{folder.path}/calls.jsonl:{number}"))
    ended = line.get("ended") or {}
    if ended.get("at"):
        at = datetime.fromisoformat(str(ended["at"]).replace("Z", "+00:00")).timestamp()
        replay.end(env, round(at * 1_000_000) / 1_000_000, str(ended.get("status") or "done"),
                   str(ended.get("reason") or "the replay ended"))
    return env


def digest(env: Environment) -> str:
    world = hashlib.sha256()
    for piece in env.snapshot_json():
        world.update(piece)
    world.update(env.records_jsonl().encode())
    return world.hexdigest()


def measure(scene: Scene, folder: TrialFolder, repeats: int) -> Measured:
    env = rebuilt(scene, folder)
    try:
        made, restored_ms = [], []
        data = b""
        for _ in range(repeats):
            started = time.perf_counter()
            data = checkpoint(env)
            made.append((time.perf_counter() - started) * 1000)
        same = True
        for i in range(repeats):
            started = time.perf_counter()
            again = restore(data, scene, env.id, AGENT)
            restored_ms.append((time.perf_counter() - started) * 1000)
            if i == repeats - 1:
                same = len(again.trace) == len(env.trace) and digest(again) == digest(env)
            again.close()
        return Measured(scene.name, len(env.trace), len(folder.read_trace()), len(data), made, restored_ms, same)
    finally:
        env.close()


def checkpoints_of(project: Path, run_id: str, repeats: int) -> list[Measured]:
    run = RunsFolder.of_project(project).run(run_id)
    assert run is not None, run_id
    return [measure(scene, run.trial(scene.name, 1), repeats) for scene in project_scenes(project)]


def commands(project: Path, run_id: str, scenes: list[str], fork_trials: int) -> list[tuple[str, float, str]]:
    """(command, wall seconds, what it said) for each replay and the fork."""
    rows = []
    took, _ = ancha(project, "--version")
    rows.append(("ancha --version (the process alone)", took, ""))
    for scene in scenes:
        took, done = ancha(project, "replay", f"{run_id}/{scene}/1", "--calls", "--no-progress")
        rows.append((f"ancha replay RUN/{scene}/1 --calls", took, _verdict(done)))
        took, done = ancha(project, "replay", f"{run_id}/{scene}/1", "--no-progress")
        rows.append((f"ancha replay RUN/{scene}/1", took, _verdict(done)))
    trial = RunsFolder.of_project(project).run(run_id)
    assert trial is not None
    middle = max(1, len(trial.trial("orders-latency", 1).read_trace()) // 2)
    took, done = ancha(project, "fork", f"{run_id}/orders-latency/1", "--at", str(middle), "-n", str(fork_trials),
                       "--no-progress")
    said = FORKED.search(" ".join(done.stderr.split()))
    note = (f"{said[1]} calls made again in {said[2]} s; checkpoint {said[3]} bytes in {said[4]} ms; "
            if said else "")
    rows.append((f"ancha fork RUN/orders-latency/1 --at {middle} -n {fork_trials}", took, note + _verdict(done)))
    return rows


def _verdict(done: subprocess.CompletedProcess[str]) -> str:
    return "exit 0" if done.returncode == 0 else f"exit {done.returncode} (a trial failed its checks)"


def _ms(values: list[float]) -> str:
    return f"{statistics.median(values):.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--fork-trials", type=int, default=5)
    args = parser.parse_args()

    started = time.perf_counter()
    build()
    fingerprint_ms = (time.perf_counter() - started) * 1000
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        examples = examples_project(tmp)
        run_s, _ = ancha(examples, "run", "-n", "1", "--no-progress")
        run_id = latest_run(examples)
        small = checkpoints_of(examples, run_id, args.repeats)

        seeded = seeded_project(tmp, args.messages)
        seeded_run_s, _ = ancha(seeded, "run", "--no-progress")
        large = checkpoints_of(seeded, latest_run(seeded), args.repeats)[0]

        timed = commands(examples, run_id, [m.scene for m in small], args.fork_trials)

    print(f"### Checkpoints of the bundled examples, trial 1 at its end ({args.repeats} of each)\n")
    print(f"`ancha run -n 1` of examples/ took {run_s:.1f} s; each world below is rebuilt in this process from "
          f"the run folder's calls. The process's first checkpoint also fingerprints the world's code: "
          f"{fingerprint_ms:.0f} ms, once.\n")
    print("| scene | trace entries (replayed / original) | checkpoint (KB) | checkpoint, median (ms) | "
          "restore, median (ms) | restored world = original |")
    print("|---|---:|---:|---:|---:|---|")
    for m in small:
        print(f"| {m.scene} | {m.trace_entries} / {m.original_entries} | {m.size / 1024:.1f} | "
              f"{_ms(m.checkpoint_ms)} | {_ms(m.restore_ms)} | {'yes' if m.same else 'NO'} |")

    mb = large.size / 1e6
    ms = statistics.median(large.checkpoint_ms)
    print(f"\n### A {args.messages:,}-message scene, its trial at its end ({args.repeats} of each)\n")
    print(f"`ancha run` of the scene (one trial: list channels, read a page of history, post) took "
          f"{seeded_run_s:.1f} s; {large.trace_entries} trace entries replayed "
          f"(original {large.original_entries}).\n")
    print("| measure | result | target |")
    print("|---|---:|---|")
    print(f"| checkpoint size | {mb:.1f} MB | <= {CHECKPOINT_TARGET_MB:g} MB: "
          f"{'met' if mb <= CHECKPOINT_TARGET_MB else 'MISSED'} |")
    print(f"| checkpoint time, median (min, max) | {ms:.1f} ms ({min(large.checkpoint_ms):.1f}, "
          f"{max(large.checkpoint_ms):.1f}) | <= {CHECKPOINT_TARGET_MS:g} ms: "
          f"{'met' if ms <= CHECKPOINT_TARGET_MS else 'MISSED'} |")
    print(f"| restore time, median (min, max) | {_ms(large.restore_ms)} ms ({min(large.restore_ms):.1f}, "
          f"{max(large.restore_ms):.1f}) | - |")
    print(f"| restored world = original (world.json, records) | {'yes' if large.same else 'NO'} | - |")

    print(f"\n### The commands, in a copy of examples/ (run {run_id}, trial 1 of each scene)\n")
    print("| command | wall (s) | said |")
    print("|---|---:|---|")
    for command, seconds, note in timed:
        print(f"| `{command}` | {seconds:.1f} | {note} |")


if __name__ == "__main__":
    main()
