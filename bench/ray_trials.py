"""Trials per second of `ancha run` on this machine and on a local Ray cluster.

    .venv/bin/python bench/ray_trials.py [--trials 200] [--baseline-trials N]

The people example (examples/scenes/beta-exports, with examples/agents/acme_bot.py: Laura,
Ben and Mike answer after simulated minutes, the agent waits on the feed) run through the
real CLI, as a user runs it:

- local, ``parallel: 1`` and ``parallel: 2``;
- ``--ray`` on a local cluster of one node (1 CPU), then of two nodes (1 CPU each: a head
  and a worker node, both on this machine).

Prints a markdown table: wall seconds of each run (ancha run's own ``duration_s``, which
includes connecting to Ray and shipping the project), trials per second, and the scaling
efficiency of two nodes over one (``rate(2 nodes) / (2 x rate(1 node))``) beside the
same ratio for local ``parallel`` 2 over 1. Both "nodes" share this machine's cores, so
the efficiency says what Ray costs, not what a second machine would bring. Also prints
the machine's conditions (cores, load before and after). Not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
NODE = {"num_cpus": 1, "object_store_memory": 100 * 1024 * 1024}


def project(folder: Path, trials: int) -> Path:
    (folder / "scenes").mkdir(parents=True)
    shutil.copytree(ROOT / "examples" / "scenes" / "beta-exports", folder / "scenes" / "beta-exports")
    shutil.copytree(ROOT / "examples" / "agents", folder / "agents", ignore=shutil.ignore_patterns("__pycache__"))
    (folder / "ancha.yaml").write_text(f"agent:\n  command: {sys.executable} agents/acme_bot.py\n"
                                       f"scenes: [scenes/beta-exports/scene.yaml]\ntrials: {trials}\n"
                                       "min_pass_rate: 0\n")
    return folder


def ancha_run(folder: Path, *args: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-m", "ancha.cli", "run", "--no-progress", *args], cwd=folder,
                          capture_output=True, text=True, env=os.environ.copy())
    if done.returncode not in (0, 1):
        raise SystemExit(f"ancha run {' '.join(args)} failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    summary: dict[str, Any] = json.loads((folder / ".ancha" / "runs" / "latest" / "summary.json").read_text())
    return summary


def row(name: str, summary: dict[str, Any]) -> dict[str, Any]:
    scene = summary["scenes"][0]
    seconds = float(summary["duration_s"])
    return {"setup": name, "trials": scene["ran"], "passed": scene["passed"], "invalid": scene["invalid"],
            "seconds": seconds, "rate": scene["ran"] / seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=200, help="trials of each run (default 200)")
    parser.add_argument("--baseline-trials", type=int, help="trials of the 1-at-once runs (default: --trials)")
    args = parser.parse_args()
    baseline = args.baseline_trials or args.trials
    import ray  # noqa: F401  (the ray extra: pip install -e '.[ray]')
    from ray.cluster_utils import Cluster

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    load_before = os.getloadavg()
    rows = []
    with tempfile.TemporaryDirectory(prefix="ancha-bench-ray-") as tmp:
        base = project(Path(tmp) / "one", baseline)
        full = project(Path(tmp) / "two", args.trials)
        rows.append(row("local, parallel 1", ancha_run(base, "--parallel", "1")))
        rows.append(row("local, parallel 2", ancha_run(full, "--parallel", "2")))
        nodes = Cluster(initialize_head=True, head_node_args={**NODE, "include_dashboard": False})
        try:
            rows.append(row("ray, 1 node x 1 CPU", ancha_run(base, "--ray", nodes.address)))
            nodes.add_node(**NODE)
            nodes.wait_for_nodes()
            rows.append(row("ray, 2 nodes x 1 CPU", ancha_run(full, "--ray", nodes.address)))
        finally:
            nodes.shutdown()
            current = Path("/tmp/ray/ray_current_cluster")
            if current.is_file() and current.read_text().strip() == nodes.address:
                current.unlink()
    load_after = os.getloadavg()

    print("| setup | trials | passed | invalid | wall s | trials/s |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['setup']} | {r['trials']} | {r['passed']} | {r['invalid']} | {r['seconds']:.1f} | {r['rate']:.2f} |")
    local1, local2, ray1, ray2 = (r["rate"] for r in rows)
    print()
    print("| ratio | value |")
    print("|---|---:|")
    print(f"| scaling efficiency, ray 2 nodes / (2 x 1 node) | {ray2 / (2 * ray1):.0%} |")
    print(f"| scaling efficiency, local parallel 2 / (2 x parallel 1) | {local2 / (2 * local1):.0%} |")
    print(f"| ray 2 nodes / local parallel 2 (same concurrency) | {ray2 / local2:.2f}x |")
    print()
    print(f"conditions: {os.cpu_count()} cores shared by both nodes and the driver; load average (1, 5, 15 min) "
          f"{load_before[0]:.1f} {load_before[1]:.1f} {load_before[2]:.1f} before, "
          f"{load_after[0]:.1f} {load_after[1]:.1f} {load_after[2]:.1f} after")


if __name__ == "__main__":
    main()
