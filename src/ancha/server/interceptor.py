"""One environment's vendor hostnames (``agent.hostnames: real``): a proxy and a TLS port.

An agent with real hostnames calls ``https://api.github.com/...``, never a base URL of
Ancha's. Each such environment gets two listening ports on the server's host:

- the **proxy** (``HTTPS_PROXY``): it answers ``CONNECT`` for a vendor's hostname by
  terminating TLS itself, with a certificate for that name minted on the fly
  (``minting``); a ``CONNECT`` to any other host is tunnelled untouched (host agents, whose
  machine has its internet) or refused with a reason (container agents);
- the **TLS port**: the same interception without a proxy, by the name the client asks for
  (SNI). A container agent's ``:443`` leads here, so a client that ignores proxy variables
  is intercepted too.

Behind the TLS both speak HTTP/1.1 through the server's own protocol (``tool_calls``), so a
call costs what a base-URL call costs plus the TLS: each request's ``Host`` picks the tool
and its path (``ToolSpec.real_hosts``), and the replica is told its vendor base URL
(``hostnames.REAL_BASE``), which every URL it hands out then uses. The trace records the
hostname the agent used.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from email.utils import formatdate
from typing import Any, Literal

import httpx
import uvicorn
from starlette.types import ASGIApp, Receive, Scope, Send
from uvicorn.server import ServerState

from ancha.server.connections import ConnectionLimits, accept_backlog
from ancha.server.gateway import INTERCEPTED, ToolGateway
from ancha.server.minting import Minter
from ancha.server.tool_calls import ToolCallProtocol
from ancha.world.environment import Environment
from ancha.world.kernel.hostnames import REAL_BASE, REAL_HOST, HostRoute

MAX_PROXY_HEAD = 16 * 1024
"""Bytes of a proxy request's head (``CONNECT host:443 HTTP/1.1`` and its headers)."""
HANDSHAKE_TIMEOUT_S = 30.0
TUNNEL_CONNECT_TIMEOUT_S = 15.0
CHUNK = 64 * 1024
Others = Literal["tunnel", "refuse"]


class HostnameSettingsError(ValueError):
    """``agent.hostnames`` in a ``POST /envs`` body that the server cannot use."""


@dataclass(frozen=True, slots=True)
class HostnameSettings:
    """What the runner asks of an environment's vendor hostnames (``agent.hostnames`` of ``POST /envs``)."""

    others: Others = "tunnel"
    """What the proxy does with a host that is no vendor's: ``tunnel`` it (host agents) or ``refuse`` it."""
    model_hosts: tuple[str, ...] = ()
    """The model providers' hostnames (``agent.execution.modelHosts``): intercepted like a vendor's,
    and sent on to the run's model gateway (``model_url``), never to the internet."""
    model_url: str | None = None
    """The trial's prefix on the model gateway (``http://HOST:PORT/t/KEY``)."""

    @classmethod
    def of(cls, agent: Mapping[str, Any] | None) -> HostnameSettings | None:
        """The settings in a ``POST /envs`` body's ``agent``; None for base URLs (``ancha``, the default)."""
        value = (agent or {}).get("hostnames")
        if value is None or value == "ancha":
            return None
        if value == "real":
            return cls()
        if not isinstance(value, dict) or value.get("mode") != "real":
            raise HostnameSettingsError(
                f"agent.hostnames must be 'ancha', 'real' or {{\"mode\": \"real\", \"others\": ...}}, got {value!r}")
        others = value.get("others", "tunnel")
        if others not in ("tunnel", "refuse"):
            raise HostnameSettingsError(f"agent.hostnames.others must be 'tunnel' or 'refuse', got {others!r}")
        model = value.get("model") or {}
        hosts = model.get("hosts", []) if isinstance(model, dict) else None
        url = model.get("url") if isinstance(model, dict) else None
        if (not isinstance(hosts, list) or not all(isinstance(h, str) and h for h in hosts)
                or (hosts and not (isinstance(url, str) and url.startswith(("http://", "https://"))))):
            raise HostnameSettingsError('agent.hostnames.model must be {"hosts": [hostname, ...], "url": '
                                        f'"http://gateway/t/KEY"}}, got {model!r}')
        return cls(others=others, model_hosts=tuple(h.lower() for h in hosts), model_url=url if hosts else None)


