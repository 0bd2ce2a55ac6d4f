"""A live trial as Server-Sent Events: its calls, records and status as they happen.

``GET /envs/{id}/live`` streams what the environment's bus announces (``call_traced``,
``record_added``); the console relays it to a browser. A subscriber that arrives late,
or reconnects, names how much it has (``?calls=N&records=M``) and gets the rest first, so
nothing is missed and nothing is sent twice.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

from ancha.world.environment import Environment
from ancha.world.kernel.bus import DomainEvent
from ancha.world.kernel.trace import TraceEntry

TICK_S = 1.0
"""With nothing new, the status (the clock) is sent this often: it also keeps proxies from
closing a quiet stream, and notices a trial that ended without a call (a limit, a stop)."""
BATCH = 500
"""Calls or records sent per wake-up at most, so a long backlog never blocks the loop."""


def call_summary(entry: TraceEntry) -> dict[str, Any]:
    """What a timeline shows of a call (no bodies: they are fetched when opened)."""
    return {"seq": entry.seq, "at": _iso(entry.at), "actor": entry.actor, "tool": entry.tool,
            "method": entry.method, "path": entry.path, "status": entry.status, "worked": entry.worked}


def _iso(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).isoformat().replace("+00:00", "Z")


def _event(kind: str, data: dict[str, Any], cursor: str | None = None) -> bytes:
    head = f"id: {cursor}\n" if cursor is not None else ""
    return f"{head}event: {kind}\ndata: {json.dumps(data)}\n\n".encode()


def parse_cursor(last_event_id: str | None) -> tuple[int, int] | None:
    """``CALLS.RECORDS`` from an event's ``id`` (a browser's ``Last-Event-ID`` when it
    reconnects): what the subscriber already has."""
    if not last_event_id:
        return None
    calls, _, records = last_event_id.partition(".")
    if calls.isdigit() and records.isdigit() and len(last_event_id) < 40:
        return int(calls), int(records)
    return None


async def live_events(env: Environment, calls: int = 0, records: int = 0) -> AsyncIterator[bytes]:
    """The stream: ``status`` first, then ``call`` and ``record`` events as they happen (a
    ``status`` after each batch), and ``end`` once the trial has finished and all is sent."""
    loop = asyncio.get_running_loop()
    changed = asyncio.Event()

    def wake(_event: DomainEvent) -> None:
        # the bus may publish from another thread (a tool's worker): wake the loop safely
        loop.call_soon_threadsafe(changed.set)

    env.bus.subscribe("call_traced", wake)
    env.bus.subscribe("record_added", wake)
    try:
        yield _event("status", env.status_dict())
        while True:
            changed.clear()
            sent = False
            while calls < len(env.trace):
                for entry in env.trace.page(calls, BATCH):
                    calls = entry.seq
                    yield _event("call", call_summary(entry), f"{calls}.{records}")
                sent = True
            items = env.records.items
            while records < len(items):
                for record in items[records:records + BATCH]:
                    records += 1
                    yield _event("record", {"i": records, **record.to_dict()}, f"{calls}.{records}")
                sent = True
            status = env.status_dict()
            if status["status"] != "running":
                yield _event("end", status)
                return
            if sent:
                yield _event("status", status)
            try:
                await asyncio.wait_for(changed.wait(), TICK_S)
            except TimeoutError:
                yield _event("status", env.status_dict())
    finally:
        env.bus.unsubscribe("call_traced", wake)
        env.bus.unsubscribe("record_added", wake)
