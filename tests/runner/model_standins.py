"""Local stand-ins for model providers, speaking OpenAI chat completions (``/v1/...``),
OpenRouter (``/api/v1/...``, with ``usage.cost``) and Anthropic messages (``/v1/messages``),
each streamed (SSE) or not. Answers are fixed, so a stream read directly and one read
through the gateway can be compared byte for byte.

The model ``hold`` streams its first chunk, then waits for ``release`` before the rest:
a client that reads the first chunk before release proves nothing buffered the stream.
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
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

INPUT_TOKENS = 1000
OUTPUT_TOKENS = 500
OPENROUTER_COST = 0.0123
WORDS = ["Hello", " from", " the", " stand-in."]


def _sse(data: dict[str, Any] | str, event: str | None = None) -> bytes:
    text = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
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
        usage: dict[str, Any] = {"prompt_tokens": INPUT_TOKENS, "completion_tokens": OUTPUT_TOKENS,
                                 "total_tokens": INPUT_TOKENS + OUTPUT_TOKENS}
        if openrouter:
            usage["cost"] = OPENROUTER_COST
        base = {"id": "chatcmpl-standin", "created": 1700000000, "model": model}
        if not body.get("stream"):  # with a cookie, as providers behind a CDN set them
            return JSONResponse({**base, "object": "chat.completion", "usage": usage, "choices": [
                {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "".join(WORDS)}}]},
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
                yield _sse({**chunk, "choices": [], "usage": usage})
            yield _sse("[DONE]")

        return StreamingResponse(events(), media_type="text/event-stream")

    # --- Anthropic messages ----------------------------------------------------------

    async def anthropic(self, request: Request) -> Response:
        body = await self._body(request)
        model = str(body.get("model"))
        message = {"id": "msg_standin", "type": "message", "role": "assistant", "model": model,
                   "stop_reason": None, "stop_sequence": None}
        usage = {"input_tokens": INPUT_TOKENS, "output_tokens": OUTPUT_TOKENS,
                 "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
        if not body.get("stream"):
            return JSONResponse({**message, "stop_reason": "end_turn", "usage": usage,
                                 "content": [{"type": "text", "text": "".join(WORDS)}]})

        async def events() -> AsyncIterator[bytes]:
            yield _sse({"type": "message_start", "message": {**message, "content": [],
                                                             "usage": {**usage, "output_tokens": 1}}},
                       "message_start")
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
                        "usage": {"output_tokens": OUTPUT_TOKENS}}, "message_delta")
            yield _sse({"type": "message_stop"}, "message_stop")

        return StreamingResponse(events(), media_type="text/event-stream")
