"""Local stand-ins for model providers, speaking OpenAI chat completions (``/v1/...``),
OpenRouter (``/api/v1/...``, with ``usage.cost``) and Anthropic messages (``/v1/messages``),
each streamed (SSE) or not. Answers are fixed, so a stream read directly and one read
through the gateway can be compared byte for byte.

The model ``hold`` streams its first chunk, then waits for ``release`` before the rest:
a client that reads the first chunk before release proves nothing buffered the stream.

A request with an ``x-standin-usage`` header gets that header's text, verbatim, as the
answer's ``usage`` (every usage event of a stream): a hostile upstream's numbers exactly as
it would write them (``1e309``, a 401-digit integer, ``NaN``), which ``json.dumps`` could not.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import AsyncIterator
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

HOSTS = ["api.openai.com", "api.anthropic.com", "openrouter.ai"]
"""The model hosts the gateway tests route to the stand-in."""

INPUT_TOKENS = 1000
OUTPUT_TOKENS = 500
OPENROUTER_COST = 0.0123
WORDS = ["Hello", " from", " the", " stand-in."]


USAGE_HEADER = "x-standin-usage"
_USAGE = "__standin_usage__"


def _json(data: dict[str, Any], usage: str | None) -> str:
    """``data`` as JSON, with ``usage`` (raw JSON text) in place of the placeholder ``_USAGE``."""
    text = json.dumps(data, separators=(",", ":"))
    return text.replace(json.dumps(_USAGE), usage) if usage is not None else text


def _sse(data: dict[str, Any] | str, event: str | None = None, usage: str | None = None) -> bytes:
    text = data if isinstance(data, str) else _json(data, usage)
    return (f"event: {event}\n" if event else "").encode() + f"data: {text}\n\n".encode()


class ModelStandIn:
    """Start with ``start()`` (or as a context manager); ``url`` is its base URL. ``requests``
    holds what it was sent: method, path, headers and JSON body."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.requests: list[dict[str, Any]] = []
        routes = [Route("/v1/chat/completions", self.openai, methods=["POST"]),
                  Route("/api/v1/chat/completions", self.openrouter, methods=["POST"]),
                  Route("/v1/messages", self.anthropic, methods=["POST"])]
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self._socket.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._socket.getsockname()[1]}"
        self._server = uvicorn.Server(uvicorn.Config(Starlette(routes=routes), log_level="warning",
                                                     access_log=False, lifespan="off", loop="asyncio"))
        self._thread = threading.Thread(target=lambda: asyncio.run(self._server.serve(sockets=[self._socket])),
                                        daemon=True)

    def start(self) -> ModelStandIn:
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            assert time.monotonic() < deadline, "the stand-in did not start"
            time.sleep(0.005)
        return self

    def stop(self) -> None:
        self.release.set()
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self._socket.close()

    def __enter__(self) -> ModelStandIn:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def _body(self, request: Request) -> dict[str, Any]:
        body = await request.json()
        self.requests.append({"method": request.method, "path": request.url.path, "body": body,
                              "headers": dict(request.headers)})
        return body

    async def _held(self, model: str) -> None:
        if model == "hold":
            await asyncio.to_thread(self.release.wait, 30)

    # --- OpenAI chat completions, and OpenRouter's variant of it ---------------------

    async def openai(self, request: Request) -> Response:
        return await self._chat(request, openrouter=False)

    async def openrouter(self, request: Request) -> Response:
        return await self._chat(request, openrouter=True)

    async def _chat(self, request: Request, openrouter: bool) -> Response:
        body = await self._body(request)
        model = str(body.get("model"))
        counts: dict[str, Any] = {"prompt_tokens": INPUT_TOKENS, "completion_tokens": OUTPUT_TOKENS,
                                  "total_tokens": INPUT_TOKENS + OUTPUT_TOKENS}
        if openrouter:
            counts["cost"] = OPENROUTER_COST
        raw = request.headers.get(USAGE_HEADER)
        usage = counts if raw is None else _USAGE
        base = {"id": "chatcmpl-standin", "created": 1700000000, "model": model}
        if not body.get("stream"):  # with a cookie, as providers behind a CDN set them
            answer = {**base, "object": "chat.completion", "usage": usage, "choices": [
                {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "".join(WORDS)}}]}
            return Response(_json(answer, raw), media_type="application/json",
                            headers={"set-cookie": "edge=provider-set; Path=/"})
        include_usage = openrouter or bool((body.get("stream_options") or {}).get("include_usage"))

        async def events() -> AsyncIterator[bytes]:
            if openrouter:
                yield b": OPENROUTER PROCESSING\n\n"
            chunk = {**base, "object": "chat.completion.chunk"}
            for i, word in enumerate(WORDS):
                delta = {"role": "assistant", "content": word} if i == 0 else {"content": word}
                yield _sse({**chunk, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
                if i == 0:
                    await self._held(model)
            yield _sse({**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
            if include_usage:
                yield _sse({**chunk, "choices": [], "usage": usage}, usage=raw)
            yield _sse("[DONE]")

        return StreamingResponse(events(), media_type="text/event-stream")

    # --- Anthropic messages ----------------------------------------------------------

    async def anthropic(self, request: Request) -> Response:
        body = await self._body(request)
        model = str(body.get("model"))
        message = {"id": "msg_standin", "type": "message", "role": "assistant", "model": model,
                   "stop_reason": None, "stop_sequence": None}
        usage: dict[str, Any] = {"input_tokens": INPUT_TOKENS, "output_tokens": OUTPUT_TOKENS,
                                 "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
        raw = request.headers.get(USAGE_HEADER)
        if not body.get("stream"):
            answer = {**message, "stop_reason": "end_turn", "usage": usage if raw is None else _USAGE,
                      "content": [{"type": "text", "text": "".join(WORDS)}]}
            return Response(_json(answer, raw), media_type="application/json")

        async def events() -> AsyncIterator[bytes]:
            start_usage = {**usage, "output_tokens": 1} if raw is None else _USAGE
            yield _sse({"type": "message_start", "message": {**message, "content": [], "usage": start_usage}},
                       "message_start", usage=raw)
            yield _sse({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
                       "content_block_start")
            yield _sse({"type": "ping"}, "ping")
            for i, word in enumerate(WORDS):
                yield _sse({"type": "content_block_delta", "index": 0,
                            "delta": {"type": "text_delta", "text": word}}, "content_block_delta")
                if i == 0:
                    await self._held(model)
            yield _sse({"type": "content_block_stop", "index": 0}, "content_block_stop")
            yield _sse({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                        "usage": {"output_tokens": OUTPUT_TOKENS} if raw is None else _USAGE}, "message_delta",
                       usage=raw)
            yield _sse({"type": "message_stop"}, "message_stop")

        return StreamingResponse(events(), media_type="text/event-stream")
