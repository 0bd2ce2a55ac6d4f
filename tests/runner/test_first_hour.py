"""What a new user stumbled on in their first hour, each pinned: a Python agent's output is never
lost to buffering, an empty folder's `ancha run` points at `ancha init`, `ancha check` says
"could not run" with exit 3, `ancha report` says AgentOS is not running, the run table's title
has no padding, `ancha playground --print-env` gives the variables that make PagerDuty's https
trusted outside `ancha run`."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from test_run_cli import ancha, project

PRINTS_THEN_WAITS = """
import json, os, time, urllib.request
print("the agent's last words, never flushed")
req = urllib.request.Request(os.environ["ANCHA_DONE_URL"], data=b"{}", method="POST",
    headers={"Authorization": "Bearer " + os.environ["ANCHA_TRIAL_TOKEN"], "Content-Type": "application/json"})
urllib.request.urlopen(req)
time.sleep(600)  # the runner ends the trial and stops it: its stdout buffer is never flushed by itself
"""


def test_a_python_agents_output_reaches_agent_log_when_the_trial_ends_it(tmp_path: Path) -> None:
    root = project(tmp_path, PRINTS_THEN_WAITS, trials=1)
    result = ancha("run", cwd=root)
    log = (root / ".ancha" / "runs" / "latest" / "hello" / "1" / "agent.log").read_text()
    assert "the agent's last words, never flushed" in log, result.stdout + result.stderr


def test_a_users_own_pythonunbuffered_wins(tmp_path: Path) -> None:
    agent = "import os\nprint(repr(os.environ.get('PYTHONUNBUFFERED')), flush=True)\n"
    root = project(tmp_path, agent, trials=1, extra="  env: { PYTHONUNBUFFERED: '' }\n")
    ancha("run", cwd=root)
    assert "''" in (root / ".ancha" / "runs" / "latest" / "hello" / "1" / "agent.log").read_text()


def test_ancha_run_in_an_empty_folder_suggests_ancha_init(tmp_path: Path) -> None:
    result = ancha("run", cwd=tmp_path)
    assert result.returncode == 2
    assert "no file matches scenes/**/scene.yaml" in result.stderr
    assert "`ancha init` writes ancha.yaml, a scene and an agent" in result.stderr


def test_ancha_run_in_a_folder_with_scenes_elsewhere_does_not_suggest_init(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "scene.yaml").write_text("name: x\n")
    result = ancha("run", cwd=tmp_path)
    assert result.returncode == 2 and "ancha init" not in result.stderr


def test_ancha_check_with_no_server_could_not_run_exit_3(tmp_path: Path) -> None:
    result = ancha("check", "--env", "env_gone", "--server", "http://127.0.0.1:9", cwd=tmp_path)
    assert result.returncode == 3, result.stderr
    assert "no Ancha server answers at http://127.0.0.1:9" in result.stderr and "ancha serve" in result.stderr


def test_ancha_report_with_no_agentos_says_it_is_not_running(tmp_path: Path) -> None:
    root = project(tmp_path, "print('hi')\n", trials=1)
    ancha("run", cwd=root)
    result = ancha("report", "--workflow", "bot", "--url", "http://127.0.0.1:9", "--api-key", "aos_live_x", cwd=root)
    assert result.returncode == 1
    assert "AgentOS is not running at http://127.0.0.1:9" in result.stderr
    assert "agentos serve" in result.stderr and "refused the evaluation" not in result.stderr


def test_the_run_tables_title_is_not_padded(tmp_path: Path) -> None:
    root = project(tmp_path, "print('hi')\n", trials=1)
    result = ancha("run", cwd=root, env={"COLUMNS": "200"})
    titles = [line for line in result.stdout.splitlines() if line.strip() == "ancha run"]
    assert titles == ["ancha run"], result.stdout


PAGERDUTY_SCENE = """\
name: pd
task: look at the incidents
world:
  pagerduty:
    users: [{ ref: pd_maya, name: Maya, email: maya@acme.test }]
    escalation_policies: [{ ref: pd_policy, name: checkout, rules: [{ targets: [$pd_maya] }] }]
    services: [{ ref: pd_checkout, name: checkout, escalation_policy: $pd_policy }]
    incidents: [{ service: $pd_checkout, title: Checkout is down }]
"""
LISTS_INCIDENTS = """
import os, httpx
answer = httpx.get(os.environ["ANCHA_PAGERDUTY_URL"] + "/incidents",
                   headers={"Authorization": "Token token=" + os.environ["ANCHA_PAGERDUTY_TOKEN"]})
print(answer.status_code, [i["title"] for i in answer.json()["incidents"]])
"""


def test_playground_print_env_makes_pagerdutys_https_trusted_outside_ancha_run(tmp_path: Path) -> None:
    (tmp_path / "scene.yaml").write_text(PAGERDUTY_SCENE)
    (tmp_path / "task.json").write_text(json.dumps([{"id": "listed", "trace": {"called": "GET /incidents"}}]))
    process = subprocess.Popen([sys.executable, "-m", "ancha.cli", "playground", "task.json", "--scene", "scene.yaml",
                                "--print-env"], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True)
    lines: list[str] = []
    done = threading.Event()

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line)
            if line.startswith("Ctrl-C"):
                done.set()
                return

    threading.Thread(target=read, daemon=True).start()
    try:
        assert done.wait(60), "".join(lines)
        exports = dict(shlex.split(line.removeprefix("export "))[0].split("=", 1)
                       for line in lines if line.startswith("export "))
        assert exports["ANCHA_PAGERDUTY_URL"].startswith("https://")
        assert {"SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS", "ANCHA_PAGERDUTY_TOKEN"} <= set(exports)
        env = {"PATH": os.environ["PATH"], **exports}
        listed = subprocess.run([sys.executable, "-c", LISTS_INCIDENTS], env=env, capture_output=True, text=True,
                                timeout=60)
        assert listed.returncode == 0, listed.stderr
        assert listed.stdout.strip() == "200 ['Checkout is down']"
    finally:
        process.send_signal(signal.SIGINT)
        deadline = time.monotonic() + 30
        while process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        if process.poll() is None:
            process.kill()


CRASHES = """
import sys
print("loading the model")
print("Traceback (most recent call last):", file=sys.stderr)
print("KeyError: 'OPENAI_API_KEY'", file=sys.stderr)
sys.exit(2)
"""


def test_ancha_explain_shows_the_last_lines_of_agent_log_when_the_agent_exits_non_zero(tmp_path: Path) -> None:
    root = project(tmp_path, CRASHES, trials=1)
    ancha("run", cwd=root)
    explained = ancha("explain", cwd=root)
    assert "exited with code 2" in explained.stdout
    assert "agent.log, its last 3 lines:" in explained.stdout
    assert "    | KeyError: 'OPENAI_API_KEY'" in explained.stdout
    assert "    | loading the model" in explained.stdout


def test_ancha_doctor_fails_an_agent_whose_script_is_missing(tmp_path: Path) -> None:
    root = project(tmp_path, "print('hi')\n", trials=1)
    (root / "agent.py").unlink()
    doctor = ancha("doctor", cwd=root)
    line = next(line for line in doctor.stdout.splitlines() if " agent " in f" {line} ")
    assert line.startswith("FAIL") and "there is no such file" in line and "agent.py" in line, doctor.stdout
    assert doctor.returncode != 0
