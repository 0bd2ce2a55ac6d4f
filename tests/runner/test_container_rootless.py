"""Rootless podman: the agent's namespace made in podman's user namespace, and run's refusal
where rootless podman cannot hold a container to its limits.

These run podman as an ordinary user (``ROOTLESS_USER``, made by .ci/run, with subuid and
subgid ranges) from a test run as root. Off CI a machine without that user skips them; in CI
they fail.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from container_image import agent_image  # noqa: E402

ROOTLESS_USER = "ancha-rootless"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def rootless_problem() -> str | None:
    if shutil.which("podman") is None:
        return "podman is not installed (.ci/run installs it)"
    if os.geteuid() != 0:
        return "these tests switch to the rootless user, which needs root"
    try:
        pwd.getpwnam(ROOTLESS_USER)
    except KeyError:
        return f"no user {ROOTLESS_USER} (.ci/run makes it, with subuid and subgid ranges)"
    return None


@pytest.fixture(scope="module")
def user() -> pwd.struct_passwd:
    problem = rootless_problem()
    if problem is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI runs rootless podman's tests: {problem}")
        pytest.skip(problem)
    return pwd.getpwnam(ROOTLESS_USER)


def as_user(user: pwd.struct_passwd, *command: str, cwd: Path, env: dict[str, str] | None = None
            ) -> subprocess.CompletedProcess[str]:
    environment = {"HOME": user.pw_dir, "USER": user.pw_name, "PATH": os.environ["PATH"], "LANG": "C.UTF-8",
                   **(env or {})}
    return subprocess.run(["runuser", "-u", user.pw_name, "--", "env", "-i",
                           *(f"{k}={v}" for k, v in environment.items()), *command],
                          cwd=cwd, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def image(user: pwd.struct_passwd) -> str:
    return agent_image("podman", command=("runuser", "-u", user.pw_name, "--", "env", f"HOME={user.pw_dir}",
                                          "podman"))


@pytest.fixture
def folder(user: pwd.struct_passwd) -> Iterator[Path]:
    """A folder of the user's own (pytest's tmp_path is under a folder only root may enter)."""
    made = Path(tempfile.mkdtemp(prefix="ancha-rootless-"))
    os.chown(made, user.pw_uid, user.pw_gid)
    yield made
    shutil.rmtree(made, ignore_errors=True)


SCENARIO = textwrap.dedent("""
    import asyncio, json, subprocess, sys, threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from ancha.runner.agents.container_engine import find_engine
    from ancha.runner.agents.container_network import Enclosure, Endpoint, plan_endpoints

    class Hello(BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Length", "5")
            self.end_headers()
            self.wfile.write(b"hello")
        def log_message(self, *args):
            pass

    PROBE = '''
    import json, socket, sys, urllib.request
    def attempt(action):
        try:
            return action()
        except Exception as exc:
            return type(exc).__name__ + ": " + str(exc)
    allowed, other = int(sys.argv[1]), int(sys.argv[2])
    print(json.dumps({
        "allowed": attempt(lambda: urllib.request.urlopen("http://127.0.0.1:%d/" % allowed, timeout=10).read().decode()),
        "other": attempt(lambda: socket.create_connection(("127.0.0.1", other), timeout=5)),
        "by_address": attempt(lambda: socket.create_connection(("192.0.2.1", 443), timeout=5)),
        "by_name": attempt(lambda: socket.create_connection(("ancha-isolation-probe.invalid", 443), timeout=5)),
        "interfaces": sorted(l.split(":")[0].strip() for l in open("/proc/net/dev").readlines()[2:]),
    }))
    '''

    async def main():
        servers = [ThreadingHTTPServer(("127.0.0.1", 0), Hello) for _ in range(2)]
        for server in servers:
            threading.Thread(target=server.serve_forever, daemon=True).start()
        allowed, other = (s.server_address[1] for s in servers)
        engine = find_engine()
        enclosure = await Enclosure.open_rootless(plan_endpoints([Endpoint("127.0.0.1", allowed)]), engine,
                                                  dict(__import__("os").environ))
        try:
            run = await asyncio.to_thread(subprocess.run, engine.command(
                "run", "--rm", *engine.run_flags, "--pull=never", "--network", "ns:" + enclosure.path,
                "--cap-drop=ALL", "--user", "65534:65534", sys.argv[1], "python3", "-c", PROBE, str(allowed),
                str(other)), capture_output=True, text=True)
        finally:
            await enclosure.close()
        print(json.dumps({"probe": run.stdout, "stderr": run.stderr[-2000:], "helper": enclosure.helper is None}))

    asyncio.run(main())
""")


def test_rootless_podman__only_the_planned_endpoint_answers_in_the_helpers_namespace(
        folder: Path, user: pwd.struct_passwd, image: str) -> None:
    (folder / "scenario.py").write_text(SCENARIO)
    result = as_user(user, sys.executable, "scenario.py", image, cwd=folder,
                     env={"ANCHA_CONTAINER_ENGINE": "podman"})
    assert result.returncode == 0, result.stdout + result.stderr
    outcome = json.loads(result.stdout.splitlines()[-1])
    assert outcome["probe"], outcome["stderr"]
    probe = json.loads(outcome["probe"])
    assert probe["allowed"] == "hello"
    assert probe["other"].startswith("ConnectionRefusedError")
    assert probe["by_address"].startswith("OSError: [Errno 101] Network is unreachable")
    assert probe["by_name"].startswith("gaierror")
    assert probe["interfaces"] == ["lo"]
    assert outcome["helper"] is True  # closed: the helper is gone


def test_rootless_podman__runs_the_bundled_scene_or_refuses_where_it_cannot_hold_the_limits(
        folder: Path, user: pwd.struct_passwd, image: str) -> None:
    root = folder
    shutil.copytree(EXAMPLES / "agents", root / "agents")
    shutil.copytree(EXAMPLES / "scenes" / "export-question", root / "scenes" / "export-question")
    (root / "ancha.yaml").write_text(f"agent:\n  command: python3 agents/acme_bot.py\n  execution:\n"
                                     f"    mode: container\n    image: {image}\ntrials: 1\n")
    for path in [root, *root.rglob("*")]:
        os.chown(path, user.pw_uid, user.pw_gid)
    info = as_user(user, "podman", "info", "--format", "{{.Host.CgroupsVersion}} {{json .Host.CgroupControllers}}",
                   cwd=root)
    version, _, controllers = info.stdout.strip().partition(" ")
    limits_held = version == "v2" and all(f'"{c}"' in controllers for c in ("cpu", "memory", "pids"))
    result = as_user(user, sys.executable, "-m", "ancha.cli", "run", "--no-progress", cwd=root,
                     env={"ANCHA_CONTAINER_ENGINE": "podman"})
    if limits_held:
        assert result.returncode == 0, result.stdout + result.stderr
    else:  # cgroup v1, or controllers not delegated: podman would ignore cpus/memoryMb/pids
        assert result.returncode == 3, result.stdout + result.stderr
        assert result.stderr.startswith("error[CONTAINER_ENGINE]: rootless podman cannot hold a container to cpus, "
                                        "memoryMb and pids")
        assert "hint: use cgroup v2 with the cpu, memory and pids controllers delegated to your user" in result.stderr
        assert not (root / ".ancha" / "runs").exists()
