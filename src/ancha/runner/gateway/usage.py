"""Reading a model call's model and token usage from the bytes the provider sent back.

One reader covers the shapes in use: OpenAI chat completions (``usage.prompt_tokens``,
``completion_tokens``; streamed, the last chunk when ``stream_options.include_usage``),
OpenAI responses (``usage.input_tokens``; streamed, ``response.completed``), Anthropic
messages (``usage.input_tokens`` and cache counts; streamed, ``message_start`` then
``message_delta``) and OpenRouter (OpenAI's shape plus ``usage.cost``; streamed, a final
usage chunk). The reader is fed the response as it passes and never holds a stream
whole: it keeps only the line being parsed.

Every number is the provider's word, and a provider (or whatever answers in its place) can
send anything. A count is taken only as an integer from 0 to ``MAX_TOKENS`` and a cost only
as a finite number from 0 to ``CALL_USD_CEILING``; ``null`` reads as absent. Anything else
in a usage, or a usage that cannot be parsed at all, makes the whole usage untrusted
(``Usage.untrusted`` says why), and the call is then counted at its model's worst case.
"""

from __future__ import annotations

import json
import math
import zlib
from dataclasses import dataclass
from typing import Any

from ancha.runner.gateway.prices import CALL_USD_CEILING

MAX_TOKENS = 10_000_000
"""The most tokens one count of a usage may say: the largest context window published
(Llama 4 Scout's 10M); a count above it is not trusted."""
_MAX_DIGITS = 30
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
    untrusted: str | None = None
    """Why the answer's usage is not taken at its word (the first thing found wrong), or None."""

    @property
    def known(self) -> bool:
        return self.input_tokens is not None or self.output_tokens is not None


class _HugeInt:
    """An integer literal with more digits than any count may have, kept unparsed: Python
    refuses to parse one of 4,300 digits or more, and needs no more than its length."""

    def __init__(self, digits: str) -> None:
        self.digits = len(digits.lstrip("-"))


def _parse_int(text: str) -> int | _HugeInt:
    return int(text) if len(text) <= _MAX_DIGITS else _HugeInt(text)


def _loads(data: bytes) -> Any:
    return json.loads(data, parse_int=_parse_int)


def _shown(value: Any) -> str:
    """A short account of a value that was refused, never the value itself when long."""
    if isinstance(value, _HugeInt):
        return f"an integer of {value.digits} digits"
    if isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, int):
        return f"an integer of {len(str(abs(value)))} digits" if abs(value) >= 10**12 else str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        return f"a string of {len(value)} characters"
    if isinstance(value, dict):
        return "an object"
    return "an array" if isinstance(value, list) else type(value).__name__


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
        self._json_body = "json" in content_type.lower()
        self._skipping = False
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
            if self._json_body:
                self._distrust(f"the answer is over {MAX_JSON_BODY} bytes of JSON, too large to read its usage")

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
            if self._skipping:  # the rest of a line too long to read
                self._skipping = False
                self._unread(line)
            elif line.startswith(b"data:") and self._may_count(line):
                self._json(line[5:].strip())
        if len(self._buffer) > MAX_SSE_LINE:  # one line this long is no usage event: let it go
            self._unread(bytes(self._buffer))
            self._buffer.clear()
            self._skipping = True

    def _unread(self, part: bytes) -> None:
        """Part of an event too long to read: if it held a usage, that usage is unknown."""
        if b'"usage"' in part:
            self._distrust(f"an event of the stream holding a usage is over {MAX_SSE_LINE} bytes")

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
            event = _loads(data)
        except (ValueError, RecursionError) as exc:
            if b'"usage"' in data:
                self._distrust(f"an answer holding a usage is not valid JSON ({type(exc).__name__})")
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
        elif usage is not None:
            self._distrust(f"usage is {_shown(usage)}, not an object")

    def _distrust(self, reason: str) -> None:
        if self.usage.untrusted is None:
            self.usage.untrusted = reason

    def _count(self, data: Any, name: str, where: str = "usage") -> int | None:
        """``data[name]`` as a token count, None when absent; anything but a count from 0 to
        ``MAX_TOKENS`` makes the usage untrusted."""
        value = data.get(name) if isinstance(data, dict) else None
        if value is None:
            return None
        if isinstance(value, float) and value.is_integer():
            value = int(value)  # 1000.0 is a count, written oddly
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_TOKENS:
            return value
        self._distrust(f"{where}.{name} is {_shown(value)}, not a token count from 0 to {MAX_TOKENS:,}")
        return None

    def _details(self, usage: dict[str, Any], name: str) -> dict[str, Any] | None:
        details = usage.get(name)
        if details is not None and not isinstance(details, dict):
            self._distrust(f"usage.{name} is {_shown(details)}, not an object")
        return details if isinstance(details, dict) else None

    def _usage(self, usage: dict[str, Any]) -> None:
        u = self.usage
        prompt = self._count(usage, "prompt_tokens")
        completion = self._count(usage, "completion_tokens")
        fresh = self._count(usage, "input_tokens")
        out = self._count(usage, "output_tokens")
        reads = self._count(usage, "cache_read_input_tokens")
        writes = self._count(usage, "cache_creation_input_tokens")
        chat_cached = self._count(self._details(usage, "prompt_tokens_details"), "cached_tokens",
                                  "usage.prompt_tokens_details")
        responses_cached = self._count(self._details(usage, "input_tokens_details"), "cached_tokens",
                                       "usage.input_tokens_details")
        if prompt is not None:  # OpenAI chat completions and OpenRouter: prompt_tokens counts cached ones
            u.input_tokens = prompt
            u.output_tokens = completion or 0
            u.cached_input_tokens = chat_cached or 0
        elif "input_tokens" in usage or "output_tokens" in usage:
            if reads is not None or writes is not None:
                # Anthropic: input_tokens leaves out the cache's tokens; count them in, priced apart.
                u.cached_input_tokens = reads or 0
                u.cache_write_tokens = writes or 0
                u.input_tokens = (fresh or 0) + (reads or 0) + (writes or 0)
            elif fresh is not None:
                u.input_tokens = fresh
                u.cached_input_tokens = responses_cached or 0  # OpenAI responses API
            if out is not None:  # Anthropic's message_delta carries the running total
                u.output_tokens = out
        cost = usage.get("cost")
        if cost is None:
            return
        if (isinstance(cost, int | float) and not isinstance(cost, bool) and math.isfinite(cost)
                and 0 <= cost <= CALL_USD_CEILING):
            u.provider_cost_usd = float(cost)
        else:
            self._distrust(f"usage.cost is {_shown(cost)}, not a cost from 0 to {CALL_USD_CEILING:g} US dollars")
