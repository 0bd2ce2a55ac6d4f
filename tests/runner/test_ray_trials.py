"""`ancha run --ray`: trials as tasks on a real local 2-node Ray cluster (a head and one worker
node, one CPU each), through the real CLI, compared with the same run on this machine."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ray = pytest.importorskip("ray", reason="the dev extra installs ray (pip install -e '.[dev]')")
from ray.cluster_utils import Cluster  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
ANCHA = [sys.executable, "-m", "ancha.cli"]
NODE = {"num_cpus": 1, "object_store_memory": 80 * 1024 * 1024}

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
  - id: hello_in_general
    state:
      slack.message: { channel: $slack_general, from: $slack_bot, text_contains: hello }
"""

POST_HELLO = """
import json, os, urllib.request
def call(method, body):
    req = urllib.request.Request(os.environ["ANCHA_SLACK_URL"] + "/api/" + method, data=json.dumps(body).encode(),
        headers={"Authorization": "Bearer " + os.environ["ANCHA_SLACK_TOKEN"], "Content-Type": "application/json"})
    return json.load(urllib.request.urlopen(req))
channel = call("conversations.list", {})["channels"][0]["id"]
call("chat.postMessage", {"channel": channel, "text": "hello"})
"""

NOTHING_PRIVATE_SHIPPED = """
import os
import re
import socket
if os.environ.get("ON_RAY"):  # (passed from the driver's shell) the worker's copy of the project: no dotfiles, keys, dependencies or ancha.yaml
    assert not any(os.path.exists(p) for p in (".env", "ancha.yaml", "id_rsa", "node_modules"))
    assert os.path.exists("scenes/hello/scene.yaml")
"""

