"""The Bolt example (examples/agents/bolt_app.py) through ``ancha run``: one unchanged
slack_bolt app passes the bundled Slack scenes under Socket Mode (a command agent) and
under the Events API (an endpoint agent Ancha starts)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SLACK_SCENES = ["export-question", "beta-exports"]  # the bundled scenes where Slack is the only tool
BOLT_APP = EXAMPLES / "agents" / "bolt_app.py"

AGENTS = {
    "socket": f"agent:\n  command: {sys.executable} {BOLT_APP}\n  slack_transport: socket\n",
    "http": ("agent:\n"
             '  url: "http://127.0.0.1:{{agent.port}}/slack/events"\n'
             f"  start: {sys.executable} {BOLT_APP}\n"
             '  ready_url: "http://127.0.0.1:{{agent.port}}/ready"\n'
             "  slack_transport: http\n"),
}


def run_bolt_example(tmp_path: Path, transport: str) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]]]:
    """One trial of each bundled Slack scene with the Bolt app; the run and every trial's checks.json."""
    scenes = ", ".join(str(EXAMPLES / "scenes" / name / "scene.yaml") for name in SLACK_SCENES)
    (tmp_path / "ancha.yaml").write_text(f"{AGENTS[transport]}scenes: [{scenes}]\ntrials: 1\nmin_pass_rate: 1\n")
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run([str(bin_dir / "ancha"), "run", "--no-progress"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    run = (tmp_path / ".ancha" / "runs" / "latest").resolve()
    return done, [json.loads(path.read_text()) for path in sorted(run.glob("*/*/checks.json"))]


def agent_logs(tmp_path: Path) -> str:
    run = (tmp_path / ".ancha" / "runs" / "latest").resolve()
    return "".join(f"\n--- {path.parent.parent.name}:\n{path.read_text()}" for path in run.glob("*/*/agent.log"))


@pytest.mark.parametrize("transport", ["socket", "http"])
def test_bolt_example__passes_the_slack_scenes(tmp_path: Path, transport: str) -> None:
    done, trials = run_bolt_example(tmp_path, transport)
    assert done.returncode == 0, done.stdout + done.stderr + agent_logs(tmp_path)
    assert sorted(t["scene"] for t in trials) == sorted(SLACK_SCENES), trials
    failed = {t["scene"]: [r["id"] for r in t["results"] if not r["passed"]] for t in trials if t["verdict"] != "passed"}
    assert failed == {}, agent_logs(tmp_path)
