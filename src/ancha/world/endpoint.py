"""Delivering the agent's events to an endpoint agent over HTTP, as each vendor does.

Every event the feed gets from a tool that has a ``WebhookForm`` (its ToolSpec's
``webhook``) is POSTed to ``agent.url`` with ``{{service}}`` filled in, with the exact body
the feed carries and the vendor's headers and signature. An attempt that is not answered
2xx within the vendor's deadline is retried on the vendor's schedule (in simulated time,
so a retry minutes later is a due item the clock can jump to). Every attempt, the
handshake included, is a trace entry of actor ``world``: ``method`` POST, ``path`` the URL,
``query`` ``delivery=ID&attempt=N`` (and ``reason=`` on a retry), ``status`` the agent's
answer (0 when there was none) and both bodies. Of any answer, only its first
``ANSWER_READ_MAX`` bytes are read (``read_answer``), within the vendor's deadline.

The clock: while an attempt is in flight, or an event waits to be sent, the agent is busy;
when none is and the agent has no request open to a tool, it waits and the clock may jump.
"""

from __future__ import annotations

import asyncio
import json
import logging
import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import httpx

from ancha.world.kernel.webhook import Attempt, WebhookForm

if TYPE_CHECKING:
    from ancha.world.environment import Environment
    from ancha.world.kernel.tool import Tool

log = logging.getLogger(__name__)

ANSWER_READ_MAX = 64 * 1024
"""Bytes read of any answer of an endpoint agent (readiness, setup, handshake, each delivery).
What the caller needs of an answer is its status, its headers and a short body; the rest is
never read, and the connection is closed, so a server answering 100 MB costs 64 KiB."""
RESPONSE_KEPT = ANSWER_READ_MAX
"""Bytes of an agent's answer kept in the trace."""


@dataclass(frozen=True, slots=True)
class Answer:
    """An endpoint agent's answer, read up to a cap."""

    status: int
    headers: httpx.Headers
    body: bytes
    """At most the cap's bytes (inflated, at most as many, when the server compressed them)."""

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")


async def read_answer(http: httpx.AsyncClient, method: str, url: str, *, timeout: float,
                      limit: int = ANSWER_READ_MAX, **request: Any) -> Answer:
    """One request to an endpoint agent, its answer read to ``limit`` bytes at most, the whole
    exchange within ``timeout`` seconds (an answer that trickles in is a timeout too). Raises
    ``httpx.HTTPError`` (``httpx.TimeoutException`` for the deadline)."""

    async def exchange() -> Answer:
        async with http.stream(method, url, timeout=timeout, **request) as response:
            raw = bytearray()
            async for chunk in response.aiter_raw():
                raw += chunk[:limit - len(raw)]
                if len(raw) >= limit:
                    break  # leaving the stream unread closes its connection
            body = _inflated(bytes(raw), response.headers.get("content-encoding", ""), limit)
            return Answer(response.status_code, response.headers, body)

    try:
        return await asyncio.wait_for(exchange(), timeout)
    except TimeoutError as exc:
        raise httpx.ReadTimeout(f"no whole answer within {timeout:g}s") from exc


def _inflated(raw: bytes, encoding: str, limit: int) -> bytes:
    """A compressed answer's first ``limit`` bytes, never more however well it compresses."""
    if encoding.strip().lower() not in ("gzip", "x-gzip", "deflate"):
        return raw
    try:
        return zlib.decompressobj(wbits=47).decompress(raw, limit)  # 47: a gzip or a zlib header
    except zlib.error:
        return raw


class EndpointRefused(RuntimeError):
    """The agent failed a handshake: events cannot be delivered to it."""


def body_of(event: dict[str, Any]) -> bytes:
    """The bytes a vendor sends for a feed event: its payload as compact JSON."""
    return json.dumps(event["payload"], ensure_ascii=False, separators=(",", ":")).encode()