def host_routes(env: Environment) -> dict[str, tuple[str, HostRoute]]:
    """Every vendor hostname of ``env``'s tools: (tool, route) by lower-case name."""
    routes: dict[str, tuple[str, HostRoute]] = {}
    specs = env.registry.tools
    for name, tool in env.tools.items():
        real_hosts = specs[name].real_hosts
        if real_hosts is not None:
            for host, route in real_hosts(tool).items():
                routes[host.lower()] = (name, route)
    return routes


class Interceptor:
    """The proxy and TLS ports of one environment. ``open()`` on the server's event loop;
    ``close()`` when the environment goes."""

    def __init__(self, env: Environment, gateway: ToolGateway, minter: Minter, settings: HostnameSettings,
                 limits: ConnectionLimits = ConnectionLimits(),
                 addresses: Mapping[str, tuple[str, int]] | None = None) -> None:
        self.env = env
        self.addresses = dict(addresses or {})
        """Where a tunnelled host really is, by name, instead of what DNS says (tests map a made-up
        hostname to a local server this way; nothing of a test ever reaches the internet)."""
        self.settings = settings
        self.minter = minter
        self.routes = host_routes(env)
        self.models = frozenset(settings.model_hosts) - self.routes.keys()
        self.hosts = tuple(sorted({*self.routes, *self.models}))
        protocol = _intercepting_protocol(limits, gateway)
        app = ModelForward(gateway, settings.model_url) if self.models and settings.model_url else gateway
        self.forward = app if isinstance(app, ModelForward) else None
        self.config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off",
                                     http=protocol, timeout_keep_alive=limits.keep_alive)  # type: ignore[arg-type]
        self.config.load()
        self.state = ServerState()
        self._date_second = -1
        self._servers: list[asyncio.AbstractServer] = []
        self._tunnels: set[asyncio.Task[None]] = set()
        self.proxy_port = 0
        self.tls_port = 0
        self.host = ""

    async def open(self, host: str = "127.0.0.1") -> Interceptor:
        loop = asyncio.get_running_loop()
        tls = self.minter.server_context(self.hosts[0] if self.hosts else "localhost")
        secure = await loop.create_server(self._http, host, 0, ssl=tls, backlog=accept_backlog(),
                                          ssl_handshake_timeout=HANDSHAKE_TIMEOUT_S)
        proxy = await loop.create_server(lambda: _ProxyProtocol(self), host, 0, backlog=accept_backlog())
        self._servers = [secure, proxy]
        self.host = host
        self.tls_port = secure.sockets[0].getsockname()[1]
        self.proxy_port = proxy.sockets[0].getsockname()[1]
        return self

    def context(self) -> dict[str, Any]:
        """What the runner needs to point an agent here (``hostnames`` of the environment's context)."""
        hostport = f"{self.host}:{{}}" if ":" not in self.host else f"[{self.host}]:{{}}"
        return {"mode": "real", "hosts": list(self.hosts), "ca_pem": self.minter.ca_pem,
                "proxy": hostport.format(self.proxy_port), "tls": hostport.format(self.tls_port),
                "others": self.settings.others}

    async def close(self) -> None:
        if self.forward is not None:
            await self.forward.close()
        for server in self._servers:
            server.close()
        for task in list(self._tunnels):
            task.cancel()
        self._servers = []

    # --- HTTP behind the TLS -------------------------------------------------------------

    def _http(self) -> asyncio.Protocol:
        now = int(time.time())
        if now != self._date_second:  # uvicorn's default headers (date, server), as its own ticks keep them
            self._date_second = now
            self.state.default_headers = [(b"date", formatdate(now, usegmt=True).encode()),
                                          *self.config.encoded_headers]
        make: Any = self.config.http_protocol_class
        protocol: asyncio.Protocol = make(config=self.config, server_state=self.state, app_state={})
        protocol.interceptor = self  # type: ignore[attr-defined]
        return protocol

    def rewrite(self, url: bytes, headers: list[tuple[bytes, bytes]]) -> bytes | None:
        """The server's URL for an intercepted request (``/envs/ENV/TOOL/...``), with the
        real-hostname headers added to ``headers``; None when its ``Host`` is no vendor's."""
        host = next((value for key, value in headers if key == b"host"), b"").decode("latin-1").lower()
        name = host.partition("]")[0] + "]" if host.startswith("[") else host.partition(":")[0]
        name = name.rstrip(".")
        found = self.routes.get(name)
        if found is None:
            if name in self.models:  # a model provider's: on to the run's model gateway (ModelForward)
                return f"{MODEL_PREFIX}{name}".encode("latin-1") + url
            return None
        tool, route = found
        raw_path, mark, query = url.partition(b"?")
        path = route.tool_path(raw_path.decode("latin-1") or "/")
        headers[:] = [(k, v) for k, v in headers if k not in _REAL_HEADERS]
        headers += [(REAL_BASE.encode(), route.base.encode("latin-1")), (REAL_HOST.encode(), name.encode("latin-1")),
                    (b"x-forwarded-proto", b"https")]
        return f"/envs/{self.env.id}/{tool}{path}".encode("latin-1") + mark + query

    # --- the proxy ---------------------------------------------------------------------------

    async def proxy(self, head: bytes, early: bytes, transport: asyncio.Transport) -> None:
        """Answer one proxy request (its head, and what came after it) on ``transport``."""
        try:
            line = head.split(b"\r\n", 1)[0].decode("latin-1")
            method, target, _version = line.split(" ", 2)
        except ValueError:
            _answer(transport, 400, "Ancha's proxy: not an HTTP request line")
            return
        if method.upper() != "CONNECT":
            self._not_connect(method, target, transport)
            return
        host, port = _authority(target)
        if host is None:
            _answer(transport, 400, f"Ancha's proxy: CONNECT needs host:port, got {target!r}")
            return
        if host in self.routes or host in self.models:
            if port != 443:
                _answer(transport, 403, f"Ancha's proxy: {host} answers on port 443 only, not {port}")
                return
            if early:
                _answer(transport, 400, "Ancha's proxy: the client sent data before the tunnel was open")
                return
            await self._intercept(transport)
            return
        if self.settings.others == "refuse":
            _answer(transport, 403, self._refusal(host))
            return
        task = asyncio.ensure_future(self._tunnel(host, port, early, transport))
        self._tunnels.add(task)
        task.add_done_callback(self._tunnels.discard)

    def _refusal(self, host: str) -> str:
        return (f"Ancha's proxy: the agent reaches only its tools' vendor hostnames ({', '.join(self.hosts)}); "
                f"{host} is not one of them, and a container agent has no other network")

    def _not_connect(self, method: str, target: str, transport: asyncio.Transport) -> None:
        """A plain-http proxy request (``GET http://host/...``): vendors answer http with a
        redirect to https, and so does this; no other host is reached over plain http."""
        host = target.partition("://")[2].partition("/")[0].partition(":")[0].lower() if "://" in target else ""
        if host in self.routes:
            location = "https://" + target.partition("://")[2]
            _answer(transport, 301, f"use {location}", {"location": location})
        elif not host:
            _answer(transport, 400, "this is Ancha's proxy for the agent's vendor hostnames; send CONNECT host:443")
        elif self.settings.others == "refuse":
            _answer(transport, 403, self._refusal(host))
        else:
            _answer(transport, 501, f"Ancha's proxy tunnels other hosts over CONNECT only (https); {method} "
                                    f"{target} is plain http")

    async def _intercept(self, transport: asyncio.Transport) -> None:
        sock = _detach(transport)
        try:
            sock.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            loop = asyncio.get_running_loop()
            tls = self.minter.server_context(self.hosts[0])
            await loop.connect_accepted_socket(self._http, sock, ssl=tls, ssl_handshake_timeout=HANDSHAKE_TIMEOUT_S)
        except (TimeoutError, OSError, ConnectionError):
            sock.close()

    async def _tunnel(self, host: str, port: int, early: bytes, transport: asyncio.Transport) -> None:
        try:
            address = self.addresses.get(host, (host, port))
            upstream_r, upstream_w = await asyncio.wait_for(asyncio.open_connection(*address),
                                                            TUNNEL_CONNECT_TIMEOUT_S)
        except (TimeoutError, OSError) as exc:
            _answer(transport, 502, f"Ancha's proxy could not reach {host}:{port}: {exc or 'timed out'}")
            return
        sock = _detach(transport)
        try:
            client_r, client_w = await asyncio.open_connection(sock=sock)
            client_w.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            if early:
                upstream_w.write(early)
            await asyncio.gather(_pipe(client_r, upstream_w), _pipe(upstream_r, client_w))
        finally:
            for writer in (upstream_w,):
                writer.close()
            sock.close()


