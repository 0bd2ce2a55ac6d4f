"""`ancha run --retry-invalid` on this machine: an invalid trial runs once more, from an empty folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ANCHA = [sys.executable, "-m", "ancha.cli"]

SCENE = """
name: hello
task: Say hello in #general.
clock: { limit: 10m }
world:
  slack:
    users: [{ ref: slack_ana, name: ana }]
    channels: [{ ref: slack_general, name: general, members: [$slack_ana, $slack_bot] }]
checks:
  - id: posted
    trace: { called: "POST /api/chat.postMessage" }
"""

NOT_FOUND_ON_FIRST_ATTEMPT = """
import json, os, sys, urllib.request
marker = os.path.join(os.environ["ATTEMPTS"], os.environ["ANCHA_TRIAL"])
if not os.path.exists(marker):
    open(marker, "w").close()
    print("first attempt: as if the command were not there")
    sys.exit(127)
def call(method, body):
    req = urllib.request.Request(os.environ["ANCHA_SLACK_URL"] + "/api/" + method, data=json.dumps(body).encode(),
        headers={"Authorization": "Bearer " + os.environ["ANCHA_SLACK_TOKEN"], "Content-Type": "application/json"})
    return json.load(urllib.request.urlopen(req))
call("chat.postMessage", {"channel": call("conversations.list", {})["channels"][0]["id"], "text": "hello"})
"""


def project(tmp_path: Path) -> Path:
    (tmp_path / "scenes" / "hello").mkdir(parents=True)
    (tmp_path / "scenes" / "hello" / "scene.yaml").write_text(SCENE)
    (tmp_path / "agent.py").write_text(textwrap.dedent(NOT_FOUND_ON_FIRST_ATTEMPT))
    (tmp_path / "attempts").mkdir()
    (tmp_path / "ancha.yaml").write_text(f"agent:\n  command: {sys.executable} agent.py\n"
                                         f"  env: {{ATTEMPTS: {tmp_path / 'attempts'}}}\ntrials: 2\n")
    return tmp_path


def ancha_run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ANCHA, "run", "--no-progress", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env=os.environ.copy())


def test_retry_invalid__an_invalid_trial_runs_once_more_and_keeps_the_first_reason(tmp_path: Path) -> None:
    result = ancha_run(project(tmp_path), "--retry-invalid")
    assert result.returncode == 0, result.stdout + result.stderr
    run = (tmp_path / ".ancha" / "runs" / "latest").resolve()
    summary = json.loads((run / "summary.json").read_text())
    for trial in summary["scenes"][0]["trial_results"]:
        assert trial["verdict"] == "passed"
        assert trial["retried"] == "the agent command was not found: " + f"{sys.executable} agent.py"
    for number in ("1", "2"):  # the retry's own folder: nothing left of the first attempt
        assert json.loads((run / "hello" / number / "checks.json").read_text())["verdict"] == "passed"
        assert "first attempt" not in (run / "hello" / number / "agent.log").read_text()


def test_retry_invalid__without_it_an_invalid_trial_is_not_run_again(tmp_path: Path) -> None:
    result = ancha_run(project(tmp_path))
    assert result.returncode == 3, result.stdout + result.stderr  # every trial invalid, none started
    run = (tmp_path / ".ancha" / "runs" / "latest").resolve()
    trials = json.loads((run / "summary.json").read_text())["scenes"][0]["trial_results"]
    assert [t["verdict"] for t in trials] == ["invalid", "invalid"]
    assert all("retried" not in t for t in trials)
    assert sorted(p.name for p in (tmp_path / "attempts").iterdir()) == ["1", "2"]
