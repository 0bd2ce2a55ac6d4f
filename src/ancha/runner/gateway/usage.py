"""Reading a model call's model and token usage from the bytes the provider sent back.

One reader covers the shapes in use: OpenAI chat completions (``usage.prompt_tokens``,
``completion_tokens``; streamed, the last chunk when ``stream_options.include_usage``),
OpenAI responses (``usage.input_tokens``; streamed, ``response.completed``), Anthropic
messages (``usage.input_tokens`` and cache counts; streamed, ``message_start`` then
``message_delta``) and OpenRouter (OpenAI's shape plus ``usage.cost``; streamed, a final
usage chunk). The reader is fed the response as it passes and never holds a stream
whole: it keeps only the line being parsed.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass
from typing import Any

MAX_JSON_BODY = 16 * 1024 * 1024
"""A non-streamed answer larger than this is passed on but not read for usage."""
MAX_SSE_LINE = 4 * 1024 * 1024


@dataclass
class Usage:
    model: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_input_tokens: int = 0
    cache_write_tokens: int = 0
    provider_cost_usd: float | None = None
    """The cost the provider itself reported (OpenRouter's ``usage.cost``)."""

    @property
    def known(self) -> bool:
        return self.input_tokens is not None or self.output_tokens is not None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


class UsageReader:
    """Feed it the response body's bytes (``feed``), then ``finish()`` for the usage.
    ``content_type`` and ``content_encoding`` are the response's headers."""

    def __init__(self, content_type: str, content_encoding: str = "") -> None:
        self.usage = Usage()
        self.stream = "text/event-stream" in content_type.lower()
        encoding = content_encoding.lower().strip()
        self._inflate = (zlib.decompressobj(16 + zlib.MAX_WBITS) if encoding == "gzip"
                         else zlib.decompressobj() if encoding == "deflate" else None)
        self._readable = encoding in ("", "identity", "gzip", "deflate")
        self._buffer = bytearray()
        self._too_big = False
        self.complete = False
        """A stream's last event has passed (``[DONE]``, ``message_stop``, ``response.completed``)."""

    def feed(self, chunk: bytes) -> None:
        if not self._readable or self._too_big:
            return
        if self._inflate is not None:
            try:
                chunk = self._inflate.decompress(chunk)
            except zlib.error:
                self._readable = False
                return
        self._buffer += chunk
        if self.stream:
            self._lines()
        elif len(self._buffer) > MAX_JSON_BODY:
            self._too_big = True
            self._buffer.clear()

    def finish(self) -> Usage:
        if self._readable and not self._too_big:
            if self.stream:
                self._buffer += b"\n"
                self._lines()
            else:
                self._json(bytes(self._buffer))
        self._buffer.clear()
        return self.usage

    def _lines(self) -> None:
        while (end := self._buffer.find(b"\n")) >= 0:
            line = bytes(self._buffer[:end]).rstrip(b"\r")
            del self._buffer[:end + 1]
            if line.startswith(b"data:") and self._may_count(line):
                self._json(line[5:].strip())
        if len(self._buffer) > MAX_SSE_LINE:  # one line this long is no usage event: let it go
            self._buffer.clear()

    def _may_count(self, line: bytes) -> bool:
        """Whether an event can hold what the reader wants: the model (until known), usage, the
        end. Most events of a stream are text deltas, and parsing each would cost more than
        passing it on."""
        return (self.usage.model is None or b'"usage"' in line or b"[DONE]" in line or b"_stop" in line
                or b'"response.' in line)

    def _json(self, data: bytes) -> None:
        if data == b"[DONE]":
            self.complete = True
        if not data or self.complete:
            return
        try:
            event = json.loads(data)
        except ValueError:
            return
        if isinstance(event, dict):
            self._event(event)

    def _event(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind in ("message_stop", "response.completed", "response.incomplete", "response.failed"):
            self.complete = True
        if kind == "message_start" and isinstance(event.get("message"), dict):
            event = event["message"]  # Anthropic: the model and the input usage come first
        elif kind in ("response.completed", "response.incomplete", "response.failed") and isinstance(
                event.get("response"), dict):
            event = event["response"]  # OpenAI responses API, streamed
        if isinstance(event.get("model"), str) and event["model"]:
            self.usage.model = event["model"]
        usage = event.get("usage")
        if isinstance(usage, dict):
            self._usage(usage)

    def _usage(self, usage: dict[str, Any]) -> None:
        u = self.usage
        prompt = _int(usage.get("prompt_tokens"))
        if prompt is not None:  # OpenAI chat completions and OpenRouter: prompt_tokens counts cached ones
            u.input_tokens = prompt
            u.output_tokens = _int(usage.get("completion_tokens")) or 0
            details = usage.get("prompt_tokens_details")
            if isinstance(details, dict):
                u.cached_input_tokens = _int(details.get("cached_tokens")) or 0
        elif "input_tokens" in usage or "output_tokens" in usage:
            reads = _int(usage.get("cache_read_input_tokens"))
            writes = _int(usage.get("cache_creation_input_tokens"))
            fresh = _int(usage.get("input_tokens"))
            if reads is not None or writes is not None:
                # Anthropic: input_tokens leaves out the cache's tokens; count them in, priced apart.
                u.cached_input_tokens = reads or 0
                u.cache_write_tokens = writes or 0
                u.input_tokens = (fresh or 0) + (reads or 0) + (writes or 0)
            elif fresh is not None:
                u.input_tokens = fresh
                details = usage.get("input_tokens_details")  # OpenAI responses API
                if isinstance(details, dict):
                    u.cached_input_tokens = _int(details.get("cached_tokens")) or 0
            out = _int(usage.get("output_tokens"))
            if out is not None:  # Anthropic's message_delta carries the running total
                u.output_tokens = out
        cost = usage.get("cost")
        if isinstance(cost, int | float) and not isinstance(cost, bool) and cost >= 0:
            u.provider_cost_usd = float(cost)
