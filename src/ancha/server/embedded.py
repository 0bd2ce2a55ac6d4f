"""An Ancha server on a free loopback port, in a background thread of this process.

It listens twice, on one event loop and one app: plain http (the control API and every
tool), and TLS with a certificate from a CA made for it (``tls.py``), where tools whose
official SDK only talks https are handed out."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Mapping

import httpx
import uvicorn

from ancha.scene.model import Scene
from ancha.server.app import SecureListener, create_app
from ancha.server.connections import (
    ConnectionLimits,
    accept_backlog,
    raise_open_files_limit,
)
from ancha.server.gateway import ToolGateway
from ancha.server.keys import forget_key, save_key
from ancha.server.listener import Listener, run_on_fast_loop, serve_all
from ancha.server.tls import LocalTLS, local_tls
from ancha.server.tool_calls import http_protocol


class EmbeddedServer:
    """Start with ``start()``; ``url`` is then its base URL (``tls_url`` its TLS listener's).
    ``stop()`` shuts it down. ``key``: a bearer key its control API then requires (``ancha run``
    always gives one, made for the run: ``keys.new_key``); ``limits``:
    how long idle and slow connections are kept (``connections.py``)."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, tls_port: int = 0, key: str | None = None,
                 limits: ConnectionLimits = ConnectionLimits(),
                 tunnel_addresses: Mapping[str, tuple[str, int]] | None = None) -> None:
        self.host = host
        self.port = port or free_port(host)
        self.tls_port = tls_port or free_port(host)
        self.tls = local_tls((host, "localhost"))
        self.key = key
        self._kept = False
        self.app = create_app(key=key, tls=SecureListener(self.tls_url, self.tls.ca_pem),
                              tunnel_addresses=tunnel_addresses)
        self._servers = listeners(self.app, host, self.port, self.tls_port, self.tls, limits)
        self._thread = threading.Thread(target=self._serve, name="ancha-server", daemon=True)
        self._loop: asyncio.AbstractEventLoop | None = None

    def share(self, scene: Scene) -> None:
        """Hand a scene loaded in this process to the server (``Registry.share``): it is then
        named by hash, never copied through JSON."""
        self.app.registry.share(scene)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def tls_url(self) -> str:
        return f"https://{self.host}:{self.tls_port}"

    def keep_key(self) -> EmbeddedServer:
        """Keep this server's key where the CLI finds it (``keys.save_key``: the console follows
        the run's live trials with it) until ``stop()``."""
        if self.key:
            try:
                save_key(self.url, self.key)
                self._kept = True
            except OSError:  # no state folder to write: the run goes on, the console cannot follow it live
                pass
        return self

    def transport(self) -> InProcessTransport:
        """How this process's own control client reaches the server: no socket (see ``InProcessTransport``)."""
        return InProcessTransport(self)

    def _serve(self) -> None:
        async def serve() -> None:
            self._loop = asyncio.get_running_loop()
            await serve_all(self._servers)

        run_on_fast_loop(serve())

    def start(self, timeout: float = 10.0) -> EmbeddedServer:
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not all(server.started for server in self._servers):
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the embedded Ancha server did not start on {self.url} and {self.tls_url}")
            time.sleep(0.005)
        return self

    def stop(self) -> None:
        for server in self._servers:
            server.request_exit()
        self._thread.join(timeout=5)
        if self._kept and self.key:
            forget_key(self.url, self.key)
            self._kept = False

    def __enter__(self) -> EmbeddedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class InProcessTransport(httpx.AsyncBaseTransport):
    """The runner's calls to a server in its own process: each request is handed to the app
    on the server's event loop, as ASGI, with no socket and no HTTP parsing on either side.
    The same app answers as over HTTP (same routes, keys, errors); an answer comes back
    whole, which the control API's paged trace and one-moment state already are on the
    server. The agents themselves always reach the server over HTTP."""

    def __init__(self, server: EmbeddedServer) -> None:
        self._server = server
        self._app = httpx.ASGITransport(app=server.app, raise_app_exceptions=False)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        loop = self._server._loop
        await request.aread()  # the body, read here, so the server's loop never touches this one's stream
        if loop is None or loop.is_closed() or not self._server._thread.is_alive():
            raise httpx.ConnectError(f"the embedded Ancha server at {self._server.url} is not running",
                                     request=request)
        try:
            answer = asyncio.run_coroutine_threadsafe(self._app.handle_async_request(request), loop)
        except RuntimeError as exc:  # its loop closed between the check and the call
            raise httpx.ConnectError(f"the embedded Ancha server at {self._server.url} stopped: {exc}",
                                     request=request) from exc
        return await asyncio.wrap_future(answer)


def listeners(app: ToolGateway, host: str, port: int, tls_port: int, tls: LocalTLS,
              limits: ConnectionLimits = ConnectionLimits()) -> list[Listener]:
    """The server's two listeners on one app: plain http on ``port``, TLS on ``tls_port``.
    Both close idle and slow connections as ``limits`` say (``connections.py``)."""
    raise_open_files_limit()
    protocol = http_protocol(limits, app)

    def config(listen: int, **extra: str) -> uvicorn.Config:
        return uvicorn.Config(app, host=host, port=listen, log_level="warning", access_log=False, lifespan="off",
                              loop="asyncio", http=protocol, backlog=accept_backlog(),
                              timeout_keep_alive=limits.keep_alive,  # type: ignore[arg-type]  # a float works
                              **extra)  # type: ignore[arg-type]

    return [Listener(config(port)),
            Listener(config(tls_port, ssl_certfile=str(tls.cert_file), ssl_keyfile=str(tls.key_file)))]


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])
