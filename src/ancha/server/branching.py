"""The control API's replay and checkpoint routes: branching worlds from a harness.

- ``GET /envs/{id}/calls?after=SEQ&limit=N``: the agent's calls as ``calls.jsonl`` lines
  (instant, tool, method, path, query, headers, body), what a replay makes again;
- ``POST /envs/{id}/calls``: make recorded calls in a world built with ``"replay": true``
  (its clock stands still but for each call's instant), and optionally end it where the
  original ended: ``{"calls": [...], "end": {"at": ..., "status": ..., "reason": ...}}``;
- ``POST /envs/{id}/checkpoint``: the world as it stands, kept by the server; answers
  ``{"checkpoint": "ckpt_...", ...}``, which ``POST /envs`` takes as ``from_checkpoint``;
- ``GET /checkpoints/{id}``: its bytes (the runner keeps them in the trial's folder);
  ``POST /checkpoints``: bring one back (only one this machine's Ancha signed).
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections import OrderedDict
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from ancha.world import replay
from ancha.world.checkpoint import CheckpointError, CheckpointHeader, read_header
from ancha.world.kernel import bounded_json
from ancha.world.signing import SignatureInvalid, sign, verify

if TYPE_CHECKING:
    from ancha.server.app import ControlAPI
    from ancha.world.environment import Environment

CALLS_PAGE_MAX = 10_000
KEEP_CHECKPOINTS = 64
"""Checkpoints a server keeps (the oldest go first)."""
KEEP_BYTES = 2 * 1024**3


@dataclass(slots=True)
class Kept:
    data: bytes
    header: CheckpointHeader


class Checkpoints:
    """The checkpoints a server holds, by id, the oldest forgotten past a count or a size."""

    def __init__(self) -> None:
        self._kept: OrderedDict[str, Kept] = OrderedDict()
        self._bytes = 0

    def add(self, data: bytes) -> tuple[str, CheckpointHeader]:
        header = read_header(data)
        key = "ckpt_" + secrets.token_hex(8)
        self._kept[key] = Kept(data, header)
        self._bytes += len(data)
        while len(self._kept) > KEEP_CHECKPOINTS or (self._bytes > KEEP_BYTES and len(self._kept) > 1):
            _, old = self._kept.popitem(last=False)
            self._bytes -= len(old.data)
        return key, header

    def get(self, key: str) -> Kept | None:
        return self._kept.get(key)


def _error(status: int, message: str, hint: str | None = None) -> JSONResponse:
    return JSONResponse({"error": message, **({"hint": hint} if hint else {})}, status_code=status)


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).isoformat().replace("+00:00", "Z")


def header_json(key: str, header: CheckpointHeader, size: int, made_s: float | None = None) -> dict[str, Any]:
    return {"checkpoint": key, "bytes": size, "env_id": header.env_id, "scene": header.scene,
            "source_hash": header.source_hash, "trial": header.trial, "seed": header.seed, "at": _iso(header.at),
            "seq": header.seq, "status": header.status, **({"made_s": round(made_s, 6)} if made_s is not None else {})}


class Branching:
    """The routes above, on a ``ControlAPI``."""

    def __init__(self, api: ControlAPI) -> None:
        self.api = api
        self.checkpoints = Checkpoints()

    async def calls(self, request: Request) -> Response:
        env = self.api._env(request, control=True)  # noqa: SLF001 (the control API's own lookup)
        if isinstance(env, JSONResponse):
            return env
        if request.method == "POST":
            return await self._make_calls(request, env)
        try:
            after = int(request.query_params.get("after") or 0)
            limit = int(request.query_params.get("limit") or CALLS_PAGE_MAX)
            if after < 0 or not 1 <= limit <= CALLS_PAGE_MAX:
                raise ValueError
        except ValueError:
            return _error(400, "invalid calls query", f"page with ?after=SEQ&limit=N (1 <= N <= {CALLS_PAGE_MAX})")
        entries = env.trace.page(after, limit)
        headers = {}
        if entries and entries[-1].seq < len(env.trace):
            headers["ancha-trace-next"] = str(entries[-1].seq)
        lines = (call.to_line().encode() for call in replay.agent_calls(entries))
        return StreamingResponse(iter([b"".join(lines)]), media_type="application/x-ndjson", headers=headers)

    async def _make_calls(self, request: Request, env: Environment) -> Response:
        if env.ticker is not None:
            return _error(409, "this world runs on its own clock: recorded calls are made only in a world built "
                               "for them", 'create it with POST /envs {..., "replay": true}')
        try:
            body = bounded_json.loads(await request.body() or b"{}")
            if not isinstance(body, dict) or not isinstance(body.get("calls", []), list):
                raise replay.CallsInvalid('send {"calls": [...], "end": {"at": ..., "status": ..., "reason": ...}}')
            calls = [replay.RecordedCall.of_dict(line, f"calls[{i}]") for i, line in enumerate(body.get("calls", []))]
            ending = body.get("end")
            if ending is not None and not (isinstance(ending, dict) and isinstance(ending.get("at"), str)):
                raise replay.CallsInvalid('end must be {"at": "2026-03-02T14:30:00Z", "status": "done", "reason": "..."}')
            until = body.get("until")
            if until is not None and not isinstance(until, str):
                raise replay.CallsInvalid('until must be an instant, as "2026-03-02T14:30:00Z"')
            for call in calls:
                replay.make(env, call)
            if until is not None:
                replay.go_on(env, replay._epoch(until))  # noqa: SLF001
            if ending is not None:
                replay.end(env, replay._epoch(ending["at"]), str(ending.get("status") or "done"),  # noqa: SLF001
                           str(ending.get("reason") or "the replay ended"))
        except replay.CallsInvalid as exc:
            return _error(400, f"invalid calls: {exc}", "calls come as GET /envs/{id}/calls gives them")
        except ValueError as exc:
            return _error(400, f"invalid calls: {exc}")
        return JSONResponse({"made": len(calls), "trace_entries": len(env.trace), **env.status_dict()})

    async def checkpoint(self, request: Request) -> Response:
        env = self.api._env(request, control=True)  # noqa: SLF001
        if isinstance(env, JSONResponse):
            return env
        started = time.perf_counter()
        try:
            data = sign(env.checkpoint())
        except Exception as exc:  # a world holding something that cannot be kept: say what
            return _error(422, f"the world could not be checkpointed: {type(exc).__name__}: {exc}")
        made = time.perf_counter() - started
        key, header = self.checkpoints.add(data)
        return JSONResponse(header_json(key, header, len(data), made), status_code=201)

    async def checkpoint_bytes(self, request: Request) -> Response:
        if not self.api._authorized(request):  # noqa: SLF001
            return _error(401, "this server needs a key", "send Authorization: Bearer <server key>")
        kept = self.checkpoints.get(request.path_params["checkpoint"])
        if kept is None:
            return _error(404, f"no checkpoint {request.path_params['checkpoint']!r} on this server",
                          "make one with POST /envs/{id}/checkpoint, or bring one with POST /checkpoints")
        return Response(kept.data, media_type="application/octet-stream")

    async def upload(self, request: Request) -> Response:
        if not self.api._authorized(request):  # noqa: SLF001
            return _error(401, "this server needs a key", "send Authorization: Bearer <server key>")
        data = await request.body()
        try:
            await asyncio.to_thread(verify, data)
            key, header = self.checkpoints.add(data)
        except (CheckpointError, SignatureInvalid) as exc:
            return _error(400, f"invalid checkpoint: {exc}",
                          "only checkpoints this machine's Ancha made are taken; otherwise rebuild the world by "
                          "replaying its calls (ancha fork does)")
        return JSONResponse(header_json(key, header, len(data)), status_code=201)
