"""The AgentOS ASGI app.

    from agentos.api.app import create_app
    app = create_app("sqlite:///./agentos.db")     # or None: AGENTOS_DATABASE_URL, else db.data_dir()

Creating the app migrates the database and fails the runs a gone server left behind
(see agentos.instances); every error answers {"detail": "..."}.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from anyio import to_thread
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException
from starlette.responses import JSONResponse

from agentos.alerts import AlertWatcher
from agentos.api.console.app import hosted_console
from agentos.api.console.origin import SameOrigin
from agentos.api.routes import (
    alerts,
    ancha_runs,
    console_tasks,
    datasets,
    evaluations,
    history,
    keys,
    metrics,
    prices,
    releases,
    runs,
    stream,
    traces,
    workflows,
)
from agentos.api.services import Services
from agentos.crud import SLASH
from agentos.errors import ApiError
from agentos.rollups import RollupFolder

log = logging.getLogger("agentos.api")


def create_app(
    database_url: str | None = None,
    *,
    instance_label: str | None = None,
    broker_url: str | None = None,
    queue_url: str | None = None,
    blob_url: str | None = None,
) -> FastAPI:
    """Build the app over `database_url`; `instance_label` names this server (`host:port`) so a
    restarted one fails its predecessor's unfinished runs at once. `broker_url` and `queue_url`
    default to AGENTOS_BROKER_URL and AGENTOS_QUEUE_URL (see agentos.broker, agentos.engine.queue);
    `blob_url` to AGENTOS_BLOB_URL, else a folder beside the default database (agentos.blobs)."""
    svc = Services.build(database_url, instance_label, broker_url, queue_url, blob_url)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # Runs with wait=true hold a worker thread for their duration.
        to_thread.current_default_thread_limiter().total_tokens = 100
        svc.instance.start_heartbeat()
        listener = asyncio.ensure_future(svc.broker.listen())
        # Alert rules are judged in a thread of their own, off the request path (agentos.alerts).
        watcher = AlertWatcher(svc.db, float(os.environ.get("AGENTOS_ALERT_INTERVAL_S", "1")))
        watcher.start()
        # Finished runs are counted in the metrics breakdowns off their path too (agentos.rollups).
        folder = RollupFolder(svc.db, float(os.environ.get("AGENTOS_ROLLUP_INTERVAL_S", "1")))
        folder.start()
        try:
            yield
        finally:
            folder.stop()
            watcher.stop()
            listener.cancel()
            await asyncio.gather(listener, return_exceptions=True)
            svc.close()
            shutil.rmtree(app.state.console_copies, ignore_errors=True)

    app = FastAPI(title="AgentOS", version="0.1.0", lifespan=lifespan)
    app.state.services = svc
    for module in (workflows, alerts, runs, stream, evaluations, releases, metrics, prices, ancha_runs, history,
                   keys, console_tasks, traces, datasets):
        app.include_router(module.router)

    @app.exception_handler(ApiError)
    async def api_error(_: Request, exc: ApiError) -> JSONResponse:
        return JSONResponse({"detail": exc.detail}, status_code=exc.status_code, headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(_: Request, exc: RequestValidationError) -> JSONResponse:
        problems = []
        for error in exc.errors():
            where = ".".join(str(part) for part in error.get("loc", ()) if part != "body") or "body"
            problems.append(f"{where}: {error.get('msg', 'invalid')}")
        return JSONResponse({"detail": "Invalid request: " + "; ".join(problems)}, status_code=422)

    @app.exception_handler(HTTPException)
    async def http_error(_: Request, exc: HTTPException) -> JSONResponse:
        return JSONResponse({"detail": str(exc.detail)}, status_code=exc.status_code, headers=exc.headers)

    @app.exception_handler(Exception)
    async def unexpected(_: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error", exc_info=exc)
        return JSONResponse({"detail": f"Internal server error: {type(exc).__name__}"}, status_code=500)

    # Uploaded runs' files, copied for the console's pages; this process's own, gone when it stops.
    copies = Path(tempfile.mkdtemp(prefix="agentos-console-"))
    app.state.console_copies = copies
    app.mount("/ui", SameOrigin(hosted_console(svc.db, svc.keys, copies, svc.blobs)))

    app.add_middleware(EncodedSlashes)
    app.add_middleware(RefuseNulInUrl)
    return app


class RefuseNulInUrl:
    """Answer 400 to a URL whose path or query holds a NUL (`%00`): no name or id can contain
    one, and PostgreSQL refuses it in a query, which would otherwise be a 500."""

    DETAIL = "The URL contains a NUL character (%00), which no name or id can hold; remove it"

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] in ("http", "websocket") and _has_nul(scope):
            if scope["type"] == "http":
                await JSONResponse({"detail": self.DETAIL}, status_code=400)(scope, receive, send)
            else:  # accept, so the client reads why, instead of a bare 403
                await receive()
                await send({"type": "websocket.accept"})
                await send({"type": "websocket.send", "text": json.dumps({"detail": self.DETAIL})})
                await send({"type": "websocket.close", "code": 4400})
            return
        await self.app(scope, receive, send)


def _has_nul(scope: Any) -> bool:
    raw = (scope.get("raw_path") or b"") + b"?" + (scope.get("query_string") or b"")
    return "\x00" in scope.get("path", "") or b"\x00" in raw or b"%00" in raw


class EncodedSlashes:
    """Let a workflow name with a slash travel URL-encoded (`a%2Fb`) as one path segment.

    Servers decode %2F into the path before routing, so the route would see two segments;
    this stands the decoded slash in for a private-use character the lookup turns back.
    """

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        raw = scope.get("raw_path")
        if scope["type"] in ("http", "websocket") and raw and b"%2f" in raw.lower():
            segments = raw.split(b"?", 1)[0].split(b"/")
            scope = dict(scope)
            scope["path"] = "/".join(
                unquote(segment.decode("latin-1")).replace("/", SLASH) for segment in segments
            )
        await self.app(scope, receive, send)