MODEL_PREFIX = "/_ancha/model/"
"""Where an intercepted model call goes on the interceptor's own app (``ModelForward``)."""


class ModelForward:
    """The interceptor's app when the trial has model hosts: a model call goes on to the run's
    model gateway (which counts it and holds the budget), answered chunk by chunk as it
    streams; anything else is the server's own app."""

    def __init__(self, app: ASGIApp, gateway_url: str) -> None:
        self.app = app
        self.gateway_url = gateway_url.rstrip("/")
        self.client = httpx.AsyncClient(timeout=httpx.Timeout(connect=15.0, read=600.0, write=60.0, pool=60.0))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path: str = scope.get("path", "")
        if scope["type"] != "http" or not path.startswith(MODEL_PREFIX):
            await self.app(scope, receive, send)
            return
        query = scope.get("query_string", b"").decode("latin-1")
        url = f"{self.gateway_url}/{path.removeprefix(MODEL_PREFIX)}" + (f"?{query}" if query else "")
        # The request's own length goes on with it (a body sent chunked instead is one some
        # gateways refuse); the answer's is the gateway's, recomputed as it streams.
        headers = [(k, v) for k, v in scope["headers"] if k.lower() not in _NOT_FORWARDED or k.lower() == b"content-length"]

        async def body() -> AsyncIterator[bytes]:
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    return
                yield message.get("body", b"")
                if not message.get("more_body", False):
                    return

        request = self.client.build_request(scope["method"], url, headers=headers, content=body())
        try:
            answer = await self.client.send(request, stream=True)
        except httpx.HTTPError as exc:
            text = f"Ancha could not reach the run's model gateway at {self.gateway_url}: {str(exc) or repr(exc)}".encode()
            await send({"type": "http.response.start", "status": 502,
                        "headers": [(b"content-type", b"text/plain; charset=utf-8")]})
            await send({"type": "http.response.body", "body": text})
            return
        try:
            await send({"type": "http.response.start", "status": answer.status_code,
                        "headers": [(k, v) for k, v in answer.headers.raw if k.lower() not in _NOT_FORWARDED]})
            async for chunk in answer.aiter_raw():
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b""})
        finally:
            await answer.aclose()

    async def close(self) -> None:
        await self.client.aclose()


