"""A console task's worlds, on the workspace's Ancha server (``ancha serve``).

Opening a task builds a live world of its scene with the task's text and checks in place of
the scene's own (``POST /envs``, as the control API documents it); the answer is the
world's context: the tools' URLs and tokens an agent or a person uses. Grading asks the
server to grade the task's checks on the world as it stands (``POST /envs/{id}/checks``,
with the task rules); the live view relays the server's ``/envs/{id}/live`` events, as
Ancha's own console follows a running trial.

The server's key (``PUT /api/workspace/ancha-server``) travels only to that server; the
browser never sees it. A workspace with no server, a server that cannot be reached and one
that refuses are each an error that says what to do, never a 500.
"""

from __future__ import annotations

import io
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
from ruamel.yaml import YAML

from agentos.errors import ApiError, Conflict, NotFound
from agentos.models import ConsoleTask, Workspace
from ancha.console.live_relay import relay

CONFIGURE = ("an admin of the workspace sets one with PUT /api/workspace/ancha-server "
             '{"url": "http://HOST:PORT", "key": "SERVER KEY"} (the URL and key `ancha serve` prints), '
             "or `agentos workspaces set WORKSPACE --ancha-server URL --ancha-server-key KEY`")
TIMEOUT = httpx.Timeout(30.0, connect=5.0)
"""The live stream sends a status every second: 30 s of silence means the server is gone."""
AGENT = {"input": "command"}
"""What ``ancha playground`` opens a world with: whoever acts in it is outside the server."""


class NoAnchaServer(Conflict):
    def __init__(self) -> None:
        super().__init__(f"This workspace has no Ancha server to open console tasks' worlds on: {CONFIGURE}")


class AnchaServerError(ApiError):
    """The workspace's Ancha server could not be reached, or refused a call (502)."""

    status_code = 502


class WorldGone(NotFound):
    def __init__(self, env_id: str, url: str) -> None:
        super().__init__(f"The world {env_id} is no longer on the Ancha server at {url} (torn down, or the server "
                         "restarted): open a fresh one (rerun)")


@dataclass(frozen=True)
class AnchaServer:
    url: str
    key: str | None

    @classmethod
    def of(cls, workspace: Workspace) -> AnchaServer:
        if not workspace.ancha_server_url:
            raise NoAnchaServer()
        return cls(workspace.ancha_server_url.rstrip("/"), workspace.ancha_server_key or None)

    @property
    def headers(self) -> dict[str, str]:
        return {"authorization": f"Bearer {self.key}"} if self.key else {}

    def _call(self, method: str, path: str, doing: str, env_id: str | None = None, **kw: Any) -> Any:
        try:
            with httpx.Client(timeout=TIMEOUT) as client:
                answer = client.request(method, self.url + path, headers=self.headers, **kw)
        except httpx.HTTPError as exc:
            raise AnchaServerError(
                f"The workspace's Ancha server at {self.url} could not be reached to {doing} "
                f"({type(exc).__name__}: {exc}): check that it runs (`ancha serve`) and that this AgentOS server "
                f"reaches that URL; {CONFIGURE}") from None
        if answer.status_code == 404 and env_id is not None:
            raise WorldGone(env_id, self.url)
        if answer.status_code == 401:
            raise AnchaServerError(f"The Ancha server at {self.url} refused the workspace's server key (401) "
                                   f"when asked to {doing}: {CONFIGURE}")
        if answer.status_code >= 400:
            raise AnchaServerError(f"The Ancha server at {self.url} could not {doing}: {_error_text(answer)}")
        try:
            return answer.json()
        except ValueError:
            raise AnchaServerError(f"The Ancha server at {self.url} answered {doing} with no JSON: is that URL an "
                                   f"Ancha server? {CONFIGURE}") from None

    def open_world(self, task: ConsoleTask) -> dict[str, Any]:
        """A new live world of the task: its context (with the world's ``seed``)."""
        body = {"scene": world_scene(task.scene_source, task.task, task.checks), "trial": 1, "agent": AGENT}
        context: dict[str, Any] = self._call("POST", "/envs", f"open a world of the scene {task.scene}", json=body)
        return context

    def context(self, env_id: str) -> dict[str, Any]:
        context: dict[str, Any] = self._call("GET", f"/envs/{env_id}/context", f"read the world {env_id}", env_id)
        return context

    def status(self, env_id: str) -> dict[str, Any]:
        status: dict[str, Any] = self._call("GET", f"/envs/{env_id}", f"read the world {env_id}", env_id)
        return status

    def grade(self, env_id: str, checks: list[Any]) -> list[dict[str, Any]]:
        """Each check's result on the world as it stands (the world goes on)."""
        answer = self._call("POST", f"/envs/{env_id}/checks", f"grade the world {env_id}", env_id, json=checks)
        return [r for r in answer.get("results") or [] if isinstance(r, dict)]

    def live(self, env_id: str, last_event_id: str | None = None) -> AsyncIterator[bytes]:
        """The world's events as Server-Sent Events, relayed; a ``gone`` event says why they stop."""
        headers = self.headers | ({"last-event-id": last_event_id} if last_event_id else {})
        return relay(f"{self.url}/envs/{env_id}/live", headers, f"the Ancha server at {self.url}")


def world_scene(source: str, task: str, checks: list[Any]) -> str:
    """The scene's text with the console task's text and checks in place of its own. Its
    ``pass`` goes too: it names the scene's checks, and a task requires all of its own."""
    yaml = YAML(typ="rt")
    tree = yaml.load(source)
    tree["task"] = task
    tree["checks"] = checks
    tree.pop("pass", None)
    out = io.StringIO()
    yaml.dump(tree, out)
    return out.getvalue()


def _error_text(answer: httpx.Response) -> str:
    try:
        body = answer.json()
    except ValueError:
        return f"{answer.status_code} {answer.text[:300]}"
    if isinstance(body, dict) and body.get("error"):
        hint = f" ({body['hint']})" if body.get("hint") else ""
        return f"{body['error']}{hint}"
    return f"{answer.status_code} {json.dumps(body)[:300]}"
