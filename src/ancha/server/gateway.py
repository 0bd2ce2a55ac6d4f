"""Tool requests, straight to their environment.

Every agent call lands here (``/envs/ENV/TOOL/...``); it is the server's hot path, so it
skips the router and the request/response objects of the control API and speaks ASGI
directly. Anything else falls through to the control API.
"""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.types import ASGIApp, Receive, Scope, Send

from ancha.server.registry import Registry
from ancha.world.environment import Environment
from ancha.world.tools.base import ToolRequest


class ToolGateway:
    def __init__(self, registry: Registry, control: Starlette) -> None:
        self.registry = registry
        self.control: ASGIApp = control
        self.state = control.state

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            parts = scope["path"].split("/", 4)  # "", "envs", ENV, TOOL, rest
            if len(parts) >= 4 and parts[1] == "envs":
                env = self.registry.envs.get(parts[2])
                if env is not None and parts[3] in env.tools:
                    await self._tool(env, parts[3], "/" + (parts[4] if len(parts) == 5 else ""), scope, receive, send)
                    return
        await self.control(scope, receive, send)

    async def _tool(self, env: Environment, tool: str, path: str, scope: Scope, receive: Receive, send: Send) -> None:
        # An agent request in flight keeps the clock from jumping, from its first byte on.
        env.request_started()
        try:
            body = await _read_body(receive)
            request = ToolRequest(
                method=scope["method"],
                path=path,
                query=scope["query_string"].decode("latin-1"),
                headers={k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]},
                body=body,
            )
            answer = env.dispatch(tool, request)
        finally:
            env.request_finished()
        headers: list[tuple[bytes, bytes]] = [(b"content-length", str(len(answer.body)).encode())]
        if answer.content_type:  # an empty answer (204) goes without one, as vendors send it
            headers.insert(0, (b"content-type", answer.content_type.encode("latin-1")))
        headers += [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in answer.headers.items()]
        await send({"type": "http.response.start", "status": answer.status, "headers": headers})
        await send({"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else answer.body})


async def _read_body(receive: Receive) -> bytes:
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return b"".join(chunks)