_NOT_FORWARDED = frozenset({b"connection", b"keep-alive", b"proxy-authenticate", b"proxy-authorization", b"te",
                            b"trailer", b"transfer-encoding", b"upgrade", b"proxy-connection", b"host",
                            b"content-length"})
_REAL_HEADERS = frozenset({REAL_BASE.encode(), REAL_HOST.encode(), b"x-forwarded-proto"})


def _intercepting_protocol(limits: ConnectionLimits, gateway: ToolGateway) -> type[ToolCallProtocol]:
    class Intercepting(ToolCallProtocol):
        """The server's protocol on an intercepted connection: each request's ``Host`` names its tool."""

        read_timeout = limits.read_timeout
        max_head_bytes = limits.max_head_bytes
        intercepted = True
        interceptor: Interceptor

        def on_headers_complete(self) -> None:
            url = self.interceptor.rewrite(self.url, self.headers)
            if url is None:
                self._misdirected()
                return
            self.url = url
            super().on_headers_complete()
            if self._call is None and self.scope is not None:  # the ASGI path (the direct one knows it is intercepted)
                self.scope[INTERCEPTED] = True  # type: ignore[literal-required]

        def _misdirected(self) -> None:
            host = next((v.decode("latin-1") for k, v in self.headers if k == b"host"), "")
            body = (f"Ancha intercepts only the vendors' hostnames of this trial's tools "
                    f"({', '.join(self.interceptor.hosts)}); this request names {host or 'no host'}").encode()
            self.transport.write(b"HTTP/1.1 421 Misdirected Request\r\ncontent-type: text/plain; charset=utf-8\r\n"
                                 b"connection: close\r\ncontent-length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
            self.transport.close()

    Intercepting.gateway = gateway
    return Intercepting


class _ProxyProtocol(asyncio.Protocol):
    """Reads one proxy request's head, then hands the connection to ``Interceptor.proxy``."""

    def __init__(self, interceptor: Interceptor) -> None:
        self.interceptor = interceptor
        self.buffer = b""
        self.transport: asyncio.Transport | None = None
        self.task: asyncio.Task[None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # (uvloop's transports are no asyncio.Transport)

    def data_received(self, data: bytes) -> None:
        if self.task is not None or self.transport is None:
            return
        self.buffer += data
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0:
            if len(self.buffer) > MAX_PROXY_HEAD:
                _answer(self.transport, 431, "Ancha's proxy: request head too large")
            return
        self.transport.pause_reading()
        head, early = self.buffer[:end], self.buffer[end + 4:]
        self.buffer = b""
        self.task = asyncio.ensure_future(self.interceptor.proxy(head, early, self.transport))


def _authority(target: str) -> tuple[str | None, int]:
    if target.startswith("["):
        host, _, rest = target[1:].partition("]")
        port = rest.removeprefix(":")
    else:
        host, _, port = target.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        return None, 0
    return host.lower().rstrip("."), int(port)


def _answer(transport: asyncio.Transport, status: int, text: str, headers: Mapping[str, str] | None = None) -> None:
    reasons = {301: "Moved Permanently", 400: "Bad Request", 403: "Forbidden", 431: "Request Header Fields Too Large",
               501: "Not Implemented", 502: "Bad Gateway"}
    body = (text + "\n").encode()
    extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
    transport.write(f"HTTP/1.1 {status} {reasons.get(status, 'Error')}\r\ncontent-type: text/plain; charset=utf-8\r\n"
                    f"{extra}content-length: {len(body)}\r\nconnection: close\r\n\r\n".encode() + body)
    transport.close()


def _detach(transport: asyncio.Transport) -> socket.socket:
    """The connection's socket, taken from ``transport`` (which is closed without touching it)."""
    raw = transport.get_extra_info("socket")
    sock = socket.socket(fileno=os.dup(raw.fileno()))
    transport.abort()
    sock.setblocking(False)
    return sock


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(OSError, ConnectionError):
        while data := await reader.read(CHUNK):
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
