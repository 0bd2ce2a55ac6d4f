"""`ancha run` with `agent.execution.mode: container`: real containers, a real server, real agents.

Every test runs on Docker and on podman (``engine``). The image is built once per machine and
engine from this machine's own Python (``container_image``), never pulled. Off CI an engine
that is missing skips its tests; in CI (``CI=true``, where .ci/run installs and starts both)
it fails them.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from ancha.runner.agents.container_engine import find_engine
from ancha.runner.agents.container_images import build_image

sys.path.insert(0, str(Path(__file__).parent))
from container_image import ENGINES, agent_image, usable_engine  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ANCHA = [sys.executable, "-m", "ancha.cli"]
UNREACHABLE_ADDRESS = "192.0.2.1"
"""TEST-NET-1 (RFC 5737): documentation only, routed nowhere."""
UNRESOLVABLE_NAME = "ancha-isolation-probe.invalid"
""".invalid (RFC 6761) never resolves."""


def workspace_images(engine: str) -> set[str]:
    listed = subprocess.run([engine, "images", "--filter", "label=ancha.workspace-of", "--format", "{{.ID}}"],
                            capture_output=True, text=True)
    return set(listed.stdout.split())


@pytest.fixture(scope="module", params=ENGINES)
def engine(request: pytest.FixtureRequest) -> str:
    """Each engine in turn; in CI one that does not answer fails the tests instead of skipping them."""
    return usable_engine(request.param)


@pytest.fixture(scope="module")
def image(engine: str) -> Iterator[str]:
    """The test agent image in ``engine``; the workspace images the tests' projects made are removed after."""
    before = workspace_images(engine)
    yield agent_image(engine)
    made = workspace_images(engine) - before
    if made:
        subprocess.run([engine, "rmi", "--force", *made], capture_output=True)


def ancha(*args: str, cwd: Path, engine: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ANCHA, *args], cwd=cwd, capture_output=True, text=True, timeout=180,
                          env={**os.environ, "ANCHA_CONTAINER_ENGINE": engine, **(env or {})})


def project(tmp_path: Path, image: str, command: str, *, scenes: list[str], extra: str = "") -> Path:
    """A project as a user has one: the bundled example agents and scenes, plus files the
    agent must never see (a .env, a .git folder, ancha.yaml)."""
    shutil.copytree(EXAMPLES / "agents", tmp_path / "agents")
    for name in scenes:
        shutil.copytree(EXAMPLES / "scenes" / name, tmp_path / "scenes" / name)
    (tmp_path / ".env").write_text("API_KEY=from-dotenv\n")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("[core]\n")
    (tmp_path / "node_modules" / "left-pad").mkdir(parents=True)
    (tmp_path / "node_modules" / "left-pad" / "index.js").write_text("//\n")
    (tmp_path / "id_rsa").write_text("-----BEGIN KEY-----\n")
    (tmp_path / "ancha.yaml").write_text(
        f"agent:\n  command: {command}\n  execution:\n    mode: container\n    image: {image}\n{extra}"
        f"scenes: [scenes/**/scene.yaml]\ntrials: 1\nparallel: 2\n")
    return tmp_path


def test_container_agent_passes_every_bundled_scene(tmp_path: Path, engine: str, image: str) -> None:
    scenes = sorted(p.name for p in (EXAMPLES / "scenes").iterdir() if (p / "scene.yaml").is_file())
    assert len(scenes) >= 6
    root = project(tmp_path, image, "python3 agents/acme_bot.py", scenes=scenes)
    result = ancha("run", cwd=root, engine=engine)
    assert result.returncode == 0, result.stdout + result.stderr
    run = root / ".ancha" / "runs" / "latest"
    for scene in scenes:
        checks = json.loads((run / scene / "1" / "checks.json").read_text())
        assert checks["verdict"] == "passed", (scene, checks)
    assert "answered" in (run / "export-question" / "1" / "agent.log").read_text()
    summary = json.loads((run / "summary.json").read_text())
    assert summary["config"]["agent"]["execution"]["mode"] == "container"


