"""A live world's events, relayed as Server-Sent Events from the server running it
(``GET /envs/ENV/live``): Ancha's console relays a running trial, AgentOS's hosted console a
console task's world. When the relay cannot go on, a ``gone`` event says why."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx

TIMEOUT = httpx.Timeout(10.0, read=30.0)


def sse(kind: str, data: dict[str, Any]) -> bytes:
    """One Server-Sent Event."""
    return f"event: {kind}\ndata: {json.dumps(data)}\n\n".encode()


async def one_event(kind: str, data: dict[str, Any]) -> AsyncIterator[bytes]:
    yield sse(kind, data)


async def relay(url: str, headers: dict[str, str], server: str) -> AsyncIterator[bytes]:
    """The events at ``url`` (``…/envs/ENV/live``) as they come; ``server`` names it in a ``gone`` reason."""
    try:
        async with httpx.AsyncClient(timeout=TIMEOUT) as client, \
                client.stream("GET", url, headers=headers) as answer:
            if answer.status_code != 200:
                text = (await answer.aread()).decode(errors="replace")[:300]
                yield sse("gone", {"reason": f"{server} answered {answer.status_code}: {text}"})
                return
            async for piece in answer.aiter_raw():
                yield piece
    except httpx.HTTPError as exc:
        yield sse("gone", {"reason": f"{server} could not be reached: {exc}"})
