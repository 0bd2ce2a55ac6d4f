"""agent.hostnames: real, end to end: clients nobody here wrote, unchanged and with no base URL,
each do a real task in one trial of a scene with all five tools, as a host agent and as a
container agent (Docker and podman): slack_sdk, a Bolt app in Socket Mode, PyGithub, githubkit,
git clone and push, datadog-api-client, pagerduty, the okta SDK, curl, @octokit/rest and
GitHub's MCP server from npm driven over stdio. Every check of the scene belongs to one client
(``client_programs``); each must pass, and the trace must name the vendors' hostnames."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "runner"))
sys.path.insert(0, str(Path(__file__).parent))
from client_programs import CLIENTS, PROGRAMS, SCENE, node_variables  # noqa: E402
from container_image import ENGINES, client_image, usable_engine  # noqa: E402
from node_clients import node_packages  # noqa: E402

ANCHA = [sys.executable, "-m", "ancha.cli"]
ORDER = ["slack_web.py", "github_pygithub.py", "github_githubkit.py", "github_git.py", "curl_github.sh",
         "octokit.mjs", "mcp_github.py", "datadog_client.py", "pagerduty_client.py", "okta_client.py",
         "slack_bolt_socket.py"]
"""The Bolt app last: it waits for the message a person posts at 10m of the world's clock."""
VENDOR_HOSTS = {"slack.com", "api.github.com", "github.com", "api.datadoghq.com",
                "api.pagerduty.com", "events.pagerduty.com", "acme.okta.com"}
"""Hostnames the clients must be seen calling in the trace (the Events API's among them; Socket
Mode's WebSocket on wss-primary.slack.com is no call, but its ``apps.connections.open`` is)."""


def _driver(python: str) -> str:
    """One shell line that runs every client in ``ORDER``, on after a failure, failing at the end if any did."""
    steps = []
    for name in ORDER:
        argv = PROGRAMS[name].argv(python=python, node="node")
        argv[-1] = f"clients/{name}"
        steps.append(f"{shlex.join(argv)} || failed=\"$failed {name}\"")
    return "failed=''; " + "; ".join(steps) + '; [ -z "$failed" ] || { echo "clients failed:$failed"; exit 1; }'


def _project(tmp_path: Path, agent: str) -> Path:
    shutil.copytree(CLIENTS, tmp_path / "clients")
    (tmp_path / "scenes" / "real").mkdir(parents=True)
    shutil.copy(SCENE, tmp_path / "scenes" / "real" / "scene.yaml")
    (tmp_path / "ancha.yaml").write_text(agent + "scenes: [scenes/*/scene.yaml]\ntrials: 1\n")
    return tmp_path


def _run(root: Path, env: dict[str, str]) -> tuple[subprocess.CompletedProcess[str], dict[str, Any], str, list[Any]]:
    result = subprocess.run([*ANCHA, "run"], cwd=root, capture_output=True, text=True, timeout=600,
                            env={**os.environ, **env})
    trial = root / ".ancha" / "runs" / "latest" / "real-hostnames" / "1"
    checks = json.loads((trial / "checks.json").read_text())
    log = (trial / "agent.log").read_text()
    trace = [json.loads(line) for line in (trial / "trace.jsonl").read_text().splitlines()]
    return result, checks, log, trace


def _assert_every_client_worked(result: subprocess.CompletedProcess[str], checks: dict[str, Any], log: str,
                                trace: list[Any]) -> None:
    failed = {c["id"]: c for c in checks["results"] if not c["passed"]}
    assert not failed, f"{failed}\n--- agent.log ---\n{log}\n--- ancha ---\n{result.stdout}{result.stderr}"
    assert checks["verdict"] == "passed", checks
    assert result.returncode == 0, result.stdout + result.stderr
    hosts = {entry.get("host") for entry in trace if entry["actor"] == "agent"}
    assert hosts >= VENDOR_HOSTS, (hosts, log)
    assert all(entry.get("host") for entry in trace if entry["actor"] == "agent"), "a call came by a base URL"


def test_every_client_runs_unchanged_with_no_base_url_as_a_host_agent(tmp_path: Path) -> None:
    folder = node_packages()
    env = "".join(f"    {k}: {json.dumps(v)}\n" for k, v in node_variables(folder).items())
    root = _project(tmp_path, f"agent:\n  command: {json.dumps(_driver(sys.executable))}\n  hostnames: real\n"
                              f"  slack_transport: socket\n  env:\n{env}")
    _assert_every_client_worked(*_run(root, {}))


@pytest.fixture(scope="module", params=ENGINES)
def engine(request: pytest.FixtureRequest) -> str:
    return usable_engine(request.param)


def test_every_client_runs_unchanged_with_no_base_url_as_a_container_agent(tmp_path: Path, engine: str) -> None:
    """The container reaches nothing but Ancha: its clients get the vendors' names by interception on :443."""
    image = client_image(engine, node_packages())
    root = _project(tmp_path, f"agent:\n  command: {json.dumps(_driver('python3'))}\n  hostnames: real\n"
                              f"  slack_transport: socket\n  execution:\n    mode: container\n    image: {image}\n"
                              "    memoryMb: 2048\n    pids: 512\n")
    _assert_every_client_worked(*_run(root, {"ANCHA_CONTAINER_ENGINE": engine}))
