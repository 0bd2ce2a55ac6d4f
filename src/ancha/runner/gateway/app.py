"""The model gateway: one local HTTP server per run that forwards an agent's model calls to
the allowed model hosts (``agent.execution.modelHosts``) and records each one in its trial.

A call reaches ``https://DOMAIN/PATH`` as ``{gateway}/t/TRIAL_KEY/DOMAIN/PATH``: the key
names the trial, so every call is counted where it belongs. The answer is passed on as the
provider sends it, chunk by chunk (a stream is never gathered first), while a
``UsageReader`` reads the model and the token counts on the side. The gateway runs on its
own thread and event loop, so that the runner's work never delays a model call.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import threading
import time
from collections.abc import Iterable, Mapping
from typing import Any

import httpx
import uvicorn

from ancha.results.run_folder import TrialFolder
from ancha.runner.gateway.trials import GatewayTrial, ModelCall
from ancha.runner.gateway.usage import UsageReader
from ancha.server.listener import Listener, event_loop_factory

Scope = dict[str, Any]
Message = dict[str, Any]

_HOP_BY_HOP = frozenset({b"connection", b"keep-alive", b"proxy-authenticate", b"proxy-authorization", b"te",
                         b"trailer", b"transfer-encoding", b"upgrade", b"proxy-connection"})
_NOT_FORWARDED = _HOP_BY_HOP | {b"host", b"content-length", b"accept-encoding"}
_READABLE_ENCODINGS = ("gzip", "deflate", "identity")
UPSTREAM_TIMEOUT = httpx.Timeout(connect=15.0, read=600.0, write=60.0, pool=60.0)
"""A model can think for minutes before its first byte; a host that does not connect is down."""
MAX_REQUEST_BODY = 64 * 1024 * 1024


def gateway_error(status: int, code: str, message: str) -> tuple[int, bytes]:
    """An error the gateway itself gives, shaped so both the OpenAI and the Anthropic SDKs
    show its message: ``{"type": "error", "error": {"type", "code", "message"}}``."""
    body = {"type": "error", "error": {"type": "ancha_gateway", "code": code, "message": message}}
    return status, json.dumps(body).encode()


class GatewayApp:
    """The gateway's ASGI app. ``upstreams`` maps a domain to the base URL it is reached at
    instead of ``https://DOMAIN`` (tests point it at local stand-ins)."""

    def __init__(self, hosts: Iterable[str], upstreams: Mapping[str, str] | None = None) -> None:
        self.hosts = list(dict.fromkeys(hosts))
        self.upstreams = {host: base.rstrip("/") for host, base in (upstreams or {}).items()}
        self.trials: dict[str, GatewayTrial] = {}
        self.upstream_transport: Upstream | None = None

    def upstream(self, host: str) -> str:
        return self.upstreams.get(host, f"https://{host}")

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        started = time.perf_counter()
        parts = scope.get("raw_path", scope["path"].encode()).split(b"/", 4)
        # "", "t", KEY, DOMAIN, PATH (with its query, when raw_path has none)
        if len(parts) < 4 or parts[0] != b"" or parts[1] != b"t":
            await _reply(send, *gateway_error(404, "not_found", "not a model gateway URL: use the base URLs "
                                              "Ancha sets (OPENAI_BASE_URL, ANTHROPIC_BASE_URL, "
                                              "OPENROUTER_BASE_URL, ANCHA_MODEL_URLS)"))
            return
        key, host = parts[2].decode("latin-1"), parts[3].decode("latin-1").lower()
        rest = b"/" + parts[4] if len(parts) > 4 else b"/"
        trial = self.trials.get(key)
        if trial is None:
            await _reply(send, *gateway_error(404, "unknown_trial", f"no running trial has the gateway key {key!r}: "
                                              "the trial has ended, or the URL was not one Ancha gave"))
            return
        if host not in trial.hosts:
            allowed = ", ".join(trial.hosts) or "none"
            await _reply(send, *gateway_error(403, "host_not_allowed", f"{host} is not in "
                                              f"agent.execution.modelHosts (allowed: {allowed}); add it there "
                                              "to let the agent call it"))
            return
        if trial.over_budget:
            await _reply(send, *gateway_error(402, "over_budget", trial.budget_reason().replace(
                "the agent was stopped", "no more model calls are forwarded")))
            return
        body = await _read_body(receive)
        if body is None:
            await _reply(send, *gateway_error(413, "too_large", "the request body is over 64 MiB"))
            return
        await self._forward(scope, send, trial, host, rest, body, started)

    async def _forward(self, scope: Scope, send: Any, trial: GatewayTrial, host: str, rest: bytes, body: bytes,
                       started: float) -> None:
        assert self.upstream_transport is not None
        requested = _request_fields(body)
        query = scope.get("query_string") or b""
        url = self.upstream(host) + rest.decode("latin-1") + ("?" + query.decode("latin-1") if query else "")
        headers = [(k, v) for k, v in scope["headers"] if k.lower() not in _NOT_FORWARDED]
        headers.append((b"accept-encoding", _accept_encoding(scope["headers"])))
        call = ModelCall(seq=trial.next_seq(), host=host, method=scope["method"], path=rest.decode("latin-1"),
                         status=0, stream=bool(requested.get("stream")), latency_ms=0.0,
                         requested_model=requested.get("model"))
        try:
            request = httpx.Request(scope["method"], url, headers=headers, content=body,
                                    extensions={"timeout": UPSTREAM_TIMEOUT.as_dict()})
            response = await self.upstream_transport.send(request)
        except (httpx.HTTPError, httpx.InvalidURL, ValueError) as exc:
            call.status, call.error = 502, f"{type(exc).__name__}: {exc}"
            call.latency_ms = (time.perf_counter() - started) * 1000
            trial.record(call)
            await _reply(send, *gateway_error(502, "upstream_unreachable",
                                              f"{self.upstream(host)} could not be reached: {call.error or 'no reason'}"))
            return
        call.status = response.status_code
        reader = UsageReader(response.headers.get("content-type", ""), response.headers.get("content-encoding", ""))
        call.stream = call.stream or reader.stream
        length = _content_length(response.headers)
        received, recorded = 0, False

        def record() -> None:
            # Before the answer's last byte leaves: once the agent holds the answer, the call
            # (and the trial's cost) is already counted.
            nonlocal recorded
            if not recorded:
                recorded = True
                call.usage = reader.finish()
                call.latency_ms = (time.perf_counter() - started) * 1000
                trial.record(call)

        try:
            await send({"type": "http.response.start", "status": response.status_code,
                        "headers": [(k, v) for k, v in response.headers.raw if k.lower() not in _HOP_BY_HOP]})
            async for chunk in response.aiter_raw():
                reader.feed(chunk)
                received += len(chunk)
                if reader.complete or (length is not None and received >= length):
                    record()
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            record()
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        except httpx.HTTPError as exc:  # the provider broke off: the agent sees its answer cut short
            call.error = f"the answer was cut short: {type(exc).__name__}: {exc}"
            record()
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        except OSError as exc:  # the agent went away (it was stopped, or gave up)
            call.error = f"the agent closed the connection: {exc}"
        finally:
            await response.aclose()
            record()


