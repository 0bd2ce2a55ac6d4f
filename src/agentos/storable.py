"""What JSON the database can store and every response can carry back.

JSON text may hold values that one of the two databases, or a JSON response, cannot
take: NaN and the infinities (not JSON at all), lone UTF-16 surrogates such as
``\\ud800`` (not UTF-8, so neither PostgreSQL nor a response can encode them) and NUL
characters (PostgreSQL's text and jsonb refuse them). Such a value is refused where it
enters: a request body answers 422, a node producing one fails its run. The database's
JSON serializer refuses them too, so nothing unstorable is ever written.

Nesting is capped at MAX_DEPTH levels: a document nested near Python's recursion limit
parses, but may not serialize again in a deeper call stack, which would break every list
that includes it.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import orjson

MAX_DEPTH = 100
"""Deepest nesting of lists and objects a stored value may have."""

_PLAIN = (bool, int, type(None))
# In a Python str every surrogate is a lone one: a pair would have been decoded to one character.
_UNSTORABLE_CHARS = re.compile("[\x00\ud800-\udfff]")
_SURROGATES = re.compile("[\ud800-\udfff]")
# What json.dumps(value, allow_nan=False, ensure_ascii=False) builds on every call, built once.
_ENCODER = json.JSONEncoder(allow_nan=False, ensure_ascii=False)
# orjson refuses lone surrogates, integers beyond 64 bits and keys that are not strings, as
# `problem` does or json.dumps would not; with these options also what json.dumps refuses
# (datetimes, dataclasses) and str/int/dict/list subclasses (json.dumps judges those).
_ORJSON_OPTIONS = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_SUBCLASS


def problem(value: Any, where: str = "") -> str | None:
    """Why `value` cannot be stored, naming the first bad place (`input.items[2]`); None if it can."""
    stack: list[tuple[Any, str, int]] = [(value, where, 0)]
    while stack:
        item, path, depth = stack.pop()
        if isinstance(item, str):
            reason = text_problem(item)
            if reason:
                return f"{path or 'value'} {reason}"
        elif isinstance(item, float):
            if not math.isfinite(item):
                return (
                    f"{path or 'value'} is {item!r} ({_number_name(item)}), which JSON cannot store; "
                    "use a finite number or null"
                )
        elif isinstance(item, dict | list | tuple):
            if depth >= MAX_DEPTH:
                return f"{_shown(path)} is nested more than {MAX_DEPTH} levels deep; flatten it"
            if isinstance(item, dict):
                for key, child in reversed(list(item.items())):
                    key = key if isinstance(key, str) else str(key)
                    reason = text_problem(key)
                    child_path = f"{path}.{key}" if path else key
                    if reason:
                        return f"key {child_path!r} {reason}"
                    stack.append((child, child_path, depth + 1))
            else:
                stack.extend((child, f"{path}[{i}]", depth + 1) for i, child in reversed(list(enumerate(item))))
        elif not isinstance(item, _PLAIN):
            return f"{path or 'value'} is a {type(item).__name__}, which is not JSON"
    return None


def text_problem(text: str) -> str | None:
    """Why a string cannot be stored (a NUL or a lone surrogate), or None."""
    found = _UNSTORABLE_CHARS.search(text)
    if found is None:
        return None
    if found.group() == "\x00":
        return "contains a NUL character (\\u0000), which cannot be stored; remove it"
    return (
        f"contains a lone surrogate ({found.group()!a}), which is not valid Unicode; "
        "send the character itself or a complete surrogate pair"
    )


def storable_text(text: str) -> str:
    """`text` with every NUL and lone surrogate replaced by U+FFFD, for error messages."""
    return _UNSTORABLE_CHARS.sub("\ufffd", text)


def _shown(path: str) -> str:
    """A path short enough for a message (a deep one repeats `[0]` hundreds of times)."""
    return path if len(path) <= 120 else f"{path[:60]}...{path[-40:]}"


def _number_name(value: float) -> str:
    return "not a number" if math.isnan(value) else "infinite"


def dumps(value: Any) -> str:
    """The database's JSON serializer: refuses what `problem` refuses.

    It serializes first and looks at the text, which is cheaper than walking the value:
    only a text that may hold a problem (an escaped NUL, a lone surrogate, more brackets
    than MAX_DEPTH, or no text at all) is walked by `problem` for the verdict and its reason.
    orjson serializes first (several times faster); it writes NaN and the infinities as
    `null`, so a text with a `null` (or anything else in doubt) goes the strict way.
    """
    try:
        fast = orjson.dumps(value, option=_ORJSON_OPTIONS).decode()
    except (TypeError, ValueError, RecursionError):  # orjson.JSONEncodeError is a TypeError
        fast = None
    if (
        fast is not None
        and "null" not in fast
        and "\\u0000" not in fast
        and fast.count("[") + fast.count("{") <= MAX_DEPTH
    ):
        return fast
    try:
        text: str | None = _ENCODER.encode(value)
    except (ValueError, TypeError, RecursionError):
        text = None
    if (
        text is None
        or "\\u0000" in text
        or _SURROGATES.search(text) is not None
        or text.count("[") + text.count("{") > MAX_DEPTH
    ):
        reason = problem(value)
        if reason:
            raise ValueError(f"cannot store JSON: {reason}")
        if text is None:
            text = _ENCODER.encode(value)
    return text
