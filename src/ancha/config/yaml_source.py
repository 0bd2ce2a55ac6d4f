"""Reading a user's YAML with line numbers, and turning ruamel's node types into plain values."""

from __future__ import annotations

import datetime as dt
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from ancha.errors import Problem


def read_yaml(text: str, file: str | None = None) -> tuple[Any, list[Problem]]:
    """Parse ``text`` keeping line marks; a syntax error becomes a Problem, never an exception."""
    try:
        return YAML(typ="rt").load(text), []
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        what = exc.problem or exc.context or "invalid YAML"
        return None, [Problem("", f"not valid YAML: {what}", "check the indentation and quoting near this line",
                              line, file)]
    except (YAMLError, ValueError, TypeError, RecursionError) as exc:
        return None, [Problem("", f"not valid YAML: {exc}", "check the file's syntax", None, file)]


def key_line(node: Any, key: Any) -> int | None:
    """1-based line of ``key`` in a ruamel mapping, or of item ``key`` in a sequence."""
    try:
        if isinstance(node, CommentedMap):
            return int(node.lc.key(key)[0]) + 1
        if isinstance(node, CommentedSeq):
            return int(node.lc.item(key)[0]) + 1
    except (KeyError, IndexError, TypeError, AttributeError):
        return None
    return None


def node_line(node: Any) -> int | None:
    if isinstance(node, (CommentedMap, CommentedSeq)):
        try:
            return int(node.lc.line) + 1
        except (AttributeError, TypeError):
            return None
    return None


def plain(value: Any) -> Any:
    """ruamel's round-trip types (CommentedMap, ScalarFloat, TimeStamp...) as plain Python values."""
    if isinstance(value, dict):
        return {plain(k) if not isinstance(k, (dict, list)) else str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, dt.datetime):
        tz = value.tzinfo or dt.UTC
        return dt.datetime(value.year, value.month, value.day, value.hour, value.minute, value.second,
                           value.microsecond, tzinfo=tz)
    return value


def show(value: Any) -> str:
    """How a wrong value reads after 'got': ``0``, ``1.5``, ``'10'``, ``a mapping``."""
    value = plain(value)
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return repr(value if len(value) <= 60 else value[:57] + "...")
    if isinstance(value, (dt.datetime, dt.date)):
        return value.isoformat()
    return repr(value)