def _content_length(headers: httpx.Headers) -> int | None:
    try:
        return int(headers["content-length"])
    except (KeyError, ValueError):
        return None


class Upstream:
    """The providers' side: pooled connections, through ``HTTPS_PROXY`` when the shell sets one
    (hosts in ``NO_PROXY`` excepted). A transport, not a client: a client would keep the cookies
    a provider sets and send them on for every later trial; the gateway passes them to the agent."""

    def __init__(self, environ: Mapping[str, str]) -> None:
        limits = httpx.Limits(max_connections=None, max_keepalive_connections=64)
        self.direct = httpx.AsyncHTTPTransport(limits=limits)
        proxy = environ.get("HTTPS_PROXY") or environ.get("https_proxy")
        self.proxied = httpx.AsyncHTTPTransport(limits=limits, proxy=proxy) if proxy else None
        no_proxy = environ.get("NO_PROXY") or environ.get("no_proxy") or ""
        self.no_proxy = [h.strip().lstrip(".").lower() for h in no_proxy.split(",") if h.strip()]

    def _transport(self, url: httpx.URL) -> httpx.AsyncHTTPTransport:
        if self.proxied is None or url.scheme != "https" or "*" in self.no_proxy:
            return self.direct
        host = url.host.lower()
        if any(host == h or host.endswith("." + h) for h in self.no_proxy):
            return self.direct
        return self.proxied

    async def send(self, request: httpx.Request) -> httpx.Response:
        response = await self._transport(request.url).handle_async_request(request)
        response.request = request
        return response

    async def aclose(self) -> None:
        await self.direct.aclose()
        if self.proxied is not None:
            await self.proxied.aclose()


