"""`agent.input: per_event`: one agent process per event addressed to the agent, and a
world whose clock jumps while the runner waits for the next event."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

ANCHA = [sys.executable, "-m", "ancha.cli"]

SCENE = """
name: greeter
task: Greet whoever talks to you.
clock: { limit: 2h }
world:
  slack:
    users: [{ ref: slack_laura, name: laura }]
    channels: [{ ref: slack_support, name: support, members: [$slack_laura, $slack_bot] }]
people:
  laura:
    name: Laura
    accounts: { slack: $slack_laura }
    listens: [$slack_support]
    replies_after: 10m
    otherwise: Thanks!
world_rules:
  events:
    - at: 30m
      do:
        - slack.message: { channel: $slack_support, from: $slack_laura, text: "Hello? anyone there?" }
    - at: 90m
      do:
        - slack.message: { channel: $slack_support, from: $slack_laura, text: "Second question, bot." }
checks:
  - id: greeted_her_twice
    message: { to: laura, from: $slack_bot, count_gte: 2 }
  - id: greeted_in_time
    within: { event: { message: { to: laura, from: $slack_bot } }, of: start, limit: 31m }
"""

AGENT = textwrap.dedent("""
    import json, os, urllib.request
    event = json.loads(os.environ["ANCHA_EVENT_JSON"])
    inner = event["payload"]["event"]
    with open(os.path.join(os.environ["ANCHA_STATE_DIR"], "tasks.txt"), "a") as out:
        out.write(event["type"] + " | " + os.environ["ANCHA_TASK"] + "\\n")
    if event["type"] != "message":
        raise SystemExit(0)
    body = json.dumps({"channel": inner["channel"], "thread_ts": inner["ts"], "text": "Hi Laura!"}).encode()
    req = urllib.request.Request(os.environ["ANCHA_SLACK_URL"] + "/api/chat.postMessage", data=body,
        headers={"Authorization": "Bearer " + os.environ["ANCHA_SLACK_TOKEN"], "Content-Type": "application/json"})
    assert json.load(urllib.request.urlopen(req))["ok"]
""")


def test_per_event__one_process_per_event_and_the_clock_jumps(tmp_path: Path) -> None:
    (tmp_path / "scenes" / "greeter").mkdir(parents=True)
    (tmp_path / "scenes" / "greeter" / "scene.yaml").write_text(SCENE)
    (tmp_path / "agent.py").write_text(AGENT)
    (tmp_path / "ancha.yaml").write_text(
        f"agent:\n  command: {sys.executable} agent.py\n  input: per_event\n  idle: 5m\ntrials: 2\n")
    started = time.monotonic()
    ran = subprocess.run([*ANCHA, "run", "--no-progress"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    real = time.monotonic() - started
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert real < 30  # two hours of simulated time per trial
    trial = tmp_path / ".ancha" / "runs" / "latest" / "greeter" / "1"
    checks = json.loads((trial / "checks.json").read_text())
    assert checks["verdict"] == "passed" and checks["status"] == "idle"
    tasks = (trial / "state" / "tasks.txt").read_text().splitlines()
    assert len(tasks) == 2  # her two messages (a thread reply is no direct ask, so she does not answer it)
    assert tasks[0].startswith("message | slack message from ") and "Hello? anyone there?" in tasks[0]
    summary = json.loads((tmp_path / ".ancha" / "runs" / "latest" / "summary.json").read_text())
    assert summary["scenes"][0]["trial_results"][0]["timings"]["simulated_s"] >= 90 * 60


QUIET = """
name: quiet
task: "Post a status line in #support."
clock: { limit: 2h }
world:
  slack:
    users: [{ ref: slack_laura, name: laura }]
    channels: [{ ref: slack_support, name: support, members: [$slack_laura, $slack_bot] }]
checks:
  - id: posted
    trace: { called: "POST /api/chat.postMessage" }
"""

TASK_AGENT = textwrap.dedent("""
    import json, os, urllib.request
    event = json.loads(os.environ["ANCHA_EVENT_JSON"])
    with open(os.path.join(os.environ["ANCHA_STATE_DIR"], "tasks.txt"), "a") as out:
        out.write(event["service"] + " " + event["type"] + " | " + os.environ["ANCHA_TASK"] + "\\n")
    api = os.environ["ANCHA_SLACK_URL"] + "/api/"
    headers = {"Authorization": "Bearer " + os.environ["ANCHA_SLACK_TOKEN"], "Content-Type": "application/json"}
    req = urllib.request.Request(api + "conversations.list", data=b"{}", headers=headers)
    channel = json.load(urllib.request.urlopen(req))["channels"][0]["id"]
    body = json.dumps({"channel": channel, "text": "all quiet"}).encode()
    assert json.load(urllib.request.urlopen(urllib.request.Request(api + "chat.postMessage", data=body,
                                                                    headers=headers)))["ok"]
""")


def test_per_event__with_no_event_the_agent_gets_the_task_once_before_the_world_goes_idle(tmp_path: Path) -> None:
    (tmp_path / "scenes" / "quiet").mkdir(parents=True)
    (tmp_path / "scenes" / "quiet" / "scene.yaml").write_text(QUIET)
    (tmp_path / "agent.py").write_text(TASK_AGENT)
    (tmp_path / "ancha.yaml").write_text(
        f"agent:\n  command: {sys.executable} agent.py\n  input: per_event\n  idle: 5m\ntrials: 1\n")
    ran = subprocess.run([*ANCHA, "run", "--no-progress"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    trial = tmp_path / ".ancha" / "runs" / "latest" / "quiet" / "1"
    checks = json.loads((trial / "checks.json").read_text())
    assert checks["verdict"] == "passed" and checks["status"] == "idle"
    assert (trial / "state" / "tasks.txt").read_text().splitlines() == [
        "ancha task | Post a status line in #support."]
