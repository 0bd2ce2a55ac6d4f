"""Simulated-to-real time for the bundled people example (examples/scenes/beta-exports)
under `ancha run`, with its slack_sdk agent waiting on the event feed.

    .venv/bin/python bench/example_time.py [--trials 5]

Prints a markdown table per trial and the median ratio. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=5)
    options = parser.parse_args()
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    config = ROOT / "examples" / "bench-beta-exports.yaml"
    config.write_text("agent:\n  command: python agents/acme_bot.py\nscenes: [scenes/beta-exports/scene.yaml]\n"
                      f"parallel: 1\ntrials: {options.trials}\n")
    try:
        subprocess.run([sys.executable, "-m", "ancha.cli", "run", "--no-progress", "--config", config.name],
                       cwd=ROOT / "examples", env=env, check=True, capture_output=True, text=True)
    finally:
        config.unlink()
    summary = json.loads((ROOT / "examples" / ".ancha" / "runs" / "latest" / "summary.json").read_text())
    trials = summary["scenes"][0]["trial_results"]
    print("| trial | verdict | simulated s | real s (whole trial) | real s (agent) | simulated / real |")
    print("|---:|---|---:|---:|---:|---:|")
    ratios = []
    for t in trials:
        timing = t["timings"]
        ratio = timing["simulated_s"] / timing["total_s"]
        ratios.append(ratio)
        print(f"| {t['trial']} | {t['verdict']} | {timing['simulated_s']:,.0f} | {timing['total_s']:.2f} | "
              f"{timing['agent_s']:.2f} | {ratio:,.0f}x |")
    print(f"\nmedian simulated-to-real ratio: {statistics.median(ratios):,.0f}x "
          f"(each trial covers ~{statistics.median(t['timings']['simulated_s'] for t in trials) / 60:.0f} "
          "simulated minutes of replies that arrive after 2-8 minutes each)")


if __name__ == "__main__":
    main()
