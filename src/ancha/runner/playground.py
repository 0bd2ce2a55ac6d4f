"""A playground: one live world of a scene, for a person or an agent to act in, graded
later with a task file's checks (``ancha check --task``). It lives until interrupted."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ancha.config.model import AnchaConfig
from ancha.errors import RunFailed
from ancha.runner.agents.environment import ancha_variables, trust_variables
from ancha.runner.control import ServerError, connect
from ancha.scene.model import Scene


def context_lines(context: dict[str, Any], task: Path) -> list[str]:
    """The playground's context for a person to read: the environment, each tool's URL and
    credentials, the event feed, how to grade it; then the whole context as one JSON line."""
    lines = [f"playground: environment {context['env_id']} of scene {context['scene']}"]
    if context.get("task"):
        lines.append(f"task: {context['task']}")
    lines.append("tools:")
    for name, tool in context["tools"].items():
        lines.append(f"  {name}: {tool['url']}")
        lines.extend(f"    {field}: {value}" for field, value in tool.items() if field != "url")
    lines.append(f"events: {context['events']['url']}  (token {context['events']['token']})")
    lines.append(f"grade it: ancha check --env {context['env_id']} --server {context['server_url']} --task {task}")
    lines.append("context: " + json.dumps(context, separators=(",", ":")))
    lines.append("Ctrl-C tears the environment down.")
    return lines


def environment_lines(context: dict[str, Any], state_dir: Path) -> list[str]:
    """The variables a command agent of this world would get (``ANCHA_*``, and the CA bundle that
    makes the server's TLS listener trusted: ``SSL_CERT_FILE`` and friends), as ``export`` lines
    to paste into another shell, for an agent or SDK started by hand."""
    env = ancha_variables(context, str(state_dir))
    env.update(trust_variables(context, None, os.environ))
    env.setdefault("PYTHONUNBUFFERED", "1")
    return [f"export {name}={shlex.quote(value)}" for name, value in env.items()]


async def _interrupted() -> None:
    """Return on SIGINT (Ctrl-C) or SIGTERM, even when the shell started this process with
    SIGINT ignored (a background job)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)


async def open_playground(config: AnchaConfig, scene: Scene, show: Callable[[dict[str, Any]], None]) -> None:
    """Build a world of ``scene`` on ``server.url`` (or an embedded server), hand its context
    to ``show``, and keep it until Ctrl-C (or SIGTERM); then tear it down."""
    server, control = await connect(config)
    env_id: str | None = None
    try:
        try:
            context = await control.create_env(scene, 1, {"input": "command"})
        except ServerError as exc:
            raise RunFailed(f"error[PLAYGROUND_FAILED]: {exc}") from exc
        env_id = str(context["env_id"])
        show(context)
        await _interrupted()
    finally:
        if env_id is not None:
            await control.delete(env_id)
        await control.close()
        if server is not None:
            server.stop()
