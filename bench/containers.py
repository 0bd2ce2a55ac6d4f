"""Container trial overhead: the same trivial agent as a host process and in a container, on each engine.

    .venv/bin/python bench/containers.py [--trials 10] [--engines docker,podman]

One project, one scene, ``parallel: 1``. The agent posts one Slack message with urllib and
exits, so its own work is the same in both modes (the container runs this machine's own
Python, from the test image of ``tests/runner/container_image.py``). Per trial, ``agent``
is the runner's time from starting the agent to having stopped it (``agent_s``): for a
container that includes the network namespace, ``create``, copying the files in,
``start --attach``, copying ``/state`` out and ``rm``. The overhead is the container's
median minus the host's median (target: at most 1.5 s). For scale, each engine's last row is
the engine alone: ``run --rm IMAGE sh -c :`` with the same flags, no Ancha. One table holds
the host and every engine that answers (``ANCHA_CONTAINER_ENGINE`` picks each in turn). Needs
root, as the tests do. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console

from ancha.config.loading import ConfigOverrides, load_config
from ancha.runner.agents.container_engine import find_engine
from ancha.runner.run import run_scenes
from ancha.scene.loading import load_scenes
from ancha.world.registry import catalog, config_catalog

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "runner"))
from container_image import ENGINES, agent_image, engine_ready  # noqa: E402

SCENE = """
name: hello
task: Say hello in #general.
world:
  slack:
    users: [{ ref: slack_ana, name: ana }]
    channels: [{ ref: slack_general, name: general, members: [$slack_ana, $slack_bot] }]
checks:
  - id: posted
    trace: { called: "POST /api/chat.postMessage" }
"""

AGENT = """
import json, os, urllib.request
def call(method, body):
    request = urllib.request.Request(os.environ["ANCHA_SLACK_URL"] + "/api/" + method, data=json.dumps(body).encode(),
        headers={"Authorization": "Bearer " + os.environ["ANCHA_SLACK_TOKEN"], "Content-Type": "application/json"})
    return json.load(urllib.request.urlopen(request))
channel = call("conversations.list", {})["channels"][0]["id"]
assert call("chat.postMessage", {"channel": channel, "text": "hello"})["ok"]
"""


def run_mode(root: Path, mode: str, image: str, trials: int) -> list[dict[str, float]]:
    execution = f"  execution: {{ mode: container, image: {image} }}\n" if mode != "host" else ""
    python = "python3" if mode != "host" else sys.executable
    (root / "ancha.yaml").write_text(f"agent:\n  command: {python} agent.py\n{execution}"
                                     f"scenes: [scenes/*/scene.yaml]\ntrials: {trials}\nparallel: 1\n")
    if mode != "host":
        os.environ["ANCHA_CONTAINER_ENGINE"] = mode
    config = load_config(root / "ancha.yaml", root, ConfigOverrides(), catalog=config_catalog())
    scenes = load_scenes(list(config.scenes), config.root, catalog())
    result = asyncio.run(run_scenes(config, scenes, console=Console(quiet=True), progress=False))
    outcomes = result.scenes[0].outcomes
    assert all(o.verdict == "passed" for o in outcomes), [(o.verdict, o.reason) for o in outcomes]
    return [o.timings for o in outcomes]


def engine_alone(name: str, image: str, runs: int) -> list[float]:
    engine = find_engine({**os.environ, "ANCHA_CONTAINER_ENGINE": name})
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(engine.command("run", "--rm", *engine.run_flags, "--pull=never", "--network", "none",
                                      "--read-only", image, "/bin/sh", "-c", ":"), check=True, capture_output=True)
        times.append(time.perf_counter() - started)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--engines", default=",".join(ENGINES))
    args = parser.parse_args()
    engines = []
    for name in args.engines.split(","):
        problem = engine_ready(name)
        if problem is None:
            engines.append(name)
        else:
            print(f"{name}: left out: {problem}")
    rows: dict[str, list[dict[str, float]]] = {}
    alone: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "scenes" / "hello").mkdir(parents=True)
        (root / "scenes" / "hello" / "scene.yaml").write_text(SCENE)
        (root / "agent.py").write_text(AGENT)
        rows["host"] = run_mode(root, "host", "", args.trials)
        for name in engines:
            image = agent_image(name)
            rows[name] = run_mode(root, name, image, args.trials)
            alone[name] = engine_alone(name, image, args.trials)

    def median(mode: str, key: str) -> float:
        return statistics.median(t[key] for t in rows[mode])

    print(f"trials per mode: {args.trials}, parallel 1; seconds, median (p90)\n")
    print("| mode | agent (start to stopped) | whole trial | container overhead |")
    print("|---|---:|---:|---:|")
    for mode, timings in rows.items():
        agent = sorted(t["agent_s"] for t in timings)
        total = sorted(t["total_s"] for t in timings)
        p90 = agent[min(len(agent) - 1, int(0.9 * len(agent)))]
        overhead = median(mode, "agent_s") - median("host", "agent_s")
        verdict = "" if mode == "host" else f"{overhead:.3f} ({'ok' if overhead <= 1.5 else 'over'}: target <= 1.5)"
        print(f"| {'host process' if mode == 'host' else f'{mode} container'} | {statistics.median(agent):.3f} "
              f"({p90:.3f}) | {statistics.median(total):.3f} | {verdict} |")
        if mode in alone:
            print(f"| {mode} alone: `run --rm IMAGE sh -c :` | {statistics.median(alone[mode]):.3f} | | |")


if __name__ == "__main__":
    main()
