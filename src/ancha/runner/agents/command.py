"""Command agents: one process tree per trial (see ``containment``), killed whole when the trial ends."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path
from typing import Protocol

from ancha.runner.agents import born_in_cgroup
from ancha.runner.agents.born_in_cgroup import BornProcess, NotSupported
from ancha.runner.agents.containment import CgroupTree, GroupTree, contain

KILL_GRACE_S = 2.0
DRAIN_DEADLINE_S = 10.0
"""How long the runner reads what the agent's killed tree left in its pipe."""
CHUNK = 64 * 1024
NOT_STARTED_CODES = {126: "the agent command could not be executed", 127: "the agent command was not found"}


class LogSink(Protocol):
    """Where the agent's output goes: ``agent.log`` (``results.agent_log.AgentLog``, capped) or a file."""

    def write(self, data: bytes, /) -> int: ...


class AgentNotStarted(RuntimeError):
    """The agent never ran: the trial is invalid, not failed."""


class CommandAgent:
    def __init__(self, command: str, cwd: Path, env: dict[str, str], log: LogSink,
                 tree: GroupTree | None = None) -> None:
        self.command = command
        self.cwd = cwd
        self.env = env
        self.log = log
        self.tree = tree
        self.process: asyncio.subprocess.Process | BornProcess | None = None
        self._copying: asyncio.Future[None] | None = None

    async def start(self) -> None:
        if not self.cwd.is_dir():
            raise AgentNotStarted(f"agent.cwd {self.cwd} is not a directory")
        if self.tree is None:
            self.tree = contain()
        # A pipe of our own, not asyncio's: on Python 3.11 a process's wait() also waits for its
        # pipes, which a grandchild can hold open for as long as it lives.
        read_end, write_end = os.pipe()
        try:
            self.process = self._born_in_cgroup(write_end)
            if self.process is None:
                self.process = await asyncio.create_subprocess_shell(
                    self.tree.command(self.command), cwd=self.cwd, env={**self.env, **self.tree.environment()},
                    stdin=asyncio.subprocess.DEVNULL, stdout=write_end, stderr=asyncio.subprocess.STDOUT,
                    start_new_session=True,
                )
        except OSError as exc:
            os.close(read_end)
            await self.tree.kill()
            raise AgentNotStarted(f"the agent could not be started: {exc}") from exc
        finally:
            os.close(write_end)
        self.tree.started(self.process.pid)
        reader = asyncio.StreamReader(limit=CHUNK)
        transport, _ = await asyncio.get_running_loop().connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(read_end, "rb", buffering=0))
        self._copying = asyncio.ensure_future(self._copy(reader, transport))

    def _born_in_cgroup(self, output: int) -> BornProcess | None:
        """The shell created inside the tree's cgroup (``born_in_cgroup``); None where it must
        move itself in instead (no cgroup tree, or a kernel that refuses)."""
        if not isinstance(self.tree, CgroupTree):
            return None
        stdin = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
        try:
            return born_in_cgroup.spawn(self.command, self.cwd, {**self.env, **self.tree.environment()},
                                        self.tree.path, stdin, output)
        except NotSupported:
            return None
        finally:
            os.close(stdin)

    async def _copy(self, output: asyncio.StreamReader, transport: asyncio.BaseTransport) -> None:
        """The agent's output, through a pipe, so that the log can cap it."""
        try:
            while chunk := await output.read(CHUNK):
                self.log.write(chunk)
        finally:
            transport.close()

    async def wait(self) -> int:
        assert self.process is not None
        return await self.process.wait()

    async def stop(self) -> None:
        """Stop the agent's whole process tree, politely first, so nothing outlives the trial."""
        if self.process is None or self.tree is None:
            return
        self.tree.signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(self.process.wait(), KILL_GRACE_S)
        except TimeoutError:
            pass
        # Children may survive their parent, in its group or out of it: the tree goes either way.
        await self.tree.kill()
        if self._copying is not None:  # the pipe ends with the last process that held it
            try:
                await asyncio.wait_for(self._copying, DRAIN_DEADLINE_S)
            except TimeoutError:  # wait_for has cancelled the copy, which closes the pipe
                pass
