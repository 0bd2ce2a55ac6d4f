"""Tool calls answered on the connection, without an ASGI task.

An agent's call to a replica (``/envs/ENV/TOOL/...``) is answered synchronously by its
environment (``Environment.dispatch``), so the ASGI machinery around it is pure overhead:
uvicorn makes a task, an event, a scope and two ``send`` messages per request and writes
the head and the body as two packets. On one keep-alive connection that was a third of a
``chat.postMessage``. Here the connection's protocol answers such a call itself, as soon as
its body is in: one dispatch, one write of head and body together.

The answer is written between the two halves of ``Environment.dispatch``: ``answer`` (the
tool's reply and its changes to the world), then ``account`` (the trace entry, and the
world's reactions: people hearing the message). The caller reads its answer while the
server does the bookkeeping, yet nothing else reaches the environment in between, since
both halves run in one callback of the event loop; on one connection that took a quarter
off each call's round trip.

Only the plain case goes this way: a tool's URL, a body with a declared length within the
tool's limit (or none) and no ``Content-Encoding``, no ``Expect: 100-continue``, no upgrade,
no earlier request still being answered on the connection, and a transport that is not
backed up. Everything else (chunked bodies, oversized or compressed ones, pipelined requests
behind a slow one, WebSockets, the control API) takes the ASGI path through ``ToolGateway``,
which answers the same calls the same way. The answer's bytes are those uvicorn would
write: its status line, its default headers (``date``, ``server``), then the tool's.
"""

from __future__ import annotations

import logging
import urllib.parse
from dataclasses import dataclass, field
from typing import Any

from uvicorn.protocols.http.httptools_impl import (
    HEADER_RE,
    HEADER_VALUE_RE,
    STATUS_LINE,
    HttpToolsProtocol,
)

from ancha.server.connections import ConnectionLimits, DeadlineProtocol
from ancha.server.gateway import ToolGateway, response_headers
from ancha.world.environment import Environment
from ancha.world.kernel.hostnames import REAL_BASE, REAL_HOST
from ancha.world.kernel.tool import ToolRequest, ToolResponse

_log = logging.getLogger("uvicorn.error")

_SERVER_ERROR = (b"content-type: text/plain; charset=utf-8\r\ncontent-length: 21\r\nconnection: close\r\n\r\n"
                 b"Internal Server Error")


@dataclass(slots=True)
class _Call:
    """A tool call whose head is in and whose body is arriving."""

    env: Environment
    tool: str
    path: str
    query: str
    method: str
    keep_alive: bool
    body: list[bytes] = field(default_factory=list)


