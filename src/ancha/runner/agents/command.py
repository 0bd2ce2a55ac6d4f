"""Command agents: one process tree per trial (see ``containment``), killed whole when the trial ends."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path
from typing import IO

from ancha.runner.agents.containment import GroupTree, contain

KILL_GRACE_S = 2.0
NOT_STARTED_CODES = {126: "the agent command could not be executed", 127: "the agent command was not found"}


class AgentNotStarted(RuntimeError):
    """The agent never ran: the trial is invalid, not failed."""


class CommandAgent:
    def __init__(self, command: str, cwd: Path, env: dict[str, str], log: IO[bytes],
                 tree: GroupTree | None = None) -> None:
        self.command = command
        self.cwd = cwd
        self.env = env
        self.log = log
        self.tree = tree
        self.process: asyncio.subprocess.Process | None = None

    async def start(self) -> None:
        if not self.cwd.is_dir():
            raise AgentNotStarted(f"agent.cwd {self.cwd} is not a directory")
        if self.tree is None:
            self.tree = contain()
        try:
            self.process = await asyncio.create_subprocess_shell(
                self.tree.command(self.command), cwd=self.cwd, env={**self.env, **self.tree.environment()},
                stdin=asyncio.subprocess.DEVNULL, stdout=self.log, stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as exc:
            await self.tree.kill()
            raise AgentNotStarted(f"the agent could not be started: {exc}") from exc
        self.tree.started(self.process.pid)

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
