"""No agent process outlives its trial: not a child that moves to its own process group,
not a grandchild that double-forks and calls setsid."""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import secrets
import sys
import textwrap
import time
from pathlib import Path

import pytest
from test_run_cli import ancha, latest, project

from ancha.runner.agents.command import CommandAgent
from ancha.runner.agents.containment import ReaperTree, cgroup_tree

# Three escapes: a child in its own process group, a grandchild of a double fork in its own
# session, and a great-grandchild of that one. Each sleeps with the run's marker in its command line.
ESCAPING_AGENT = textwrap.dedent("""
    import os, subprocess, sys, time
    marker = os.environ["ESCAPE_MARKER"] + "-" + os.environ.get("ANCHA_TRIAL", "0")
    state = os.environ["ANCHA_STATE_DIR"]
    sleeper = [sys.executable, "-c", "import time; time.sleep(300)", marker]
    subprocess.Popen(sleeper, process_group=0)
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            subprocess.Popen(sleeper)
            os.execv(sys.executable, sleeper)
        os._exit(0)
    os.wait()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and len(survivors(marker)) < 3:
        time.sleep(0.02)
    open(os.path.join(state, "started"), "w").write(str(len(survivors(marker))))
    {tail}
""")



def survivors(marker: str) -> list[int]:
    """Live processes (not zombies) with an argument that starts with ``marker``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read()
            with open(f"/proc/{entry}/status") as f:
                status = f.read()
        except OSError:
            continue
        if any(arg.startswith(marker.encode()) for arg in cmdline.split(b"\0")) and "State:\tZ" not in status:
            found.append(int(entry))
    return found


def agent_source(tail: str) -> str:
    """The escaping agent, with the test's own survivor search."""
    search = inspect.getsource(survivors).replace(": str) -> list[int]:", "):")
    return "import os\n" + search + ESCAPING_AGENT.replace("{tail}", tail)


def wait_for_no_survivors(marker: str, deadline_s: float = 15) -> list[int]:
    deadline = time.monotonic() + deadline_s
    found = survivors(marker)
    while found and time.monotonic() < deadline:
        time.sleep(0.05)
        found = survivors(marker)
    return list(found)


pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="process containment is Linux's")


def test_run__no_agent_process_outlives_its_trial(tmp_path: Path) -> None:
    marker = f"ancha-escape-{secrets.token_hex(8)}"
    project(tmp_path, agent_source("pass"), trials=2)
    (tmp_path / "ancha.yaml").write_text(
        f"agent:\n  command: {sys.executable} agent.py\n  pass_env: [ESCAPE_MARKER]\ntrials: 2\nparallel: 2\n")
    try:
        ran = ancha("run", "--no-progress", cwd=tmp_path, env={"ESCAPE_MARKER": marker})
        assert ran.returncode == 1, ran.stdout + ran.stderr  # the agent posts nothing: failed, not crashed
        for trial in ("1", "2"):
            assert (latest(tmp_path) / "hello" / trial / "state" / "started").read_text() == "3"
        assert wait_for_no_survivors(marker) == []
    finally:
        for pid in survivors(marker):
            os.kill(pid, 9)


def test_run__agent_stopped_at_clock_limit_leaves_no_process(tmp_path: Path) -> None:
    marker = f"ancha-escape-{secrets.token_hex(8)}"
    project(tmp_path, agent_source("time.sleep(300)"), trials=1, limit="10m", speed=600)
    (tmp_path / "ancha.yaml").write_text(
        f"agent:\n  command: {sys.executable} agent.py\n  pass_env: [ESCAPE_MARKER]\ntrials: 1\n")
    try:
        ran = ancha("run", "--no-progress", cwd=tmp_path, env={"ESCAPE_MARKER": marker})
        assert ran.returncode == 1, ran.stdout + ran.stderr
        checks = json.loads((latest(tmp_path) / "hello" / "1" / "checks.json").read_text())
        assert checks["status"] == "timed_out"
        assert wait_for_no_survivors(marker) == []
    finally:
        for pid in survivors(marker):
            os.kill(pid, 9)


def test_subreaper_fallback__kills_what_escaped_the_process_group(tmp_path: Path) -> None:
    """Where no cgroup can be made, the runner adopts orphans and kills those of the trial."""
    marker = f"ancha-escape-{secrets.token_hex(8)}"
    (tmp_path / "agent.py").write_text(agent_source("pass"))
    env = {"PATH": os.environ["PATH"], "ESCAPE_MARKER": marker, "ANCHA_STATE_DIR": str(tmp_path)}

    async def run() -> int:
        with (tmp_path / "agent.log").open("wb") as log:
            agent = CommandAgent(f"{sys.executable} agent.py", tmp_path, env, log, tree=ReaperTree())
            await agent.start()
            code = await agent.wait()
            await agent.stop()
            return code

    try:
        assert asyncio.run(run()) == 0
        assert (tmp_path / "started").read_text() == "3"
        assert wait_for_no_survivors(marker) == []
    finally:
        for pid in survivors(marker):
            os.kill(pid, 9)


def test_cgroup_tree__is_made_here_or_said_why_not() -> None:
    """This machine either lets the runner make a cgroup (the CLI tests use it) or not (the
    fallback does); either way making one never raises."""
    tree = cgroup_tree()
    if tree is not None:
        assert tree.path.is_dir()
        asyncio.run(tree.kill())
        assert not tree.path.exists()