class ToolCallProtocol(DeadlineProtocol):
    """``DeadlineProtocol`` that answers plain tool calls itself (see the module's docstring)."""

    gateway: ToolGateway | None = None
    intercepted = False
    """A vendor hostname's connection (``interceptor``): only its requests keep the real-hostname headers."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._call: _Call | None = None
        self._direct = self.gateway is not None and not self.root_path and self.limit_concurrency is None

    def on_message_begin(self) -> None:
        # uvicorn's, less the ASGI scope: it is made only for a request that takes the ASGI path.
        self._unset_keepalive_if_required()  # (a request pipelined behind one answered here)
        self._head_bytes = 0
        self.url = b""
        self.expect_100_continue = False
        self.headers = []

    def on_headers_complete(self) -> None:
        call = self._direct_call() if self._direct else None
        if call is None:
            url, headers, expect = self.url, self.headers, self.expect_100_continue
            HttpToolsProtocol.on_message_begin(self)  # the scope, as uvicorn makes it
            self.url, self.expect_100_continue = url, expect
            self.headers = self.scope["headers"] = headers
            super().on_headers_complete()
            return
        self._call = call
        # An agent request in flight keeps the clock from jumping, from its head on (as on the ASGI path).
        call.env.request_started()

    def on_body(self, body: bytes) -> None:
        if self._call is not None:
            self._call.body.append(body)
        else:
            super().on_body(body)

    def on_message_complete(self) -> None:
        call = self._call
        if call is None:
            super().on_message_complete()
            return
        self._call = None
        self._waiting_since = None
        self._answer(call)

    def connection_lost(self, exc: Exception | None) -> None:
        call, self._call = self._call, None
        if call is not None:  # gone before its body was in: no call to trace
            call.env.request_finished()
        super().connection_lost(exc)

    # --- the direct path --------------------------------------------------------------------

    def _direct_call(self) -> _Call | None:
        """The request as a direct tool call, or None when it takes the ASGI path."""
        url = self.url
        if not url.startswith(b"/envs/") or self.expect_100_continue or self.pipeline or self.flow.write_paused:
            return None
        if self.cycle is not None and not self.cycle.response_complete:
            return None  # an earlier request is still being answered: keep the answers in order
        parser = self.parser
        if parser.should_upgrade():
            return None
        length = 0
        for name, value in self.headers:
            if name == b"content-length":
                if not value.isdigit():
                    return None
                length = int(value)
            elif name in (b"transfer-encoding", b"content-encoding"):
                return None  # (a compressed body is decoded off the loop, on the ASGI path)
        raw_path, _, query = url.partition(b"?")  # an origin-form URL: path, query (and no fragment)
        if not raw_path.isascii() or b"#" in url:
            return None
        path = raw_path.decode("ascii")
        if "%" in path:
            path = urllib.parse.unquote(path)
        target = self.gateway.target(path) if self.gateway is not None else None
        if target is None:
            return None
        env, tool, below = target
        if length > env.registry.tools[tool].max_body:
            return None  # the ASGI path answers it as too large
        version = parser.get_http_version()
        return _Call(env, tool, below, query.decode("latin-1"), parser.get_method().decode("ascii"),
                     version != "1.0" and parser.should_keep_alive())

    def _answer(self, call: _Call) -> None:
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in self.headers}
        if self.scheme == "https":  # the replicas' self links keep the scheme the call came in on
            headers.setdefault("x-forwarded-proto", "https")
        if not self.intercepted and REAL_BASE in headers:  # only the interceptor says a call came by a vendor's name
            del headers[REAL_BASE]
            headers.pop(REAL_HOST, None)
        request = ToolRequest(call.method, call.path, call.query, headers, b"".join(call.body))
        env = call.env
        try:
            answer = env.answer(call.tool, request, from_agent=True)
        except Exception as exc:  # as uvicorn does for an app's exception: log it, answer 500, close
            env.request_finished()
            _log.error("Exception in ASGI application\n", exc_info=exc)
            self._write_head_and_close(500, _SERVER_ERROR)
            return
        head = self._head(answer, call)
        if head is not None:
            # The answer goes out before the call is traced and the world reacts to it: the
            # caller reads it meanwhile. Nothing else reaches the environment in between.
            self.transport.write(head if call.method == "HEAD" else head + answer.body)
        try:
            env.account(call.tool, request, answer)
        except Exception as exc:  # a bug: the caller has its answer already; say what went wrong here
            _log.error("Exception while tracing a call to %s %s\n", call.tool, call.path, exc_info=exc)
        finally:
            env.request_finished()
        if head is not None:
            if not call.keep_alive:
                self.transport.close()
            self.on_response_complete()

    def _head(self, answer: ToolResponse, call: _Call) -> bytes | None:
        """The status line and headers, as uvicorn writes them; None when a header is not
        sendable (logged, and the connection closed, as uvicorn does)."""
        if not answer.headers:  # the usual answer: a content type and a length, nothing else
            type_line = _content_type_line(answer.content_type)
            if type_line is not None:
                return b"".join((STATUS_LINE[answer.status], self._default_lines(), type_line, b"content-length: ",
                                 str(len(answer.body)).encode(), b"\r\n\r\n" if call.keep_alive else
                                 b"\r\nconnection: close\r\n\r\n"))
        content = [STATUS_LINE[answer.status], self._default_lines()]
        closing = False
        try:
            headers = response_headers(answer)
            # uvicorn's checks, on all names at once and all values at once (a tab, which a
            # value may hold, between them): a tenth of the cost for a vendor's twenty headers.
            if HEADER_RE.search(b"".join(name for name, _ in headers)) or HEADER_VALUE_RE.search(
                    b"\t".join(value for _, value in headers)):
                raise ValueError(f"Invalid HTTP header in {headers!r:.300}")
            for name, value in headers:
                if name == b"connection" and b"close" in [token.lower().strip() for token in value.split(b",")]:
                    call.keep_alive = False
                    closing = True
                content += [name, b": ", value, b"\r\n"]
        except ValueError as exc:  # (UnicodeEncodeError included: a header outside latin-1)
            _log.error("Exception in ASGI application\n", exc_info=exc)
            self.transport.close()
            return None
        if not call.keep_alive and not closing:
            content.append(b"connection: close\r\n")
        content.append(b"\r\n")
        return b"".join(content)

    def _write_head_and_close(self, status: int, rest: bytes) -> None:
        self.transport.write(b"".join((STATUS_LINE[status], self._default_lines(), rest)))
        self.transport.close()

    def _default_lines(self) -> bytes:
        """uvicorn's default headers (``server``, ``date``) as header lines: made again only
        when uvicorn renews them (the date, once a second)."""
        defaults = self.server_state.default_headers
        cached = _DEFAULT_LINES[0]
        if cached[0] is not defaults:  # uvicorn replaces the list when it renews the date
            cached = _DEFAULT_LINES[0] = (defaults, b"".join(name + b": " + value + b"\r\n" for name, value in defaults))
        return cached[1]


_DEFAULT_LINES: list[tuple[object, bytes]] = [(None, b"")]
"""uvicorn's default header list last seen, and its lines (one slot, shared by a process's listeners)."""


_TYPE_LINES: dict[str, bytes | None] = {}


def _content_type_line(content_type: str) -> bytes | None:
    """``content-type: ...`` as a header line (remembered for the few types replicas answer
    with); None for an answer without one or with one that needs uvicorn's checks."""
    line = _TYPE_LINES.get(content_type)
    if line is None and content_type not in _TYPE_LINES:
        try:
            value = content_type.encode("latin-1")
        except UnicodeEncodeError:
            return None
        line = None if not value or HEADER_VALUE_RE.search(value) else b"content-type: " + value + b"\r\n"
        if len(_TYPE_LINES) < 64:
            _TYPE_LINES[content_type] = line
    return line


def http_protocol(limits: ConnectionLimits, gateway: ToolGateway | None = None) -> type[HttpToolsProtocol]:
    """uvicorn's ``http`` protocol class for a server with these limits, answering plain calls
    to ``gateway``'s tools directly."""

    class Protocol(ToolCallProtocol):
        read_timeout = limits.read_timeout
        max_head_bytes = limits.max_head_bytes
        open_connections: dict[DeadlineProtocol, None] = {}  # noqa: RUF012  (shared by both listeners, by design)

    Protocol.gateway = gateway
    return Protocol
