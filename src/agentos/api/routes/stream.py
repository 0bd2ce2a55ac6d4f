"""WS /api/runs/{id}/stream: every event of the run, past ones first, then live ones.

A run active in this process is followed through `RunStreams`; any other run (finished,
or running in another API process or a worker) is replayed from its stored events, then
followed through the broker (see agentos.broker): subscribed before the replay, so that
nothing stored after it is missed; the database is read again when a message does not
carry the next events, or none came for `resync_seconds` (with the in-process broker,
0.1 s: plain polling).
The socket closes after the run's last event. Errors arrive as {"detail": ...} followed
by a close with code 4401 (no or unknown key) or 4404 (unknown run, or a path that is
no stream).
"""

from __future__ import annotations

import asyncio
import json
from collections import OrderedDict
from typing import Any

from fastapi import APIRouter, WebSocket, WebSocketDisconnect
from sqlalchemy import select
from starlette.concurrency import run_in_threadpool

from agentos.api.services import Services, bearer, resolve_workspace
from agentos.errors import ApiError
from agentos.models import Run, RunEvent

router = APIRouter()

STREAM_PATH = "/api/runs/{run_id}/stream"
TERMINAL = ("success", "failed")


@router.websocket("/api/runs/{run_id}/stream")
async def stream_run(websocket: WebSocket, run_id: str) -> None:
    svc: Services = websocket.app.state.services
    await websocket.accept()
    try:
        key = bearer(websocket.headers.get("authorization")) or websocket.query_params.get("api_key")
        ws = await resolve_workspace(svc.keys, key)
    except ApiError as exc:
        await websocket.send_json({"detail": exc.detail})
        await websocket.close(code=4401)
        return
    status, _ = await run_in_threadpool(_read, svc, ws, run_id, 0)
    if status is None:
        await websocket.send_json({"detail": f"Run '{run_id}' not found"})
        await websocket.close(code=4404)
        return
    # Follow the run while watching the socket: a subscriber that leaves, or a server that
    # is shutting down (it closes every socket), ends the handler even if the run is stuck.
    follow = asyncio.ensure_future(_follow(websocket, svc, ws, run_id))
    gone = asyncio.ensure_future(_until_disconnect(websocket))
    try:
        await asyncio.wait((follow, gone), return_when=asyncio.FIRST_COMPLETED)
    finally:
        follow.cancel()
        gone.cancel()
    if gone.done() and not gone.cancelled():
        return
    try:
        follow.result()
    except WebSocketDisconnect:
        return
    await websocket.close(code=1000)


async def _until_disconnect(websocket: WebSocket) -> None:
    """Return once the client is gone; whatever it sends meanwhile is ignored."""
    while (await websocket.receive())["type"] != "websocket.disconnect":
        pass


@router.websocket("/{path:path}")
async def no_such_stream(websocket: WebSocket, path: str) -> None:
    """Any other WebSocket path: say where streams are, instead of a bare 403 handshake refusal."""
    await websocket.accept()
    await websocket.send_json({"detail": f"No stream at '/{path[:200]}': a run's events are at {STREAM_PATH}"})
    await websocket.close(code=4404)


async def _follow(websocket: WebSocket, svc: Services, ws: str, run_id: str) -> None:
    subscription = svc.streams.subscribe(run_id, asyncio.get_running_loop())
    if subscription is not None:
        past, queue = subscription
        try:
            for event in past:
                await websocket.send_text(_encoded(event))
            while (live := await queue.get()) is not None:
                await websocket.send_text(_encoded(live))
        finally:
            svc.streams.unsubscribe(run_id, queue)
        return
    with svc.broker.subscribe(run_id, asyncio.get_running_loop()) as announcements:
        last = 0
        while True:
            status, events = await run_in_threadpool(_read, svc, ws, run_id, last)
            for event in events:
                await websocket.send_text(_encoded(event))
                last = event["seq"]
            if status in TERMINAL or status is None:
                return
            while True:
                try:
                    message = await asyncio.wait_for(announcements.get(), svc.broker.resync_seconds)
                except TimeoutError:
                    break
                if message.last_seq <= last:
                    continue
                fresh = [e for e in message.events or () if e["seq"] > last]
                if not fresh or fresh[0]["seq"] != last + 1:
                    break  # not carried, or a gap: the database has them
                for event in fresh:
                    await websocket.send_text(_encoded(event))
                    last = event["seq"]
                if message.final:
                    return


# Each event's JSON text, encoded once for all of its subscribers in this process.
_TEXTS: OrderedDict[tuple[str, int], str] = OrderedDict()
_TEXTS_KEPT = 4096


def _encoded(event: dict[str, Any]) -> str:
    key = (event["run_id"], event["seq"])
    text = _TEXTS.get(key)
    if text is None:
        text = json.dumps(event, separators=(",", ":"), ensure_ascii=False)
        _TEXTS[key] = text
        if len(_TEXTS) > _TEXTS_KEPT:
            _TEXTS.popitem(last=False)
    return text


def _read(svc: Services, ws: str, run_id: str, after: int) -> tuple[str | None, list[dict[str, Any]]]:
    """The run's status, then its events after `after` (status first: a finished run's
    events were committed with its final status, so none can be missed)."""
    with svc.db.read() as session:
        status = session.scalar(select(Run.status).where(Run.workspace_id == ws, Run.id == run_id))
        if status is None:
            return None, []
        rows = session.scalars(
            select(RunEvent.data).where(RunEvent.run_id == run_id, RunEvent.seq > after).order_by(RunEvent.seq)
        )
        return status, list(rows)
