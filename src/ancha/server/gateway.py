"""Tool requests, straight to their environment.

Every agent call lands here (``/envs/ENV/TOOL/...``); it is the server's hot path, so it
skips the router and the request/response objects of the control API and speaks ASGI
directly. A WebSocket below a tool's URL goes to the tool's own ``websocket`` handler
(a tool's own event socket). Anything else falls through to the control API. A body sent
with a ``Content-Encoding`` is decoded by its tool's ``decode_body`` in a worker thread,
never on the event loop, before the environment sees the request.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

from starlette.applications import Starlette
from starlette.types import ASGIApp, Receive, Scope, Send

from ancha.server.registry import Registry
from ancha.world.environment import Environment
from ancha.world.kernel.hostnames import REAL_BASE, REAL_HOST
from ancha.world.kernel.tool import ToolRequest, ToolResponse

INTERCEPTED = "ancha.intercepted"
"""A scope key the interceptor's connections set: their requests keep the real-hostname headers."""


class ToolGateway:
    def __init__(self, registry: Registry, control: Starlette) -> None:
        self.registry = registry
        self.control: ASGIApp = control
        self.state = control.state

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            target = self.target(scope["path"])
            if target is not None:
                await self._tool(*target, scope, receive, send)
                return
        elif scope["type"] == "websocket":
            parts = scope["path"].split("/", 4)
            if len(parts) >= 4 and parts[1] == "envs":
                env = self.registry.envs.get(parts[2])
                if env is not None and parts[3] in env.tools:
                    serve = env.registry.tools[parts[3]].websocket
                    if serve is not None:
                        path = "/" + (parts[4] if len(parts) == 5 else "")
                        await serve(env.tools[parts[3]], path, scope, receive, send)
                        return
        await self.control(scope, receive, send)

    def target(self, path: str) -> tuple[Environment, str, str] | None:
        """(environment, tool, path below the tool) for a tool's URL; None for anything else."""
        parts = path.split("/", 4)  # "", "envs", ENV, TOOL, rest
        if len(parts) >= 4 and parts[1] == "envs":
            env = self.registry.envs.get(parts[2])
            if env is not None and parts[3] in env.tools:
                return env, parts[3], "/" + (parts[4] if len(parts) == 5 else "")
        return None

    async def _tool(self, env: Environment, tool: str, path: str, scope: Scope, receive: Receive, send: Send) -> None:
        spec = env.registry.tools[tool]
        # An agent request in flight keeps the clock from jumping, from its first byte on.
        env.request_started()
        try:
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
            if scope.get("scheme") == "https":  # the replicas' self links keep the scheme the call came in on
                headers.setdefault("x-forwarded-proto", "https")
            if REAL_BASE in headers and not scope.get(INTERCEPTED):  # only the interceptor says it came by a vendor's name
                del headers[REAL_BASE]
                headers.pop(REAL_HOST, None)
            try:
                body = await _read_body(receive, headers.get("content-length"), spec.max_body)
            except ClientGone:
                return  # nothing to answer, and a half-sent request is no call to trace
            except BodyTooLarge:
                answer = spec.body_too_large(spec.max_body) if spec.body_too_large else _too_large(spec.max_body)
                # The rest of the body is never read: the connection closes after the answer.
                answer.headers = {**answer.headers, "connection": "close"}
            else:
                request = ToolRequest(scope["method"], path, scope["query_string"].decode("latin-1"), headers, body)
                decoded = await _decoded(spec.decode_body, request, spec.max_body)
                answer = env.dispatch(tool, decoded, from_agent=True) if isinstance(decoded, ToolRequest) else decoded
        finally:
            env.request_finished()
        await send({"type": "http.response.start", "status": answer.status, "headers": response_headers(answer)})
        await send({"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else answer.body})


async def _decoded(decode: Callable[[ToolRequest, int], Callable[[], ToolRequest | ToolResponse] | None] | None,
                   request: ToolRequest, limit: int) -> ToolRequest | ToolResponse:
    """The request with its body decoded by its tool (``ToolSpec.decode_body``) in a worker
    thread, or the tool's refusal; the request as sent when it has no ``Content-Encoding``."""
    if decode is None or "content-encoding" not in request.headers:
        return request
    job = decode(request, limit)
    if job is None:
        return request
    return await asyncio.to_thread(job)


def response_headers(answer: ToolResponse) -> list[tuple[bytes, bytes]]:
    """A tool's answer's HTTP headers, lower-case names, as bytes."""
    out: list[tuple[bytes, bytes]] = [(b"content-length", str(len(answer.body)).encode())]
    if answer.content_type:  # an empty answer (204) goes without one, as vendors send it
        out.insert(0, (b"content-type", _content_type(answer.content_type)))
    if answer.headers:
        out += [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in answer.headers.items()]
    return out


_CONTENT_TYPES: dict[str, bytes] = {}


def _content_type(value: str) -> bytes:
    """A content type as header bytes (the few a replica answers with, encoded once)."""
    encoded = _CONTENT_TYPES.get(value)
    if encoded is None:
        encoded = value.encode("latin-1")
        if len(_CONTENT_TYPES) < 64:
            _CONTENT_TYPES[value] = encoded
    return encoded


class ClientGone(Exception):
    """The client disconnected (or was cut off as too slow) before its body arrived."""


class BodyTooLarge(Exception):
    """A request body over the tool's ``max_body``."""


async def _read_body(receive: Receive, declared: str | None, limit: int) -> bytes:
    """The request body, refused past ``limit`` bytes (checked on the declared length
    first, then on what arrives) before it is all held in memory."""
    if declared is not None and declared.strip().isdigit() and int(declared) > limit:
        raise BodyTooLarge()
    message = await receive()
    if message["type"] == "http.disconnect":
        raise ClientGone()
    chunk = message.get("body", b"")
    if not message.get("more_body", False):  # the usual case: the whole body in one message
        if len(chunk) > limit:
            raise BodyTooLarge()
        return chunk  # type: ignore[no-any-return]
    chunks: list[bytes] = [chunk]
    size = len(chunk)
    if size > limit:
        raise BodyTooLarge()
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientGone()
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge()
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def _too_large(limit: int) -> ToolResponse:
    body = json.dumps({"error": "request body too large", "limit_bytes": limit}).encode()
    return ToolResponse(413, body, "application/json")