PROBE = textwrap.dedent("""
    import hashlib, json, os, socket, sys, urllib.request

    def attempt(action):
        try:
            action()
            return "ok"
        except Exception as exc:
            return type(exc).__name__ + ": " + str(exc)

    def connect(host, port):
        socket.create_connection((host, port), timeout=5).close()

    def write_usr():
        open("/usr/ancha-probe", "w").write("x")

    def write_workspace():
        open("/workspace/new-file", "w").write("x")

    def limits():
        # memory (bytes), pids and cpu (quota, period) of this container's cgroup, v1 or v2
        def read(*paths):
            for path in paths:
                if os.path.exists(path):
                    return open(path).read().split()
            return None
        v1 = "/sys/fs/cgroup/cpu/cpu.cfs_quota_us"
        cpu = read("/sys/fs/cgroup/cpu.max") or (read(v1) and read(v1) + read("/sys/fs/cgroup/cpu/cpu.cfs_period_us"))
        return {"memory": read("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"),
                "pids": read("/sys/fs/cgroup/pids.max", "/sys/fs/cgroup/pids/pids.max"), "cpu": cpu}

    def slack():
        request = urllib.request.Request(os.environ["ANCHA_SLACK_URL"] + "/api/auth.test", data=b"",
                                         headers={"Authorization": "Bearer " + os.environ["ANCHA_SLACK_TOKEN"]})
        assert json.load(urllib.request.urlopen(request, timeout=10))["ok"]

    files = sorted(os.path.relpath(os.path.join(d, f), "/workspace")
                   for d, _, names in os.walk("/workspace") for f in names)
    report = {
        "uid": os.getuid(),
        "write_usr": attempt(write_usr),
        "write_workspace": attempt(write_workspace),
        "files": files,
        "node_modules": os.readlink("/workspace/node_modules"),
        "slack": attempt(slack),
        "other_port": attempt(lambda: connect("127.0.0.1", int(sys.argv[1]))),
        "by_name": attempt(lambda: connect(sys.argv[2], 443)),
        "by_address": attempt(lambda: connect(sys.argv[3], 443)),
        "interfaces": sorted(line.split(":")[0].strip() for line in open("/proc/net/dev").readlines()[2:]),
        "secret_sha256": hashlib.sha256(os.environ.get("PROBE_SECRET", "").encode()).hexdigest(),
        "slack_token": os.environ["ANCHA_SLACK_TOKEN"],
        "host_path": os.environ.get("VIRTUAL_ENV"),
        "state_dir": os.environ["ANCHA_STATE_DIR"],
        "status": {k: v.strip() for k, v in (line.split(":", 1) for line in open("/proc/self/status"))
                   if k in ("CapEff", "CapBnd", "NoNewPrivs")},
        "sockets": [p for p in ("/var/run/docker.sock", "/run/docker.sock", "/run/podman/podman.sock")
                    if os.path.exists(p)],
        "mounts": sorted(line.split()[4] for line in open("/proc/self/mountinfo")),
        "limits": limits(),
    }
    with open(os.path.join(os.environ["ANCHA_STATE_DIR"], "probe.json"), "w") as out:
        json.dump(report, out)
""")


