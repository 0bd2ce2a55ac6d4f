"""The runner's side of the control API: one code path for embedded and remote servers."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from ancha.config.model import AnchaConfig
from ancha.errors import RunFailed
from ancha.scene.model import Scene
from ancha.server.embedded import EmbeddedServer
from ancha.server.keys import new_key, server_key

TRACE_PAGE = 500
"""Trace entries fetched per ``GET /trace`` page."""


class ServerError(RuntimeError):
    pass


class ControlClient:
    """``share``: how to hand a scene to a server in this process (``EmbeddedServer.share``);
    a scene it takes is named by hash from the first trial on, never sent as JSON.
    ``transport``: how to reach it without a socket (``EmbeddedServer.transport``)."""

    def __init__(self, base_url: str, key: str | None = None,
                 share: Callable[[Scene], None] | None = None,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        headers = {"authorization": f"Bearer {key}"} if key else {}
        self.base_url = base_url.rstrip("/")
        self._http = httpx.AsyncClient(base_url=self.base_url, headers=headers, timeout=60, transport=transport)
        self._sent_scenes: set[str] = set()
        self._share = share

    async def close(self) -> None:
        await self._http.aclose()

    async def _call(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        try:
            return await self._http.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            raise ServerError(f"the Ancha server at {self.base_url} did not answer {method} {path}: {exc}") from exc

    async def create_env(self, scene: Scene, trial: int, agent: dict[str, Any], **world: Any) -> dict[str, Any]:
        """Build a trial's world. The scene is sent once per server (or handed over, in this
        process); later trials name its hash, and it is sent again if the server forgot it.
        ``world``: more of ``POST /envs``'s fields (``seed``, ``env_id``, ``replay``,
        ``from_checkpoint``), those that are not None."""
        extra = {name: value for name, value in world.items() if value is not None}
        if self._share is not None and scene.source_hash and scene.source_hash not in self._sent_scenes:
            self._share(scene)
            self._sent_scenes.add(scene.source_hash)
        if scene.source_hash in self._sent_scenes:
            answer = await self._call("POST", "/envs", json={"scene_hash": scene.source_hash, "trial": trial,
                                                             "agent": agent, **extra})
            if answer.status_code != 404:
                return self._created(answer)
        body = {"scene": scene.model_dump(mode="json", by_alias=True), "trial": trial, "agent": agent, **extra}
        answer = await self._call("POST", "/envs", json=body)
        result = self._created(answer)
        self._sent_scenes.add(scene.source_hash)
        return result

    @staticmethod
    def _created(answer: httpx.Response) -> dict[str, Any]:
        if answer.status_code != 201:
            raise ServerError(f"the world could not be built: {answer.status_code} {answer.text}")
        data: dict[str, Any] = answer.json()
        return data

    async def feed(self, url: str, token: str, cursor: str, wait: str = "30s") -> tuple[list[dict[str, Any]], str]:
        """One long poll of a trial's event feed: events after ``cursor`` and the next cursor."""
        answer = await self._call("GET", url, params={"after": cursor, "wait": wait},
                                  headers={"authorization": f"Bearer {token}"})
        if answer.status_code == 404:
            return [], cursor
        answer.raise_for_status()
        data = answer.json()
        return list(data["events"]), str(data["cursor"])

    async def status(self, env_id: str) -> dict[str, Any]:
        answer = await self._call("GET", f"/envs/{env_id}")
        answer.raise_for_status()
        data: dict[str, Any] = answer.json()
        return data

    async def checks(self, env_id: str) -> list[dict[str, Any]]:
        answer = await self._call("POST", f"/envs/{env_id}/checks")
        if answer.status_code != 200:
            raise ServerError(f"checks could not be evaluated: {answer.status_code} {answer.text}")
        results: list[dict[str, Any]] = answer.json()["results"]
        return results

    async def grade(self, env_id: str, teardown: bool = True, trace: bool = True, state: bool = True) -> dict[str, Any]:
        """Status, check results, trace, records and state of a finished trial, in one call.
        ``trace=False`` leaves the trace out: fetch it with ``save_trace`` (page by page);
        ``state=False`` the state: fetch it with ``save_state``."""
        params = {"teardown": "1" if teardown else "0", "trace": "1" if trace else "0", "state": "1" if state else "0"}
        answer = await self._call("POST", f"/envs/{env_id}/grade", params=params)
        if answer.status_code != 200:
            raise ServerError(f"the trial could not be graded: {answer.status_code} {answer.text}")
        data: dict[str, Any] = answer.json()
        return data

    async def save_trace(self, env_id: str, path: Path, page: int = TRACE_PAGE) -> None:
        """Write a trial's trace to ``path`` (``trace.jsonl``), a page at a time and streamed,
        so that a long trace or a huge body is never held whole. A server that does not
        page (no ``Ancha-Trace-Next``) gives it all in its first answer."""
        after = 0
        with path.open("wb") as out:
            while True:
                url = f"/envs/{env_id}/trace"
                try:
                    async with self._http.stream("GET", url, params={"after": after, "limit": page}) as answer:
                        if answer.status_code != 200:
                            await answer.aread()
                            raise ServerError(f"the trace could not be read: {answer.status_code} {answer.text}")
                        async for chunk in answer.aiter_bytes():
                            out.write(chunk)
                        following = answer.headers.get("ancha-trace-next")
                except httpx.HTTPError as exc:
                    raise ServerError(f"the Ancha server at {self.base_url} did not answer GET {url}: {exc}") from exc
                if following is None or int(following) <= after:
                    return
                after = int(following)

    async def save_state(self, env_id: str, path: Path) -> None:
        """Write a trial's final state to ``path`` (``world.json``) as the server streams it."""
        url = f"/envs/{env_id}/state"
        with path.open("wb") as out:
            try:
                async with self._http.stream("GET", url) as answer:
                    if answer.status_code != 200:
                        await answer.aread()
                        raise ServerError(f"the state could not be read: {answer.status_code} {answer.text}")
                    async for chunk in answer.aiter_bytes():
                        out.write(chunk)
            except httpx.HTTPError as exc:
                raise ServerError(f"the Ancha server at {self.base_url} did not answer GET {url}: {exc}") from exc

    async def save_calls(self, env_id: str, path: Path, page: int = TRACE_PAGE) -> None:
        """Write the agent's calls (``calls.jsonl``: what a replay makes again), a page at a time."""
        after = 0
        with path.open("wb") as out:
            while True:
                answer = await self._call("GET", f"/envs/{env_id}/calls", params={"after": after, "limit": page})
                if answer.status_code != 200:
                    raise ServerError(f"the calls could not be read: {answer.status_code} {answer.text}")
                out.write(answer.content)
                following = answer.headers.get("ancha-trace-next")
                if following is None or int(following) <= after:
                    return
                after = int(following)

    async def make_calls(self, env_id: str, calls: list[dict[str, Any]], end: dict[str, Any] | None = None,
                         until: str | None = None) -> dict[str, Any]:
        """Make recorded calls in a world built with ``replay``; ``until``: then let the world go on
        to that instant; ``end``: then end it as the original ended."""
        body: dict[str, Any] = {"calls": calls}
        if end is not None:
            body["end"] = end
        if until is not None:
            body["until"] = until
        answer = await self._call("POST", f"/envs/{env_id}/calls", json=body, timeout=600)
        if answer.status_code != 200:
            raise ServerError(f"the recorded calls could not be made: {answer.status_code} {answer.text}")
        data: dict[str, Any] = answer.json()
        return data

    async def bring_checkpoint(self, data: bytes) -> str:
        """Hand a checkpoint (signed on this machine) to the server; its id there."""
        answer = await self._call("POST", "/checkpoints", content=data, timeout=600,
                                  headers={"content-type": "application/octet-stream"})
        if answer.status_code != 201:
            raise ServerError(f"the checkpoint could not be brought to the server: {answer.status_code} {answer.text}")
        return str(answer.json()["checkpoint"])

    async def checkpoint(self, env_id: str) -> tuple[dict[str, Any], bytes]:
        """Checkpoint a world: the server's answer (``checkpoint`` id, ``at``, ``seq``, ...) and its bytes."""
        answer = await self._call("POST", f"/envs/{env_id}/checkpoint", timeout=600)
        if answer.status_code != 201:
            raise ServerError(f"the world could not be checkpointed: {answer.status_code} {answer.text}")
        made: dict[str, Any] = answer.json()
        data = await self._call("GET", f"/checkpoints/{made['checkpoint']}", timeout=600)
        if data.status_code != 200:
            raise ServerError(f"the checkpoint could not be read: {data.status_code} {data.text}")
        return made, data.content

    async def start_endpoint(self, env_id: str, url: str, startup_timeout: float) -> None:
        """Tell the world where its endpoint agent listens; it makes the handshakes (a vendor's
        URL verification) and starts delivering. ``ServerError`` says why it could not."""
        answer = await self._call("POST", f"/envs/{env_id}/endpoint",
                                  json={"url": url, "startup_timeout": startup_timeout},
                                  timeout=startup_timeout + 10)
        if answer.status_code != 200:
            try:
                reason = str(answer.json().get("error") or answer.text)
            except ValueError:
                reason = answer.text
            raise ServerError(reason)

    async def text(self, env_id: str, what: str) -> str:
        answer = await self._call("GET", f"/envs/{env_id}/{what}")
        answer.raise_for_status()
        return answer.text

    async def delete(self, env_id: str) -> None:
        await self._call("DELETE", f"/envs/{env_id}")