KILL_MY_WORKER = """
import os, signal, sys
marker = os.path.join(os.environ["ATTEMPTS"], os.environ["ANCHA_TRIAL"])
if os.environ["ANCHA_TRIAL"] == "1" or not os.path.exists(marker):  # trial 1: always; the others: once
    open(marker, "w").close()
    pid = os.getppid()
    while pid > 1:  # the Ray worker process hosting this trial: its title starts with "ray::"
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            if f.read().startswith(b"ray::"):
                os.kill(pid, signal.SIGKILL)
                break
        with open(f"/proc/{pid}/stat") as f:
            pid = int(f.read().rsplit(")", 1)[1].split()[1])
    sys.exit(9)
""" + POST_HELLO


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """A head node and one worker node, as small as a loaded 2-core machine allows; its address."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    nodes = Cluster(initialize_head=True, head_node_args={**NODE, "include_dashboard": False})
    try:
        nodes.add_node(**NODE)
        nodes.wait_for_nodes()
        yield nodes.address
    finally:
        nodes.shutdown()
        _forget_cluster(nodes.address)


def _forget_cluster(address: str) -> None:
    """Ray leaves the address of the last cluster started here in a file, where a later bare
    ``ray.init()`` would try to join it; this one is gone."""
    current = Path("/tmp/ray/ray_current_cluster")
    try:
        if current.read_text().strip() == address:
            current.unlink()
    except OSError:
        pass


def ancha(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ANCHA, *args], cwd=cwd, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": "", **(env or {})})


def hello_project(tmp_path: Path, agent: str, trials: int, extra: str = "") -> Path:
    (tmp_path / "scenes" / "hello").mkdir(parents=True)
    (tmp_path / "scenes" / "hello" / "scene.yaml").write_text(SCENE)
    (tmp_path / "agent.py").write_text(textwrap.dedent(agent))
    (tmp_path / ".env").write_text("SECRET=never-shipped\n")
    (tmp_path / "ancha.yaml").write_text(f"agent:\n  command: {sys.executable} agent.py\n{extra}trials: {trials}\n")
    return tmp_path


def latest(project: Path) -> Path:
    return (project / ".ancha" / "runs" / "latest").resolve()


def files(run: Path) -> list[str]:
    return sorted(str(p.relative_to(run)) for p in run.rglob("*"))


def graded(run: Path) -> dict[str, Any]:
    """Per trial, what a verdict rests on: verdict, status, reason, and each check's id, status
    and whether it is required (the `actual` texts name simulated times, which differ)."""
    out = {}
    for path in sorted(run.glob("*/*/checks.json")):
        data = json.loads(path.read_text())
        out[str(path.parent.relative_to(run))] = {
            **{k: data[k] for k in ("scene", "trial", "verdict", "status", "reason")},
            "results": [{k: r.get(k) for k in ("id", "status", "required")} for r in data["results"]]}
    return out


def ours(stderr: str) -> list[str]:
    """Lines of stderr, less the warnings Ray's C++ core may print when a connection is slow
    (``[2026-01-01 09:00:00,000 W 123 123] rpc_client.h:153: ...``) on a loaded machine."""
    return [line for line in stderr.splitlines() if not re.match(r"\[\d{4}-\d\d-\d\d [\d:,]+ [WE] \d+ \d+\] ", line)]


def summary_without_timings(run: Path) -> dict[str, Any]:
    """summary.json less what differs between any two runs (id, start, durations, timings) and
    ``server`` (``embedded`` here, ``ray:ADDRESS`` there)."""
    data = json.loads((run / "summary.json").read_text())
    for key in ("run_id", "started_at", "duration_s", "server"):
        data.pop(key)
    for scene in data["scenes"]:
        scene.pop("path")
        for result in scene["trial_results"]:
            result.pop("timings")
    return data


def test_run_on_ray__gives_the_results_folder_of_a_local_run(tmp_path: Path, cluster: str) -> None:
    project = hello_project(tmp_path, POST_HELLO, trials=1, extra="  pass_env: [ON_RAY]\n")
    (project / "agents").mkdir()
    (project / "agents" / "acme_bot.py").write_bytes((ROOT / "examples" / "agents" / "acme_bot.py").read_bytes())
    (project / "scenes" / "export-question").mkdir()
    (project / "scenes" / "export-question" / "scene.yaml").write_bytes(
        (ROOT / "examples" / "scenes" / "export-question" / "scene.yaml").read_bytes())

    # each scene its agent: the bundled example's for export-question, the posting one for hello
    (project / "agent.py").write_text(textwrap.dedent("""
        import os, runpy, sys
        script = "agents/acme_bot.py" if "CSV" in os.environ["ANCHA_TASK"] else "hello.py"
        sys.argv = [script]
        runpy.run_path(script, run_name="__main__")
    """))
    (project / "hello.py").write_text(NOTHING_PRIVATE_SHIPPED + POST_HELLO)
    (project / "id_rsa").write_text("not a key\n")
    (project / "node_modules" / "left-pad").mkdir(parents=True)
    (project / "node_modules" / "left-pad" / "index.js").write_text("module.exports = 1\n")

    local = ancha("run", "--no-progress", "--seed", "5", cwd=project)  # one seed: the same worlds
    assert local.returncode == 0, local.stdout + local.stderr
    local_run = latest(project)
    on_ray = ancha("run", "--no-progress", "--seed", "5", "--ray", cluster, cwd=project, env={"ON_RAY": "1"})
    assert on_ray.returncode == 0, on_ray.stdout + on_ray.stderr
    ray_run = latest(project)

    assert ray_run != local_run
    assert files(ray_run) == files(local_run)
    assert graded(ray_run) == graded(local_run)
    assert {t["verdict"] for t in graded(ray_run).values()} == {"passed"}
    assert summary_without_timings(ray_run) == summary_without_timings(local_run)
    assert json.loads((ray_run / "summary.json").read_text())["server"] == f"ray:{cluster}"
    for trial in ("hello/1", "export-question/1"):
        for name in ("agent.log", "checks.json", "trace.jsonl", "records.jsonl", "world.json"):
            assert (ray_run / trial / name).is_file()
    assert ours(on_ray.stderr) == []  # quiet: Ray's own logs stay on the cluster
    assert "export-question" in on_ray.stdout and "results:" in on_ray.stdout


def test_run_on_ray__a_killed_worker_makes_its_trial_invalid_and_retry_invalid_runs_it_once_more(
        tmp_path: Path, cluster: str) -> None:
    attempts = tmp_path / "attempts"
    attempts.mkdir()
    project = hello_project(tmp_path, KILL_MY_WORKER, trials=2, extra=f"  env: {{ATTEMPTS: {attempts}}}\n")
    result = ancha("run", "--no-progress", "--ray", cluster, "--retry-invalid", cwd=project)
    assert result.returncode == 0, result.stdout + result.stderr  # invalid trials are left out of the pass rate
    assert "worker died" not in result.stdout + result.stderr  # said in the trial's folder, not over the summary
    run = latest(project)
    killed_twice = json.loads((run / "hello" / "1" / "checks.json").read_text())
    assert killed_twice["verdict"] == "invalid"
    assert killed_twice["reason"].startswith("the Ray worker running the trial died: ")
    assert killed_twice["reason"] in (run / "hello" / "1" / "agent.log").read_text()
    assert json.loads((run / "hello" / "2" / "checks.json").read_text())["verdict"] == "passed"
    assert "worker running the trial died" not in (run / "hello" / "2" / "agent.log").read_text()
    scene = json.loads((run / "summary.json").read_text())["scenes"][0]
    first, second = scene["trial_results"]
    assert first["verdict"] == "invalid" and first["retried"].startswith("the Ray worker running the trial died: ")
    assert second["verdict"] == "passed" and second["retried"].startswith("the Ray worker running the trial died: ")
    assert (scene["passed"], scene["invalid"], scene["pass_rate"]) == (1, 1, 1.0)


def test_run_ray__without_ray_installed__exits_3_with_the_install_hint(tmp_path: Path) -> None:
    project = hello_project(tmp_path, POST_HELLO, trials=1)
    blocker = tmp_path / "no-ray" / "ray"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('No module named ray')\n")
    result = ancha("run", "--no-progress", "--ray", cwd=project, env={"PYTHONPATH": str(blocker.parent)})
    assert result.returncode == 3, result.stdout + result.stderr
    assert "error[RAY_MISSING]" in result.stderr
    assert "hint: pip install 'ancha[ray]'" in result.stderr
    assert "Traceback" not in result.stderr


def test_run_ray__an_address_that_is_not_one_is_a_config_error(tmp_path: Path) -> None:
    project = hello_project(tmp_path, POST_HELLO, trials=1, extra="")
    with (project / "ancha.yaml").open("a") as config:
        config.write("ray: {address: 'not an address', cpus_per_trial: 0}\n")
    result = ancha("run", "--no-progress", cwd=project)
    assert result.returncode == 2
    assert "ray.address: expected auto, local, HOST:PORT or ray://HOST:PORT, got 'not an address'" in result.stderr
    assert "ray.cpus_per_trial: expected a number from 0.01 to 64, got 0" in result.stderr
    cli = ancha("run", "--no-progress", "--ray", "nowhere", cwd=project)
    assert cli.returncode == 2 and "--ray: expected auto, local, HOST:PORT or ray://HOST:PORT" in cli.stderr


def test_run_ray__a_cluster_that_does_not_answer_stops_the_run_before_its_folder_is_made(tmp_path: Path) -> None:
    project = hello_project(tmp_path, POST_HELLO, trials=1)
    with socket.socket() as sock:  # a port nothing listens on once this closes
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    result = ancha("run", "--no-progress", "--ray", f"127.0.0.1:{port}", cwd=project)
    assert result.returncode == 3, result.stdout + result.stderr
    assert result.stderr.startswith(f"error[RAY_UNREACHABLE]: no Ray cluster answers at 127.0.0.1:{port}")
    assert "hint: " in result.stderr and "Traceback" not in result.stderr
    assert not (project / ".ancha").exists()
