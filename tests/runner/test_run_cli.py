"""`ancha run` end to end, as a user runs it: a real CLI process, a real server, real agents."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

ANCHA = [sys.executable, "-m", "ancha.cli"]


def ancha(*args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ANCHA, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})


SCENE = """
name: {name}
task: Say hello in #general.
clock: {{ limit: {limit}, speed: {speed} }}
world:
  slack:
    users: [{{ ref: slack_ana, name: ana }}]
    channels: [{{ ref: slack_general, name: general, members: [$slack_ana, $slack_bot] }}]
checks:
  - id: posted
    trace: {{ called: "POST /api/chat.postMessage" }}
"""

POSTING_AGENT = textwrap.dedent("""
    import json, os, urllib.request
    url = os.environ["ANCHA_SLACK_URL"] + "/api/conversations.list"
    req = urllib.request.Request(url, headers={"Authorization": "Bearer " + os.environ["ANCHA_SLACK_TOKEN"]})
    channel = json.load(urllib.request.urlopen(req))["channels"][0]["id"]
    body = json.dumps({"channel": channel, "text": "hello"}).encode()
    req = urllib.request.Request(os.environ["ANCHA_SLACK_URL"] + "/api/chat.postMessage", data=body,
        headers={"Authorization": "Bearer " + os.environ["ANCHA_SLACK_TOKEN"], "Content-Type": "application/json"})
    print(json.load(urllib.request.urlopen(req))["ok"])
""")


def project(tmp_path: Path, agent: str, *, trials: int = 2, limit: str = "10m", speed: float = 1,
            extra: str = "") -> Path:
    (tmp_path / "scenes" / "hello").mkdir(parents=True)
    (tmp_path / "scenes" / "hello" / "scene.yaml").write_text(SCENE.format(name="hello", limit=limit, speed=speed))
    (tmp_path / "agent.py").write_text(agent)
    (tmp_path / "ancha.yaml").write_text(
        f"agent:\n  command: {sys.executable} agent.py\n{extra}trials: {trials}\nparallel: 2\n")
    return tmp_path


def alive(pid: int) -> bool:
    """Running, as opposed to gone or a zombie waiting for a parent that is not ours to reap it."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "State:\tZ" not in status


def latest(root: Path) -> Path:
    return (root / ".ancha" / "runs" / "latest").resolve()


def test_init_then_run__passes_in_an_empty_folder(tmp_path: Path) -> None:
    created = ancha("init", cwd=tmp_path)
    assert created.returncode == 0, created.stderr
    assert (tmp_path / "ancha.yaml").read_text().count("trials: 1") == 1
    ran = ancha("run", "--no-progress", cwd=tmp_path, env={"PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"})
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "hello" in ran.stdout and "met" in ran.stdout
    checks = json.loads((latest(tmp_path) / "hello" / "1" / "checks.json").read_text())
    assert checks["verdict"] == "passed"
    assert {r["id"] for r in checks["results"]} == {"greeted", "posted"}


def test_init__refuses_to_overwrite(tmp_path: Path) -> None:
    (tmp_path / "ancha.yaml").write_text("trials: 3\n")
    again = ancha("init", cwd=tmp_path)
    assert again.returncode != 0
    assert "already exist" in again.stderr
    assert (tmp_path / "ancha.yaml").read_text() == "trials: 3\n"


