"""Harness benchmarks: environment creation and per-trial overhead of `ancha run`.

    .venv/bin/python bench/harness.py

Prints a markdown table with each figure and its target. Not part of the test suite.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

from ancha.config.loading import ConfigOverrides, load_config
from ancha.runner.run import run_scenes
from ancha.scene.loading import load_scene, load_scenes
from ancha.server.embedded import EmbeddedServer
from ancha.world.registry import catalog, config_catalog


def seeded_scene(folder: Path, messages: int) -> Path:
    lines = [
        "name: seeded",
        "task: nothing",
        "world:",
        "  slack:",
        "    users: [{ ref: slack_ana, name: ana }]",
        "    channels: [{ ref: slack_general, name: general, members: [$slack_ana, $slack_bot] }]",
        "    messages_file: history.jsonl",
        "checks:",
        '  - { id: posted, trace: { called: "POST /api/chat.postMessage" } }',
    ]
    (folder / "scene.yaml").write_text("\n".join(lines) + "\n")
    with (folder / "history.jsonl").open("w") as out:
        for i in range(messages):
            out.write(f'{{"channel": "$slack_general", "from": "$slack_ana", "text": "message {i}", "at": "-{messages - i}m"}}\n')
    return folder / "scene.yaml"


def bench_env_creation(tmp: Path, repeats: int = 50) -> tuple[float, float, float]:
    folder = tmp / "seeded"
    folder.mkdir()
    scene = load_scene(seeded_scene(folder, 1000), catalog())
    body = {"scene": scene.model_dump(mode="json", by_alias=True), "trial": 1}
    with EmbeddedServer() as server, httpx.Client(base_url=server.url) as http:
        t = time.perf_counter()
        first = http.post("/envs", json=body)
        cold = time.perf_counter() - t
        assert first.status_code == 201, first.text
        http.delete(f"/envs/{first.json()['env_id']}")
        samples = []
        for trial in range(2, repeats + 2):
            t = time.perf_counter()
            made = http.post("/envs", json={"scene_hash": scene.source_hash, "trial": trial})
            samples.append(time.perf_counter() - t)
            assert made.status_code == 201, made.text
            http.delete(f"/envs/{made.json()['env_id']}")
    return cold * 1000, statistics.median(samples) * 1000, max(samples) * 1000


async def _spawn_noop(n: int) -> float:
    t = time.perf_counter()
    for _ in range(n):
        proc = await asyncio.create_subprocess_shell("true", start_new_session=True)
        await proc.wait()
    return (time.perf_counter() - t) / n


def bench_trial_overhead(tmp: Path, trials: int = 50, name: str = "overhead") -> tuple[float, float, float]:
    project = tmp / name
    (project / "scenes" / "noop").mkdir(parents=True)
    (project / "scenes" / "noop" / "scene.yaml").write_text(
        "name: noop\ntask: nothing\nworld:\n  slack:\n    channels: [{ name: general }]\n"
        'checks:\n  - { id: quiet, trace: { not_called: "*" } }\n')
    (project / "ancha.yaml").write_text(f"agent:\n  command: 'true'\ntrials: {trials}\nparallel: 1\n")
    config = load_config(None, project, ConfigOverrides(), catalog=config_catalog())
    scenes = load_scenes(list(config.scenes), config.root, catalog())
    t = time.perf_counter()
    result = asyncio.run(run_scenes(config, scenes, progress=False, console=_quiet_console()))
    per_trial = (time.perf_counter() - t) / trials
    assert result.exit_code == 0
    spawn = asyncio.run(_spawn_noop(trials))
    return per_trial * 1000, spawn * 1000, (per_trial - spawn) * 1000


def _quiet_console():  # type: ignore[no-untyped-def]
    from rich.console import Console

    return Console(file=open("/dev/null", "w"))  # noqa: SIM115


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        cold, warm, worst = bench_env_creation(tmp)
        per_trial, spawn, overhead = bench_trial_overhead(tmp)
        # What one more trial costs: the difference between a 60- and a 10-trial run, so the
        # run's one-time work (importing the replicas, starting the server) is left out.
        short = bench_trial_overhead(tmp, 10, "short")[0] * 10
        long = bench_trial_overhead(tmp, 60, "long")[0] * 60
        marginal = (long - short) / 50 - spawn
    rows = [
        ("environment creation, 1,000 seeded messages (first trial, scene sent)", f"{cold:.1f} ms", "—"),
        ("environment creation, 1,000 seeded messages (median of 50)", f"{warm:.1f} ms", "≤ 50 ms"),
        ("environment creation, 1,000 seeded messages (worst of 50)", f"{worst:.1f} ms", "—"),
        ("trial with a no-op agent, end to end (mean of 50, parallel 1)", f"{per_trial:.1f} ms", "—"),
        ("the no-op agent's own process (`sh -c true`)", f"{spawn:.1f} ms", "—"),
        ("harness overhead per trial beyond the agent's process", f"{overhead:.1f} ms", "≤ 30 ms"),
        ("the same, one more trial (60-trial run less 10-trial run, / 50): the run's one-time work left out",
         f"{marginal:.1f} ms", "≤ 10 ms"),
    ]
    print("| measure | result | target |\n|---|---:|---:|")
    for row in rows:
        print(f"| {row[0]} | {row[1]} | {row[2]} |")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