async def _read_body(receive: Any) -> bytes | None:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_REQUEST_BODY:
            return None
        chunks.append(chunk)
        if not message.get("more_body"):
            break
    return b"".join(chunks)


def _request_fields(body: bytes) -> dict[str, Any]:
    """``model`` and ``stream`` of a JSON request body; anything else reads as none."""
    if not body.lstrip().startswith(b"{"):
        return {}
    try:
        data = json.loads(body)
    except ValueError:
        return {}
    if not isinstance(data, dict):
        return {}
    model = data.get("model")
    return {"model": model if isinstance(model, str) else None, "stream": data.get("stream") is True}


def _accept_encoding(headers: list[tuple[bytes, bytes]]) -> bytes:
    """The agent's Accept-Encoding, kept to the encodings the usage reader can read."""
    for name, value in headers:
        if name.lower() == b"accept-encoding":
            kept = [t.strip() for t in value.decode("latin-1").split(",")
                    if t.split(";")[0].strip().lower() in _READABLE_ENCODINGS]
            return ", ".join(kept).encode() if kept else b"identity"
    return b"identity"


async def _reply(send: Any, status: int, body: bytes) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


class ModelGateway:
    """One run's gateway. ``start()`` serves it on its own thread; ``url`` is then its base URL.

    ``hosts``: the allowed domains (``modelHosts``). ``host``: the address it binds, 127.0.0.1
    unless a container must reach it at another; ``port``: 0 picks a free one.
    ``upstreams``: a domain's base URL instead of ``https://DOMAIN`` (for tests; not a setting).
    """

    def __init__(self, hosts: Iterable[str], *, host: str = "127.0.0.1", port: int = 0,
                 upstreams: Mapping[str, str] | None = None) -> None:
        self.app = GatewayApp(hosts, upstreams)
        # proto IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets that say so, and without
        # it a small answer waits out the client's delayed ACK (40 ms) on every call.
        self._socket = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM,
                                     socket.IPPROTO_TCP)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._socket.bind((host, port))
        self.host = host
        self.port = int(self._socket.getsockname()[1])
        self._server = Listener(uvicorn.Config(self.app, log_level="warning", access_log=False,
                                                     lifespan="off", loop="asyncio", timeout_keep_alive=30))
        self._thread = threading.Thread(target=self._serve, name="ancha-model-gateway", daemon=True)

    @property
    def hosts(self) -> list[str]:
        return self.app.hosts

    @property
    def url(self) -> str:
        return f"http://{f'[{self.host}]' if ':' in self.host else self.host}:{self.port}"

    def _serve(self) -> None:
        with asyncio.Runner(loop_factory=event_loop_factory()) as runner:
            runner.run(self._main())

    async def _main(self) -> None:
        self.app.upstream_transport = upstream = Upstream(os.environ)
        try:
            await self._server.serve(sockets=[self._socket])
        finally:
            await upstream.aclose()

    def start(self, timeout: float = 10.0) -> ModelGateway:
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the model gateway did not start on {self.url}")
            time.sleep(0.005)
        return self

    def stop(self) -> None:
        self._server.request_exit()
        self._thread.join(timeout=10)
        self._socket.close()

    def open_trial(self, folder: TrialFolder | None = None, budget_usd: float | None = None) -> GatewayTrial:
        """A new trial's prefix on the gateway; its calls go to ``folder``'s ``models.jsonl``."""
        trial = GatewayTrial(self.url, self.hosts, folder, budget_usd)
        self.app.trials[trial.key] = trial
        return trial

    def close_trial(self, trial: GatewayTrial) -> None:
        """Later calls with its key get a 404: the trial has ended."""
        self.app.trials.pop(trial.key, None)
        trial.close()

    def __enter__(self) -> ModelGateway:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