def test_run__writes_results_on_disk(tmp_path: Path) -> None:
    project(tmp_path, POSTING_AGENT)
    ran = ancha("run", "--no-progress", cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "ancha explain" not in ran.stdout  # nothing failed: no pointer to failed checks
    run_dir = latest(tmp_path)
    summary = json.loads((run_dir / "summary.json").read_text())
    scene = summary["scenes"][0]
    assert (scene["scene"], scene["trials"], scene["passed"], scene["failed"], scene["invalid"]) == ("hello", 2, 2, 0, 0)
    assert scene["pass_rate"] == 1 and scene["gate_met"] is True
    for trial in ("1", "2"):
        folder = run_dir / "hello" / trial
        for name in ("checks.json", "trace.jsonl", "records.jsonl", "world.json", "agent.log"):
            assert (folder / name).exists(), name
        trace = [json.loads(line) for line in (folder / "trace.jsonl").read_text().splitlines()]
        assert [e["path"] for e in trace] == ["/api/conversations.list", "/api/chat.postMessage"]
        assert trace[1]["actor"] == "agent" and trace[1]["worked"] is True and trace[1]["seq"] == 2
        assert "True" in (folder / "agent.log").read_text()


def test_run__gate_not_met_exits_1_and_overrides_apply(tmp_path: Path) -> None:
    project(tmp_path, "print('I do nothing')\n")
    ran = ancha("run", "--no-progress", "-n", "3", cwd=tmp_path)
    assert ran.returncode == 1
    assert "(failed checks: `ancha explain`)" in ran.stdout
    summary = json.loads((latest(tmp_path) / "summary.json").read_text())
    assert summary["scenes"][0]["trials"] == 3 and summary["scenes"][0]["failed"] == 3
    relaxed = ancha("run", "--no-progress", "-n", "1", "--min-pass-rate", "0", cwd=tmp_path)
    assert relaxed.returncode == 0


def test_run__agent_override_replaces_the_command(tmp_path: Path) -> None:
    project(tmp_path, "raise SystemExit(9)\n")
    (tmp_path / "good.py").write_text(POSTING_AGENT)
    ran = ancha("run", "--no-progress", "-n", "1", "--agent", f"{sys.executable} good.py", cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr


def test_run__crashing_agent_fails_with_reason_and_explain_shows_it(tmp_path: Path) -> None:
    project(tmp_path, "import sys\nprint('about to crash')\nsys.exit(3)\n", trials=1)
    ran = ancha("run", "--no-progress", cwd=tmp_path)
    assert ran.returncode == 1
    folder = latest(tmp_path) / "hello" / "1"
    checks = json.loads((folder / "checks.json").read_text())
    assert checks["verdict"] == "failed" and checks["reason"] == "the agent exited with code 3"
    log = (folder / "agent.log").read_text()
    assert "about to crash" in log and "ancha: the agent exited with code 3" in log
    explained = ancha("explain", cwd=tmp_path)
    assert explained.returncode == 0
    assert "posted" in explained.stdout and "exited with code 3" in explained.stdout


def test_run__agent_that_never_starts_is_invalid_and_exit_3(tmp_path: Path) -> None:
    project(tmp_path, "", trials=2)
    ran = ancha("run", "--no-progress", "--agent", "definitely-not-a-command-xyz", cwd=tmp_path)
    assert ran.returncode == 3, ran.stdout + ran.stderr
    summary = json.loads((latest(tmp_path) / "summary.json").read_text())
    assert summary["scenes"][0]["invalid"] == 2 and summary["scenes"][0]["gate_met"] is False
    log = (latest(tmp_path) / "hello" / "1" / "agent.log").read_text()
    assert "not found" in log


def test_run__trial_past_clock_limit_is_stopped_with_its_whole_process_group(tmp_path: Path) -> None:
    agent = textwrap.dedent("""
        import os, subprocess, time
        child = subprocess.Popen(["sleep", "300"])
        open(os.path.join(os.environ["ANCHA_STATE_DIR"], "child.pid"), "w").write(str(child.pid))
        time.sleep(300)
    """)
    # 10 simulated minutes = 5 real seconds: time for the agent to start its child and say
    # so even on a loaded machine, where 1 second was not always enough
    project(tmp_path, agent, trials=1, limit="10m", speed=120)
    started = time.monotonic()
    ran = ancha("run", "--no-progress", cwd=tmp_path)
    assert time.monotonic() - started < 60
    assert ran.returncode == 1
    folder = latest(tmp_path) / "hello" / "1"
    checks = json.loads((folder / "checks.json").read_text())
    assert checks["status"] == "timed_out" and checks["verdict"] == "failed"
    pid = int((folder / "state" / "child.pid").read_text())
    assert gone_within(pid, 10)


def gone_within(pid: int, seconds: float) -> bool:
    """Whether ``pid`` has stopped running by the deadline (a kill is not instant)."""
    deadline = time.monotonic() + seconds
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_run__done_url_ends_the_trial(tmp_path: Path) -> None:
    agent = POSTING_AGENT + textwrap.dedent("""
        import time
        req = urllib.request.Request(os.environ["ANCHA_DONE_URL"], data=b"{}", method="POST",
            headers={"Authorization": "Bearer " + os.environ["ANCHA_TRIAL_TOKEN"]})
        urllib.request.urlopen(req)
        time.sleep(300)
    """)
    project(tmp_path, agent, trials=1)
    started = time.monotonic()
    ran = ancha("run", "--no-progress", cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert time.monotonic() - started < 60
    checks = json.loads((latest(tmp_path) / "hello" / "1" / "checks.json").read_text())
    assert checks["status"] == "done"


def test_run__agent_environment_has_base_set_pass_env_and_templates(tmp_path: Path) -> None:
    agent = "import json, os\njson.dump(dict(os.environ), open(os.path.join(os.environ['ANCHA_STATE_DIR'], 'env.json'), 'w'))\n"
    project(tmp_path, agent, trials=1)
    (tmp_path / "ancha.yaml").write_text(textwrap.dedent(f"""
        agent:
          command: {sys.executable} agent.py
          pass_env: [PASSED_ONE]
          env:
            BOT_SLACK_BASE: "{{{{slack.url}}}}"
            BOT_TASK: "trial {{{{trial}}}} of {{{{env.id}}}}"
            ANCHA_TRIAL: overridden
        trials: 1
    """))
    ran = ancha("run", "--no-progress", "--pass-env", "PASSED_TWO", cwd=tmp_path,
                env={"PASSED_ONE": "1", "PASSED_TWO": "2", "SECRET_NOT_PASSED": "x", "LC_FOO": "lc"})
    assert ran.returncode == 1  # the agent posts nothing
    env = json.loads((latest(tmp_path) / "hello" / "1" / "state" / "env.json").read_text())
    assert env["PASSED_ONE"] == "1" and env["PASSED_TWO"] == "2" and env["LC_FOO"] == "lc"
    assert "SECRET_NOT_PASSED" not in env
    assert env["BOT_SLACK_BASE"] == env["ANCHA_SLACK_URL"] and env["ANCHA_SLACK_URL"].endswith("/slack")
    assert env["BOT_TASK"] == f"trial 1 of {env['ANCHA_ENV_ID']}"
    assert env["ANCHA_TRIAL"] == "overridden"  # agent.env wins
    for name in ("ANCHA_TASK", "ANCHA_CONTEXT_URL", "ANCHA_EVENTS_URL", "ANCHA_EVENTS_TOKEN", "ANCHA_DONE_URL",
                 "ANCHA_TRIAL_TOKEN", "ANCHA_STATE_DIR", "ANCHA_SLACK_TOKEN", "ANCHA_SLACK_SIGNING_SECRET",
                 "ANCHA_SLACK_APP_TOKEN"):
        assert env.get(name), name
    inherited = ancha("run", "--no-progress", "--inherit-env", cwd=tmp_path, env={"SECRET_NOT_PASSED": "x"})
    assert inherited.returncode == 1
    env = json.loads((latest(tmp_path) / "hello" / "1" / "state" / "env.json").read_text())
    assert env["SECRET_NOT_PASSED"] == "x"


def test_run__invalid_config_exits_2_and_runs_nothing(tmp_path: Path) -> None:
    (tmp_path / "ancha.yaml").write_text("trials: 0\nbogus: 1\n")
    ran = ancha("run", cwd=tmp_path)
    assert ran.returncode == 2
    assert ran.stderr.startswith("error[CONFIG_INVALID]")
    assert not (tmp_path / ".ancha").exists()


def test_run__an_endpoint_agent_that_never_gets_ready_is_invalid_not_refused(tmp_path: Path) -> None:
    project(tmp_path, "", trials=1)
    (tmp_path / "ancha.yaml").write_text(
        'agent:\n  url: "http://127.0.0.1:{{agent.port}}/events/{{service}}"\n'
        f'  start: {sys.executable} -c "import time; time.sleep(60)"\n'
        '  ready_url: "http://127.0.0.1:{{agent.port}}/ready"\n  startup_timeout: 1s\ntrials: 1\n')
    ran = ancha("run", "--no-progress", cwd=tmp_path)
    assert ran.returncode == 3, ran.stdout + ran.stderr
    assert "not supported yet" not in ran.stderr


def test_run__ctrl_c_kills_agents_and_keeps_results(tmp_path: Path) -> None:
    agent = "import os, time\nopen(os.path.join(os.environ['ANCHA_STATE_DIR'], 'pid'), 'w').write(str(os.getpid()))\ntime.sleep(300)\n"
    project(tmp_path, agent, trials=4, limit="1h")
    proc = subprocess.Popen([*ANCHA, "run", "--no-progress"], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and len(list((tmp_path / ".ancha").rglob("pid"))) < 2:
        time.sleep(0.1)
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, out + err
    assert "interrupted" in out
    summary = json.loads((latest(tmp_path) / "summary.json").read_text())
    assert summary["interrupted"] is True
    pids = [int(p.read_text()) for p in (tmp_path / ".ancha").rglob("pid")]
    assert len(pids) == 2  # parallel: 2, and nothing new started after the interrupt
    assert not any(alive(pid) for pid in pids)


def test_run__template_for_a_tool_the_scene_lacks_is_a_config_error(tmp_path: Path) -> None:
    project(tmp_path, POSTING_AGENT, trials=1)
    (tmp_path / "ancha.yaml").write_text(
        f'agent:\n  command: {sys.executable} agent.py\n  env:\n    GH_TOKEN: "{{{{github.token}}}}"\ntrials: 1\n')
    ran = ancha("run", cwd=tmp_path)
    assert ran.returncode == 2
    assert ran.stderr.splitlines()[0] == (
        "error[CONFIG_INVALID]: agent.env.GH_TOKEN: {{github.token}} needs a github world, "
        "which scene hello does not have")
    assert f"fix the config file: {tmp_path / 'ancha.yaml'}" in ran.stderr
    assert not (tmp_path / ".ancha").exists()


def test_run__no_agent_is_a_config_error(tmp_path: Path) -> None:
    project(tmp_path, "", trials=1)
    (tmp_path / "ancha.yaml").write_text("trials: 1\n")
    ran = ancha("run", cwd=tmp_path)
    assert ran.returncode == 2
    assert ran.stderr.startswith("error[CONFIG_INVALID]: agent: no agent to run")
    assert "--agent" in ran.stderr


CHECKING_AGENT = POSTING_AGENT + textwrap.dedent("""
    import subprocess, sys
    out = subprocess.run([sys.executable, "-m", "ancha.cli", "check", "--env", os.environ["ANCHA_ENV_ID"], "--json"],
                         capture_output=True, text=True)
    open(os.path.join(os.environ["ANCHA_STATE_DIR"], "check.json"), "w").write(out.stdout + out.stderr)
""")


def test_run__the_agent_can_run_ancha_check_on_its_own_world(tmp_path: Path) -> None:
    folder = project(tmp_path, CHECKING_AGENT, trials=1, extra="  env: { SERVER: '{{server.url}}' }\n")
    done = ancha("run", cwd=folder)
    assert done.returncode == 0, done.stdout + done.stderr
    checked = (folder / ".ancha" / "runs" / "latest" / "hello" / "1" / "state" / "check.json").read_text()
    assert [(r["id"], r["passed"]) for r in json.loads(checked)] == [("posted", True)], checked