class EndpointDelivery:
    """The HTTP deliveries of one environment to its endpoint agent."""

    def __init__(self, env: Environment, url: str, http: httpx.AsyncClient | None = None) -> None:
        self.env = env
        self.url = url
        """``agent.url`` with every placeholder but ``{{service}}`` filled in."""
        self._http = http or httpx.AsyncClient(follow_redirects=False)
        self._cursor = 0
        self.sending = 0
        """Attempts in flight, or due and about to be made."""
        self._tasks: set[asyncio.Task[None]] = set()
        self._wake: asyncio.Event | None = None
        self._runner: asyncio.Task[None] | None = None
        self.stopped = False

    # --- the clock --------------------------------------------------------------------

    @property
    def quiet(self) -> bool:
        """Nothing to send and nothing in flight: the agent is not busy with a delivery."""
        return self._runner is not None and self.sending == 0 and self._cursor >= len(self.env.feed.events)

    def wake(self) -> None:
        if self._wake is not None:
            self._wake.set()

    # --- lifecycle --------------------------------------------------------------------

    async def start(self, startup_timeout: float) -> None:
        """Make every handshake (within ``startup_timeout`` real seconds), then deliver."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + startup_timeout
        for service, tool, form in self._forms():
            if form.handshake is None:
                continue
            shake = form.handshake(tool)
            remaining = max(0.1, deadline - loop.time())
            attempt = Attempt(self._delivery_id())
            body = json.dumps(shake.payload, separators=(",", ":")).encode()
            status, text, failure = await self._post(service, body, form.headers(tool, {"payload": shake.payload},
                                                                                  body, attempt), remaining, attempt)
            if failure is not None or not 200 <= status < 300:
                why = failure or f"it answered {status}"
                raise EndpointRefused(f"{shake.name} to {self.url_for(service)} failed: {why}")
            if not _echoes(text, shake.expect, shake.field):
                raise EndpointRefused(f"{shake.name} to {self.url_for(service)} failed: the answer did not "
                                      f"echo the challenge (got {text[:200]!r})")
        self._wake = asyncio.Event()
        self._runner = loop.create_task(self._run(), name=f"endpoint-{self.env.id}")
        self.env.endpoint_changed()

    def stop(self) -> None:
        self.stopped = True
        for task in [self._runner, *self._tasks]:
            if task is not None and not task.done():
                task.cancel()
        http = self._http
        try:
            asyncio.get_running_loop().create_task(http.aclose())
        except RuntimeError:
            pass

    # --- delivering -------------------------------------------------------------------

    def url_for(self, service: str) -> str:
        return self.url.replace("{{service}}", service).replace("{{ service }}", service)

    def _forms(self) -> list[tuple[str, Tool, WebhookForm]]:
        specs = self.env.registry.tools
        found = []
        for name, tool in self.env.tools.items():
            form = getattr(specs[name], "webhook", None)
            if form is not None:
                found.append((name, tool, form))
        return found

    def _delivery_id(self) -> str:
        hexits = self.env.random_hex(32)
        return f"{hexits[:8]}-{hexits[8:12]}-{hexits[12:16]}-{hexits[16:20]}-{hexits[20:]}"

    async def _run(self) -> None:
        assert self._wake is not None
        env = self.env
        while not self.stopped:
            self._wake.clear()
            while self._cursor < len(env.feed.events):
                event = env.feed.events[self._cursor]
                self._cursor += 1
                service = str(event.get("service"))
                spec = env.registry.tools.get(service)
                form = getattr(spec, "webhook", None) if spec is not None else None
                tool = env.tools.get(service)
                if form is None or tool is None:
                    continue
                self.sending += 1  # busy from this moment, before the task runs
                task = asyncio.get_running_loop().create_task(self._deliver(service, tool, form, event))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
            env.endpoint_changed()
            if env.status != "running" and self._cursor >= len(env.feed.events):
                return
            await self._wake.wait()

    async def _deliver(self, service: str, tool: Tool, form: WebhookForm, event: dict[str, Any]) -> None:
        """One event: attempts until one is answered 2xx or the vendor gives up. ``sending``
        counts this delivery while an attempt is in flight or due."""
        body = body_of(event)
        attempt = Attempt(self._delivery_id())
        try:
            while True:
                status, _, failure = await self._post(service, body, form.headers(tool, event, body, attempt),
                                                      form.timeout_s, attempt)
                if failure is None and 200 <= status < 300:
                    return
                if attempt.number >= len(form.retries_after_s) or failure == "no_retry" or self.stopped:
                    return
                if failure is None and not form.retried(status):
                    return  # an answer the vendor takes as final (a 4xx, for some vendors)
                reason = failure if failure in ("http_timeout", "connection_failed") else "http_error"
                delay = form.retries_after_s[attempt.number]
                attempt = Attempt(attempt.delivery, attempt.number + 1, reason)
                if delay > 0:
                    await self._later(delay)
        finally:
            self.sending -= 1
            self.env.endpoint_changed()

    async def _later(self, delay: float) -> None:
        """Wait ``delay`` simulated seconds, not busy meanwhile (the clock may jump to it)."""
        env = self.env
        due: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def fire() -> None:
            self.sending += 1  # busy again before the waiting task resumes
            if not due.done():
                due.set_result(None)

        self.sending -= 1
        env.endpoint_changed()
        env.schedule(env.clock.now() + delay, fire, label="endpoint retry")
        try:
            await due
        except asyncio.CancelledError:
            self.sending += 1  # the finally of _deliver counts it down once
            raise

    async def _post(self, service: str, body: bytes, headers: dict[str, str], timeout: float,
                    attempt: Attempt) -> tuple[int, str, str | None]:
        """One POST, traced: (status, answer text, failure) with failure ``http_timeout``,
        ``connection_failed``, ``no_retry`` or None."""
        url = self.url_for(service)
        status, answer, failure = 0, b"", None
        try:
            response = await read_answer(self._http, "POST", url, timeout=timeout, content=body, headers=headers,
                                         limit=RESPONSE_KEPT)
            status, answer = response.status, response.body
            form = getattr(self.env.registry.tools.get(service), "webhook", None)
            if (not 200 <= status < 300 and form is not None and form.no_retry_header
                    and response.headers.get(form.no_retry_header) == "1"):
                failure = "no_retry"
        except httpx.TimeoutException:
            failure = "http_timeout"
        except httpx.HTTPError as exc:
            failure = "connection_failed"
            answer = f"{type(exc).__name__}: {exc}".encode()
        query = f"delivery={attempt.delivery}&attempt={attempt.number}"
        if attempt.reason:
            query += f"&reason={attempt.reason}"
        self.env.trace.append(at=self.env.clock.now(), actor="world", tool=service, method="POST", path=url,
                              query=query, status=status, request=body, response=answer,
                              worked=failure is None and 200 <= status < 300, coverage_gap=False,
                              request_type=headers.get("Content-Type", "application/json"))
        return status, answer.decode("utf-8", "replace"), failure


def _echoes(text: str, expect: str, field: str) -> bool:
    if text.strip() == expect:
        return True
    try:
        data = json.loads(text)
    except ValueError:
        return False
    return isinstance(data, dict) and data.get(field) == expect
