"""Command agents: one process (group) per trial, killed whole when the trial ends."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path
from typing import IO

KILL_GRACE_S = 2.0
NOT_STARTED_CODES = {126: "the agent command could not be executed", 127: "the agent command was not found"}


class AgentNotStarted(RuntimeError):
    """The agent never ran: the trial is invalid, not failed."""


class CommandAgent:
    def __init__(self, command: str, cwd: Path, env: dict[str, str], log: IO[bytes]) -> None:
        self.command = command
        self.cwd = cwd
        self.env = env
        self.log = log
        self.process: asyncio.subprocess.Process | None = None

    async def start(self) -> None:
        if not self.cwd.is_dir():
            raise AgentNotStarted(f"agent.cwd {self.cwd} is not a directory")
        try:
            self.process = await asyncio.create_subprocess_shell(
                self.command, cwd=self.cwd, env=self.env, stdin=asyncio.subprocess.DEVNULL,
                stdout=self.log, stderr=asyncio.subprocess.STDOUT, start_new_session=True,
            )
        except OSError as exc:
            raise AgentNotStarted(f"the agent could not be started: {exc}") from exc

    async def wait(self) -> int:
        assert self.process is not None
        return await self.process.wait()

    def kill(self) -> None:
        """Kill the agent's whole process group, politely first, so nothing outlives the trial."""
        if self.process is None:
            return
        pgid = self.process.pid
        try:
            os.killpg(pgid, signal.SIGTERM)
        except ProcessLookupError:
            return

    async def stop(self) -> None:
        if self.process is None:
            return
        self.kill()
        try:
            await asyncio.wait_for(self.process.wait(), KILL_GRACE_S)
        except TimeoutError:
            pass
        # Children may survive their parent: the group goes whether or not the leader exited.
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
