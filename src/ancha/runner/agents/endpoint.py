"""Endpoint agents: an HTTP server that receives the trial's events at ``agent.url``.

With ``agent.start``, Ancha starts the server once per trial as it starts a command agent
(the same environment plus ``ANCHA_AGENT_PORT``, the same contained process tree, the same
``agent.log``), polls ``agent.ready_url`` with GET (reading at most 64 KiB of any answer) until it answers 2xx with
``x-ancha-env-id`` equal to the trial's ``ANCHA_ENV_ID`` (so that a server left over from
another trial, or another program on the port, is never taken for this trial's), and
stops it when the trial ends. Without ``start``, the server is the user's own: Ancha POSTs
the trial's environment, session and task to ``agent.setup_url`` (when set). Either way
the world then makes each tool's handshake and delivers every event to ``agent.url``
(``world/endpoint.py``); all of this must happen within ``agent.startup_timeout``.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx

from ancha.runner.agents.command import AgentNotStarted, CommandAgent, LogSink
from ancha.world.endpoint import read_answer

READY_POLL_S = 0.05
ENV_ID_HEADER = "x-ancha-env-id"


def free_port() -> int:
    """A loopback port nothing listens on now (the OS picks it), for one trial's server."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def setup_body(context: Mapping[str, Any], environment: Mapping[str, str]) -> dict[str, Any]:
    """What ``agent.setup_url`` gets: the variables a command agent would have (``environment``),
    the trial's session (ids, tokens and URLs) and its task."""
    return {
        "environment": {k: v for k, v in environment.items() if k.startswith("ANCHA_")},
        "session": {
            "env_id": context["env_id"], "trial": context["trial"], "scene": context.get("scene"),
            "trial_token": context["trial_token"], "done_url": context["done_url"],
            "context_url": context["context_url"], "events": context["events"], "tools": context["tools"],
        },
        "task": context["task"],
    }


class EndpointAgent:
    def __init__(self, *, start: str | None, ready_url: str | None, setup_url: str | None, cwd: Path,
                 env: dict[str, str], log: LogSink, env_id: str, startup_timeout: float) -> None:
        self.start_command = start
        self.ready_url = ready_url
        self.setup_url = setup_url
        self.cwd = cwd
        self.env = env
        self.log = log
        self.env_id = env_id
        self.startup_timeout = startup_timeout
        self.process: CommandAgent | None = None
        self._exited: asyncio.Future[int] | None = None

    async def start(self, context: Mapping[str, Any]) -> None:
        """Start the server (if Ancha runs it), wait until it is ready, hand it its setup;
        ``AgentNotStarted`` says what went wrong. The caller gives the rest of
        ``startup_timeout`` to the world's handshakes."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.startup_timeout
        if self.start_command:
            self.process = CommandAgent(self.start_command, self.cwd, self.env, self.log)
            await self.process.start()
            self._exited = asyncio.ensure_future(self.process.wait())
        async with httpx.AsyncClient(timeout=5, trust_env=False) as http:
            if self.ready_url:
                await self._until_ready(http, deadline)
            if self.setup_url:
                await self._setup(http, context, deadline)

    async def _until_ready(self, http: httpx.AsyncClient, deadline: float) -> None:
        loop = asyncio.get_running_loop()
        assert self.ready_url is not None
        last = "no answer yet"
        while True:
            if self._exited is not None and self._exited.done():
                raise AgentNotStarted(f"the agent's server (agent.start) exited with code {self._exited.result()} "
                                      f"before {self.ready_url} was ready")
            try:
                answer = await read_answer(http, "GET", self.ready_url,
                                           timeout=max(0.1, min(5.0, deadline - loop.time())))
                if 200 <= answer.status < 300:
                    if self.start_command is None:
                        return
                    echoed = answer.headers.get(ENV_ID_HEADER)
                    if echoed == self.env_id:
                        return
                    said = "without the header" if echoed is None else f"with {ENV_ID_HEADER}: {echoed}"
                    raise AgentNotStarted(
                        f"agent.ready_url {self.ready_url} answered {answer.status} {said}, but this trial's "
                        f"server must answer with {ENV_ID_HEADER}: {self.env_id} (the value of ANCHA_ENV_ID); "
                        "is another program listening on $ANCHA_AGENT_PORT?")
                last = f"it answered {answer.status}"
            except httpx.HTTPError as exc:
                last = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            if loop.time() >= deadline:
                raise AgentNotStarted(f"the agent was not ready within agent.startup_timeout "
                                      f"({self.startup_timeout:g}s): GET {self.ready_url}: {last}")
            await asyncio.sleep(READY_POLL_S)

    async def _setup(self, http: httpx.AsyncClient, context: Mapping[str, Any], deadline: float) -> None:
        assert self.setup_url is not None
        loop = asyncio.get_running_loop()
        try:
            answer = await read_answer(http, "POST", self.setup_url, json=setup_body(context, self.env),
                                       timeout=max(0.1, deadline - loop.time()))
        except httpx.HTTPError as exc:
            raise AgentNotStarted(f"POST agent.setup_url {self.setup_url} failed: {type(exc).__name__}: {exc}") \
                from exc
        if not 200 <= answer.status < 300:
            raise AgentNotStarted(f"POST agent.setup_url {self.setup_url} answered {answer.status}: "
                                  f"{answer.text[:300]}")

    @property
    def exit_code(self) -> int | None:
        """The managed server's exit code once it has exited (None while it runs, or when it is not ours)."""
        if self._exited is not None and self._exited.done() and not self._exited.cancelled():
            return self._exited.result()
        return None

    async def stop(self) -> None:
        if self._exited is not None and not self._exited.done():
            self._exited.cancel()
        if self.process is not None:
            await self.process.stop()
