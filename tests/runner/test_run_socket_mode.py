"""``ancha run`` with ``agent.slack_transport: socket``: an unchanged Bolt app under
``SocketModeHandler`` hears a message over its Socket Mode connection and answers it; the
clock jumps to the message while the app waits on its socket."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ANCHA = [sys.executable, "-m", "ancha.cli"]

SCENE = """
name: socket
task: Answer whoever writes in #general.
clock: { limit: 2h }
world:
  slack:
    users: [{ ref: slack_ana, name: ana }]
    channels: [{ ref: slack_general, name: general, members: [$slack_ana, $slack_bot] }]
world_rules:
  events:
    - at: 30m
      do:
        - slack.message: { channel: $slack_general, from: $slack_ana, text: "Is the export back?" }
checks:
  - id: answered
    state:
      slack.message: { channel: $slack_general, from: $slack_bot, text_contains: "Looking into it" }
  - id: never_polled_the_feed
    trace: { not_called: "GET /events" }
"""

BOLT_AGENT = textwrap.dedent("""
    import os
    from slack_bolt import App
    from slack_bolt.adapter.socket_mode import SocketModeHandler
    from slack_sdk import WebClient

    app = App(client=WebClient(token=os.environ["ANCHA_SLACK_TOKEN"],
                               base_url=os.environ["ANCHA_SLACK_URL"] + "/api/"))

    @app.event("message")
    def answer(event, say):
        say(text="Looking into it, <@" + event["user"] + ">", thread_ts=event["ts"])

    SocketModeHandler(app, os.environ["ANCHA_SLACK_APP_TOKEN"]).start()
""")


def test_run__bolt_socket_mode_agent_answers_an_event_and_passes(tmp_path: Path) -> None:
    (tmp_path / "scenes" / "socket").mkdir(parents=True)
    (tmp_path / "scenes" / "socket" / "scene.yaml").write_text(SCENE)
    (tmp_path / "agent.py").write_text(BOLT_AGENT)
    (tmp_path / "ancha.yaml").write_text(
        f"agent:\n  command: {sys.executable} agent.py\n  slack_transport: socket\n  idle: 10m\n"
        "trials: 1\n")
    done = subprocess.run([*ANCHA, "run"], cwd=tmp_path, capture_output=True, text=True, timeout=240,
                          env={**os.environ})
    run = (tmp_path / ".ancha" / "runs" / "latest").resolve()
    log = next(run.glob("socket/*/agent.log")).read_text() if list(run.glob("socket/*/agent.log")) else ""
    assert done.returncode == 0, done.stdout + done.stderr + "\nagent.log:\n" + log
    checks = json.loads(next(run.glob("socket/*/checks.json")).read_text())
    assert checks["verdict"] == "passed", checks
    trace = [json.loads(line) for line in next(run.glob("socket/*/trace.jsonl")).read_text().splitlines()]
    assert any(e["path"] == "/api/apps.connections.open" and e["status"] == 200 for e in trace)
    summary = json.loads((run / "summary.json").read_text())
    assert summary["scenes"][0]["passed"] == 1
