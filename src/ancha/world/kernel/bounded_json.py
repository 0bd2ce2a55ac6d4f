"""JSON from the outside, read with a bound on nesting.

``json.loads`` raises ``RecursionError`` (not ``ValueError``) on a body nested a few
thousand deep, and a value nested just under Python's limit breaks whatever walks it
next (a trace dump, a pydantic model, a check). Every body, query value or cursor an
agent sends is read through ``loads`` here, which refuses such nesting with
``JsonTooDeep``, a ``ValueError``: each replica already answers a ``ValueError`` from
its JSON parsing with its vendor's "invalid JSON" error.

It refuses a lone surrogate the same way (``JsonLoneSurrogate``): ``"\\ud800"``, or a
surrogate's UTF-8 bytes, which ``json.loads`` reads into a ``str`` that no UTF-8 encoder
takes back. Stored, such a string broke every later answer that held it (the list it shows
up in, ``/state``). Strict parsers refuse it (RFC 8259 8.2 leaves it undefined; I-JSON,
RFC 7493 2.1, forbids it), and so do the replicas: the agent learns that its text is broken
instead of finding it changed. A surrogate pair (``"\\ud83d\\ude00"``, what ``json.dumps``
writes for an emoji) is one character and is taken.
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_DEPTH = 100
"""Arrays and objects nested deeper than this are refused. Real API bodies nest far less
(message blocks, dashboards: about 10); this stays well under Python's recursion
limit so that anything that later walks a value can."""

# A JSON string (skipped whole, escapes included) or a bracket; the unrolled loop keeps
# long strings linear.
_TOKENS_BYTES = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')
_TOKENS_TEXT = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')


# What may stand for a surrogate: a ``\uD800``-``\uDFFF`` escape (paired or not, and a
# false alarm behind an escaped backslash) or a surrogate's UTF-8 bytes (``json.loads`` reads
# bytes with "surrogatepass"). Only a text holding one is checked in full. Each pattern
# starts with a literal, which the regular expression engine finds fastest.
_ESCAPED_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")
_UTF8_SURROGATE = re.compile(rb"\xed[\xa0-\xbf]")
_ESCAPED_SURROGATE_TEXT = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE_TEXT = re.compile("[\ud800-\udfff]")


class JsonLoneSurrogate(ValueError):
    """A JSON text holds a surrogate code point outside a pair: it is not Unicode text."""

    def __init__(self) -> None:
        super().__init__("JSON text holds a lone surrogate (U+D800-U+DFFF outside a pair)")


class JsonTooDeep(ValueError):
    """A JSON text nests arrays and objects deeper than allowed."""

    def __init__(self, max_depth: int) -> None:
        super().__init__(f"JSON nested deeper than {max_depth} levels")


def loads(data: bytes | bytearray | str, max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads(data)``, refusing nesting past ``max_depth`` with ``JsonTooDeep`` and a
    lone surrogate with ``JsonLoneSurrogate``."""
    check_depth(data, max_depth)
    try:
        value = json.loads(data)
    except RecursionError as exc:  # only if max_depth was set near the recursion limit
        raise JsonTooDeep(max_depth) from exc
    if _may_hold_surrogates(data) and not _is_unicode(value):
        raise JsonLoneSurrogate()
    return value


def _may_hold_surrogates(data: bytes | bytearray | str) -> bool:
    if isinstance(data, str):
        return _ESCAPED_SURROGATE_TEXT.search(data) is not None or (
            not data.isascii() and _SURROGATE_TEXT.search(data) is not None)
    if data[:1] == b"\x00" or data[1:2] == b"\x00" or data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return True  # UTF-16 or UTF-32 (json.detect_encoding's cases): a surrogate is two bytes there
    return _ESCAPED_SURROGATE.search(data) is not None or (
        b"\xed" in data and _UTF8_SURROGATE.search(data) is not None)


def _is_unicode(value: Any) -> bool:
    """Whether every string in a parsed JSON value (keys included) encodes as UTF-8."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_depth(data: bytes | bytearray | str, max_depth: int = MAX_DEPTH) -> None:
    """Raise ``JsonTooDeep`` if ``data`` opens more than ``max_depth`` nested arrays or objects.

    Brackets inside strings do not count. Texts with fewer brackets than the bound (nearly
    every real body) are passed after two counts in C."""
    if isinstance(data, str):
        if data.count("[") + data.count("{") <= max_depth:
            return
        tokens = _TOKENS_TEXT.finditer(data)
        opening: tuple[Any, ...] = ("[", "{")
        closing: tuple[Any, ...] = ("]", "}")
    else:
        if data.count(b"[") + data.count(b"{") <= max_depth:
            return
        tokens = _TOKENS_BYTES.finditer(data)  # type: ignore[assignment]
        opening = (b"[", b"{")
        closing = (b"]", b"}")
    depth = 0
    for token in tokens:
        text = token.group()
        if text in opening:
            depth += 1
            if depth > max_depth:
                raise JsonTooDeep(max_depth)
        elif text in closing:
            depth -= 1
