"""Where the runner can make a cgroup per agent, the agent's shell is created inside it
(``clone3``), and runs exactly as a shell started by ``subprocess`` would: its session,
directory, variables, output, exit status and default signals; no file of the runner's."""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from pathlib import Path

import pytest

from ancha.runner.agents import born_in_cgroup
from ancha.runner.agents.born_in_cgroup import BornProcess
from ancha.runner.agents.command import CommandAgent
from ancha.runner.agents.containment import cgroup_tree

PATH = {"PATH": "/usr/local/bin:/usr/bin:/bin"}


def _cgroups_here() -> bool:
    tree = cgroup_tree()
    if tree is None:
        return False
    tree.path.rmdir()
    return True


pytestmark = pytest.mark.skipif(not _cgroups_here(), reason="this machine gives the runner no cgroup v2 of its own")


class Log:
    def __init__(self) -> None:
        self.data = b""

    def write(self, data: bytes, /) -> int:
        self.data += data
        return len(data)


def _run(command: str, cwd: Path, env: dict[str, str]) -> tuple[int, str, CommandAgent]:
    log = Log()

    async def go() -> tuple[int, CommandAgent]:
        agent = CommandAgent(command, cwd, env, log)
        await agent.start()
        try:
            return await agent.wait(), agent
        finally:
            await agent.stop()

    code, agent = asyncio.run(go())
    return code, log.data.decode(), agent


def test_command_agent__is_born_in_its_own_cgroup(tmp_path: Path) -> None:
    code, output, agent = _run("cat /proc/self/cgroup", tmp_path, PATH)
    assert code == 0 and isinstance(agent.process, BornProcess)
    assert agent.tree is not None
    assert any(line.startswith("0::") and line.endswith("/" + agent.tree.path.name) for line in output.splitlines())
    assert not agent.tree.path.exists()  # removed with the tree when the agent stopped


def test_command_agent__born_shell_gets_its_directory_variables_session_and_output(tmp_path: Path) -> None:
    code, output, _ = _run('pwd; echo "$GREETING"; ps -o sid= -p $$ | tr -d " "; echo $$; echo oops >&2',
                           tmp_path, {**PATH, "GREETING": "hello world"})
    cwd, greeting, session, pid, error = output.splitlines()
    assert code == 0 and cwd == str(tmp_path) and greeting == "hello world" and error == "oops"
    assert session == pid  # a session of its own, as start_new_session gives


def test_command_agent__born_shell_reports_exit_codes_signals_and_missing_programs(tmp_path: Path) -> None:
    assert _run("exit 3", tmp_path, PATH)[0] == 3
    assert _run("kill -KILL $$", tmp_path, PATH)[0] == -9
    code, output, _ = _run("no-such-program-anywhere", tmp_path, PATH)
    assert code == 127 and "not found" in output


def test_command_agent__born_shell_has_default_sigpipe_and_none_of_the_runners_files(tmp_path: Path) -> None:
    held = tmp_path / "held"
    with held.open("w"):
        code, output, _ = _run("yes | head -n 1; ls /proc/self/fd", tmp_path, PATH)
    lines = output.splitlines()
    assert code == 0 and lines[0] == "y" and "Broken pipe" not in output  # `yes` died of SIGPIPE, quietly
    assert sorted(int(fd) for fd in lines[1:]) == [0, 1, 2, 3]  # 3 is ls's own listing of the folder


def test_command_agent__moves_its_shell_in_where_the_kernel_refuses_clone3(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(born_in_cgroup, "_unsupported", "clone3 into a cgroup: Function not implemented")
    code, output, agent = _run("cat /proc/self/cgroup", tmp_path, PATH)
    assert code == 0 and not isinstance(agent.process, BornProcess)
    assert agent.tree is not None
    assert any(line.startswith("0::") and line.endswith("/" + agent.tree.path.name) for line in output.splitlines())


def test_command_agent__born_shells_start_while_other_threads_want_the_interpreter(tmp_path: Path) -> None:
    """The runner is multi-threaded (its server, waitpid threads): a shell must never be
    made by a copy of it that waits for a thread that was not copied."""
    stop = threading.Event()

    def busy() -> None:
        n = 0
        while not stop.is_set():
            n += 1

    spinners = [threading.Thread(target=busy) for _ in range(3)]
    for spinner in spinners:
        spinner.start()
    switching = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # the spinners ask for the interpreter all the time, during each spawn too
    try:
        async def many() -> list[int]:
            codes = []
            for i in range(40):
                agent = CommandAgent(f"exit {i % 7}", tmp_path, PATH, Log())
                await agent.start()
                codes.append(await asyncio.wait_for(agent.wait(), 30))  # a hung shell fails here
                await agent.stop()
            return codes

        assert asyncio.run(many()) == [i % 7 for i in range(40)]
    finally:
        sys.setswitchinterval(switching)
        stop.set()
        for spinner in spinners:
            spinner.join()


def test_command_agent__a_killed_spawner_is_started_again(tmp_path: Path) -> None:
    assert _run("true", tmp_path, PATH)[0] == 0
    spawner = born_in_cgroup._spawner
    assert spawner is not None and spawner.owner == os.getpid()
    spawner.process.kill()
    spawner.process.wait()
    code, output, agent = _run("cat /proc/self/cgroup", tmp_path, PATH)
    assert code == 0 and isinstance(agent.process, BornProcess) and born_in_cgroup._spawner is not spawner
    assert agent.tree is not None
    assert any(line.startswith("0::") and line.endswith("/" + agent.tree.path.name) for line in output.splitlines())