@pytest.fixture
def host_listener() -> Iterator[int]:
    """A TCP server on the host's loopback that is not Ancha's: the agent must not reach it."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                server.accept()[0].close()
            except OSError:
                pass

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join()
    server.close()


def logging_engine(folder: Path, engine: str) -> Path:
    """``engine``'s CLI behind a script that logs each call's command line and environment."""
    real = shutil.which(engine)
    assert real is not None
    folder.mkdir()
    script = folder / engine
    script.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" >> "{folder}/argv.log"\nenv >> "{folder}/environ.log"\n'
                      f'exec {real} "$@"\n')
    script.chmod(0o755)
    return script


def test_container_agent_is_isolated_and_its_state_is_kept(tmp_path: Path, engine: str, image: str,
                                                            host_listener: int,
                                                            tmp_path_factory: pytest.TempPathFactory) -> None:
    secret = "s3cr3t-" + os.urandom(8).hex()
    logs = tmp_path_factory.mktemp("engine") / "cli"
    wrapper = logging_engine(logs, engine)
    (tmp_path / "probe.py").write_text(PROBE)
    root = project(tmp_path, image, f"python3 probe.py {host_listener} {UNRESOLVABLE_NAME} {UNREACHABLE_ADDRESS}",
                   scenes=["export-question"], extra="    env: [PROBE_SECRET]\n    cpus: 0.5\n    memoryMb: 256\n"
                   "    pids: 64\n")
    result = ancha("run", cwd=root, engine=str(wrapper), env={"PROBE_SECRET": secret})
    assert result.returncode == 1, result.stdout + result.stderr  # the probe answers nobody: its checks fail
    trial = root / ".ancha" / "runs" / "latest" / "export-question" / "1"
    report = json.loads((trial / "state" / "probe.json").read_text())  # /state copied out, as on the host

    assert report["uid"] != 0
    assert report["status"]["CapEff"] == "0000000000000000" and report["status"]["CapBnd"] == "0000000000000000"
    assert report["status"]["NoNewPrivs"] == "1"
    assert "Read-only file system" in report["write_usr"]
    assert "Read-only file system" in report["write_workspace"]
    assert report["files"] == ["agents/acme_bot.py", "agents/bolt_app.py", "agents/incident_responder.py",
                               "agents/offboarder.py", "agents/runbook_fixer.py", "agents/triage.py",
                               "node_modules", "probe.py"]  # the link, dangling in an image without Node deps
    assert report["node_modules"] == "/opt/ancha/node_modules"
    assert report["sockets"] == []
    assert not [m for m in report["mounts"] if m.startswith(("/work", "/root", "/home", str(tmp_path)))]
    assert report["limits"]["memory"] == [str(256 * 1024 * 1024)] and report["limits"]["pids"] == ["64"]
    quota, period = (int(v) for v in report["limits"]["cpu"])
    assert quota * 2 == period  # cpus: 0.5
    assert report["slack"] == "ok"
    assert report["interfaces"] == ["lo"]
    assert report["other_port"].startswith("ConnectionRefusedError")
    assert report["by_name"].startswith("gaierror")  # no DNS server answers inside
    assert report["by_address"].startswith("OSError: [Errno 101] Network is unreachable")
    assert report["secret_sha256"] == hashlib.sha256(secret.encode()).hexdigest()  # passed from the shell
    assert report["host_path"] is None and report["state_dir"] == "/state"

    token = report["slack_token"]
    engine_calls = [(logs / name).read_text() for name in ("argv.log", "environ.log")]
    assert "create" in engine_calls[0] and "--env-file" in engine_calls[0]
    assert token not in engine_calls[0] and token not in engine_calls[1]  # the engine got it in the env file
    assert secret not in engine_calls[0]  # (its environment is the shell's, which holds it already)
    assert not list(Path(tempfile.gettempdir()).glob("ancha-env-*"))  # the env file is gone
    saved = [p for p in (root / ".ancha").rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]
    assert saved == []  # neither summary.json, nor agent.log, nor checks.json


def test_missing_image_stops_the_run_with_exit_3(tmp_path: Path, engine: str, image: str) -> None:
    root = project(tmp_path, image, "python3 agents/acme_bot.py", scenes=["export-question"])
    (root / "ancha.yaml").write_text((root / "ancha.yaml").read_text().replace(image, "localhost/no-such:image"))
    result = ancha("run", cwd=root, engine=engine)
    assert result.returncode == 3
    assert result.stderr.startswith(f"error[CONTAINER_IMAGE]: the image localhost/no-such:image is not in the "
                                    f"local {engine}\nhint: build it (`{engine} build -t localhost/no-such:image .`)")
    assert "Traceback" not in result.stderr
    assert not (root / ".ancha" / "runs").exists()  # nothing ran, not even on the host
    pulled = subprocess.run([engine, "image", "inspect", "localhost/no-such:image"], capture_output=True)
    assert pulled.returncode != 0  # and nothing was pulled


def test_missing_engine_stops_the_run_with_exit_3(tmp_path: Path, engine: str, image: str) -> None:
    root = project(tmp_path, image, "python3 agents/acme_bot.py", scenes=["export-question"])
    result = ancha("run", cwd=root, engine="", env={"PATH": str(Path(sys.executable).parent)})
    assert result.returncode == 3
    first, hint = result.stderr.splitlines()[:2]
    assert first.startswith("error[CONTAINER_ENGINE]: agent.execution mode container needs a container engine, "
                            "and none answers (docker: docker is not on PATH; podman: podman is not on PATH)")
    assert hint.startswith("hint: install Docker or Podman and put its CLI on PATH")
    assert not (root / ".ancha" / "runs").exists()


def test_slack_socket_mode_is_refused_in_a_container(tmp_path: Path, engine: str, image: str) -> None:
    root = project(tmp_path, image, "python3 agents/acme_bot.py", scenes=["export-question"])
    text = (root / "ancha.yaml").read_text().replace("  execution:", "  slack_transport: socket\n  execution:", 1)
    (root / "ancha.yaml").write_text(text)
    result = ancha("run", cwd=root, engine=engine)
    assert result.returncode == 2
    assert "agent.slack_transport: socket is not available to container agents" in result.stderr
    assert "or set agent.hostnames: real" in result.stderr
    assert "container runs do not support Slack Socket Mode" in result.stderr


def test_preparation_project_rebuilds_only_when_the_build_inputs_change(tmp_path: Path, engine: str,
                                                                        image: str) -> None:
    environ = {**os.environ, "ANCHA_CONTAINER_ENGINE": engine}
    found = find_engine(environ)
    tag = f"localhost/ancha-test-prepared:{os.urandom(4).hex()}"
    (tmp_path / "Containerfile").write_text(f"FROM {image}\nCOPY agent.py /opt/agent.py\n")
    (tmp_path / "agent.py").write_text("print('one')\n")

    def image_id() -> str:
        return subprocess.run([engine, "image", "inspect", "--format", "{{.Id}}", tag], capture_output=True,
                              text=True, check=True).stdout.strip()

    first = ""
    try:
        assert build_image(found, tag, tmp_path, environ) is True
        first = image_id()
        assert build_image(found, tag, tmp_path, environ) is False  # same inputs: used as it is
        assert image_id() == first
        (tmp_path / "agent.py").write_text("print('two')\n")
        assert build_image(found, tag, tmp_path, environ) is True
        assert image_id() != first
    finally:
        subprocess.run([engine, "rmi", "--force", tag, *([first] if first else [])], capture_output=True)


def test_per_event_agent_in_containers_keeps_its_state_from_event_to_event(tmp_path: Path, engine: str,
                                                                           image: str) -> None:
    from test_run_per_event import AGENT, SCENE

    (tmp_path / "scenes" / "greeter").mkdir(parents=True)
    (tmp_path / "scenes" / "greeter" / "scene.yaml").write_text(SCENE)
    (tmp_path / "agent.py").write_text(AGENT)
    (tmp_path / "ancha.yaml").write_text(
        f"agent:\n  command: python3 agent.py\n  input: per_event\n  idle: 5m\n"
        f"  execution: {{ mode: container, image: {image} }}\ntrials: 1\n")
    result = ancha("run", "--no-progress", cwd=tmp_path, engine=engine)
    assert result.returncode == 0, result.stdout + result.stderr
    trial = tmp_path / ".ancha" / "runs" / "latest" / "greeter" / "1"
    tasks = (trial / "state" / "tasks.txt").read_text().splitlines()
    assert len(tasks) == 2  # one container per event; the second found what the first wrote
    assert "Hello? anyone there?" in tasks[0] and "Second question, bot." in tasks[1]


MODEL_AGENT = textwrap.dedent("""
    import json, os, socket, sys, urllib.request
    body = json.dumps({"model": "openai/gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}).encode()
    request = urllib.request.Request(os.environ["OPENROUTER_BASE_URL"] + "/chat/completions", data=body,
                                     headers={"Content-Type": "application/json"})
    answer = json.load(urllib.request.urlopen(request, timeout=10))
    try:  # the provider itself (here a stand-in on the host) is only reachable through the gateway
        socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5).close()
        direct = "ok"
    except OSError as exc:
        direct = type(exc).__name__
    with open(os.path.join(os.environ["ANCHA_STATE_DIR"], "model.json"), "w") as out:
        json.dump({"answer": answer["choices"][0]["message"]["content"], "direct": direct}, out)
""")


def test_container_agent_reaches_its_model_host_only_through_the_gateway(tmp_path: Path, engine: str, image: str,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio
    from urllib.parse import urlsplit

    from model_standins import ModelStandIn
    from rich.console import Console

    from ancha.config.loading import ConfigOverrides, load_config
    from ancha.runner.run import run_scenes
    from ancha.scene.loading import load_scenes
    from ancha.world.registry import catalog, config_catalog

    monkeypatch.setenv("ANCHA_CONTAINER_ENGINE", engine)
    with ModelStandIn() as standin:
        port = urlsplit(standin.url).port
        (tmp_path / "agent.py").write_text(MODEL_AGENT)
        shutil.copytree(EXAMPLES / "scenes" / "export-question", tmp_path / "scenes" / "export-question")
        (tmp_path / "ancha.yaml").write_text(
            f"agent:\n  command: python3 agent.py {port}\n  execution:\n    mode: container\n    image: {image}\n"
            "    modelHosts: [openrouter.ai]\ntrials: 1\n")
        config = load_config(tmp_path / "ancha.yaml", tmp_path, ConfigOverrides(), catalog=config_catalog())
        scenes = load_scenes(list(config.scenes), config.root, catalog())
        result = asyncio.run(run_scenes(config, scenes, console=Console(quiet=True), progress=False,
                                        model_upstreams={"openrouter.ai": standin.url}))
    trial = result.run_dir / "export-question" / "1"
    report = json.loads((trial / "state" / "model.json").read_text())
    assert report["answer"] and report["direct"] == "ConnectionRefusedError"
    calls = [json.loads(line) for line in (trial / "models.jsonl").read_text().splitlines()]
    assert len(calls) == 1 and calls[0]["model"] == "openai/gpt-4o-mini"
