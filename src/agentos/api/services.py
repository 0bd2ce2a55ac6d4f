"""What every route needs: the database, keys, the runner, live streams; and the auth check."""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from typing import Any

from fastapi import Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import JSONResponse

from agentos.blobs import BlobStore, open_blob_store
from agentos.broker import Broker, open_broker
from agentos.db import Database
from agentos.engine.providers import Providers
from agentos.engine.queue import RunQueue
from agentos.engine.runner import Runner
from agentos.engine.streams import RunStreams
from agentos.errors import Forbidden, Unauthorized
from agentos.instances import Instance
from agentos.keys import Caller, KeyRing
from agentos.telemetry.export import TracedRunStreams, open_tracer_provider


@dataclass
class Services:
    db: Database
    keys: KeyRing
    streams: RunStreams
    providers: Providers
    instance: Instance
    runner: Runner
    broker: Broker
    blobs: BlobStore

    @classmethod
    def build(
        cls,
        database_url: str | None,
        instance_label: str | None,
        broker_url: str | None = None,
        queue_url: str | None = None,
        blob_url: str | None = None,
    ) -> Services:
        """Services over `database_url`; the broker and the queue default to AGENTOS_BROKER_URL
        and AGENTOS_QUEUE_URL (unset: in-process broker, runs executed in this process)."""
        db = Database(database_url)
        try:
            broker = open_broker(broker_url or os.environ.get("AGENTOS_BROKER_URL"), db.url)
            queue_url = queue_url or os.environ.get("AGENTOS_QUEUE_URL")
            queue = RunQueue(queue_url) if queue_url else None
            blobs = open_blob_store(blob_url)
        except Exception:
            db.dispose()
            raise
        instance = Instance(db, instance_label or f"{socket.gethostname()}:{id(db):x}", broker)
        instance.register()
        # OTEL_* variables asking for OTLP traces: every run executed here is exported as a trace.
        run_spans = open_tracer_provider()
        streams = RunStreams() if run_spans is None else TracedRunStreams(run_spans)
        providers = Providers()
        return cls(
            db=db,
            keys=KeyRing(db),
            streams=streams,
            providers=providers,
            instance=instance,
            runner=Runner(db, streams, providers, instance.id, broker=broker, queue=queue),
            broker=broker,
            blobs=blobs,
        )

    def close(self) -> None:
        self.runner.shutdown()
        self.instance.stop()
        if self.runner.queue is not None:
            self.runner.queue.close()
        self.broker.close()
        if isinstance(self.streams, TracedRunStreams):
            self.streams.shutdown()  # exports the spans still batched
        self.providers.close()
        self.db.dispose()


async def services(request: Request) -> Services:
    # async: FastAPI would run a plain function dependency in the thread pool.
    return request.app.state.services  # type: ignore[no-any-return]


KEY_HINT = "send 'Authorization: Bearer <key>' with a key from `agentos keys create --workspace NAME`"
MISSING_KEY = f"Missing API key: {KEY_HINT}"
UNKNOWN_KEY = "Invalid API key (not a key of this server, which reads its keys from {database}): " + KEY_HINT


def bearer(authorization: str | None) -> str | None:
    """The key in an `Authorization: Bearer KEY` header, or None when there is none.

    The scheme is case-insensitive, as HTTP defines it (RFC 9110 §11.1): `bearer KEY` works
    too. A header with another scheme is a 401 naming it, not a missing key.
    """
    if not authorization or not authorization.strip():
        return None
    scheme, space, key = authorization.strip().partition(" ")
    if not space:
        raise Unauthorized(f"The Authorization header has no scheme: {KEY_HINT}")
    if scheme.lower() != "bearer":
        raise Unauthorized(f"Unsupported authorization scheme {scheme[:20]!r}: {KEY_HINT}")
    return key.strip() or None


async def resolve_caller(keys: KeyRing, key: str | None) -> Caller:
    """Who holds a key; 401 when it is missing, unknown or revoked."""
    if not key:
        raise Unauthorized(MISSING_KEY)
    caller = keys.cached(key)
    if caller is None:
        caller = await run_in_threadpool(keys.caller_of, key)
    if caller is None:
        raise Unauthorized(UNKNOWN_KEY.format(database=keys.database))
    return caller


async def resolve_workspace(keys: KeyRing, key: str | None) -> str:
    """The workspace a key belongs to; 401 when it is missing or unknown."""
    return (await resolve_caller(keys, key)).workspace_id


READS = frozenset({"GET", "HEAD", "OPTIONS"})


def require(caller: Caller, role: str, doing: str) -> None:
    """403 unless the caller's key has ``role``'s rights (``doing`` says what it was refused)."""
    if not caller.may(role):
        raise Forbidden(f"This key's role is {caller.role}, and {doing} needs a key with the role {role}"
                        f"{' or admin' if role != 'admin' else ''}: ask an admin of the workspace for one"
                        " (`agentos keys create --workspace NAME --role ROLE`)")


async def caller(request: Request) -> Caller:
    """FastAPI dependency: who calls, from `Authorization: Bearer KEY`; a viewer key may only read."""
    svc: Services = request.app.state.services
    found = await resolve_caller(svc.keys, bearer(request.headers.get("authorization")))
    if request.method not in READS:
        require(found, "ci", f"{request.method} {request.url.path}")
    return found


async def workspace(request: Request) -> str:
    """FastAPI dependency: the caller's workspace id, from `Authorization: Bearer KEY`."""
    return (await caller(request)).workspace_id


def respond(data: Any, status_code: int = 200) -> JSONResponse:
    return JSONResponse(data, status_code=status_code)
