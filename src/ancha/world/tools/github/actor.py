"""Calling GitHub's REST API as one of its users, from inside the world: a person's
answer (``reach``) or a world rule's action (``actions``), traced with their own actor
(``person:laura``, ``world``) and publishing the domain events the agent's calls would."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ancha.world.kernel.tool import ToolRequest

if TYPE_CHECKING:
    from ancha.world.kernel.port import WorldPort
    from ancha.world.tools.github.replica import GitHubReplica

TOOL = "github"


class GitHubActor:
    """Calls GitHub's REST API as a given login, one token per (login, trace actor), through
    ``WorldPort.dispatch`` so every call is traced and publishes its domain events."""

    def __init__(self, replica: GitHubReplica, world: WorldPort) -> None:
        self.replica = replica
        self.world = world
        self._tokens: dict[tuple[str, str], str] = {}

    def call(self, login: str, actor: str, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        """``method path`` with a JSON ``body`` as ``login``: the status and the decoded answer."""
        token = self._tokens.get((login, actor))
        if token is None:
            token = self._tokens[(login, actor)] = self.replica.issue_token(login, actor)
        headers = {"authorization": f"token {token}", "accept": "application/vnd.github+json"}
        raw = b""
        if body is not None:
            headers["content-type"] = "application/json; charset=utf-8"
            raw = json.dumps(body).encode()
        answer = self.world.dispatch(TOOL, ToolRequest(method.upper(), path, headers=headers, body=raw))
        try:
            decoded = json.loads(answer.body) if answer.body else None
        except ValueError:
            decoded = None
        return answer.status, decoded


def error_text(status: int, answer: Any) -> str:
    """GitHub's refusal in a few words: ``422 Validation Failed (...)``."""
    message = answer.get("message") if isinstance(answer, dict) else None
    detail = ""
    if isinstance(answer, dict) and isinstance(answer.get("errors"), list) and answer["errors"]:
        first = answer["errors"][0]
        detail = f" ({first.get('message') or first.get('code') or first})" if isinstance(first, dict) else \
            f" ({first})"
    return f"{status} {message or 'error'}{detail}"
