"""JSON from the outside, read with a bound on nesting.

``json.loads`` raises ``RecursionError`` (not ``ValueError``) on a body nested a few
thousand deep, and a value nested just under Python's limit breaks whatever walks it
next (a trace dump, a pydantic model, a check). Every body, query value or cursor an
agent sends is read through ``loads`` here, which refuses such nesting with
``JsonTooDeep``, a ``ValueError``: each replica already answers a ``ValueError`` from
its JSON parsing with its vendor's "invalid JSON" error.
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


class JsonTooDeep(ValueError):
    """A JSON text nests arrays and objects deeper than allowed."""

    def __init__(self, max_depth: int) -> None:
        super().__init__(f"JSON nested deeper than {max_depth} levels")


def loads(data: bytes | bytearray | str, max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads(data)``, refusing nesting past ``max_depth`` with ``JsonTooDeep``."""
    check_depth(data, max_depth)
    try:
        return json.loads(data)
    except RecursionError as exc:  # only if max_depth was set near the recursion limit
        raise JsonTooDeep(max_depth) from exc


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