async def check_server(base_url: str, key: str | None) -> None:
    """Fail early, with a clear message, when ``server.url`` names no Ancha server."""
    headers = {"authorization": f"Bearer {key}"} if key else {}
    try:
        async with httpx.AsyncClient(timeout=5, headers=headers) as http:
            answer = await http.get(base_url.rstrip("/") + "/envs")
    except httpx.HTTPError as exc:
        raise RunFailed(f"error[SERVER_UNREACHABLE]: no Ancha server answers at {base_url}: {exc}\n"
                        "hint: start one with `ancha serve`, or remove server.url to use the embedded one") from exc
    if answer.status_code != 200:
        raise RunFailed(f"error[SERVER_UNREACHABLE]: {base_url} answered {answer.status_code} to GET /envs\n"
                        "hint: is it an Ancha server? If it needs a key, set ANCHA_SERVER_KEY to the one "
                        "`ancha serve` printed (on its machine, the CLI finds it by itself)")


async def connect(config: AnchaConfig, client: type[ControlClient] = ControlClient) -> \
        tuple[EmbeddedServer | None, ControlClient]:
    """The server trials run on (``server.url``, checked first, or an embedded server started
    here, which the caller stops) and a ``client`` for it."""
    if config.server.url:
        base_url = str(config.server.url)
        key = server_key(base_url)
        await check_server(base_url, key)
        return None, client(base_url, key)
    # The run's own key: the runner holds it, no agent is given it, so no agent reaches the control API.
    server = EmbeddedServer(key=new_key()).start().keep_key()
    return server, client(server.url, server.key, share=server.share, transport=server.transport())
