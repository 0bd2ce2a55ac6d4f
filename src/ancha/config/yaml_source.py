"""Reading a user's YAML with line numbers, and turning ruamel's node types into plain values.

Aliases are bounded: a file whose aliases would expand into more than
``MAX_ALIAS_NODES`` extra nodes (a "billion laughs" file), or that nests deeper than
``MAX_DEPTH``, is refused before anything walks the tree, since every later step
(validation, ``plain``) expands each alias in full.

A double-quoted scalar may escape any code point, surrogates included (``"\\ud800"``; ruamel
does not even join a ``"\\ud83d\\ude00"`` pair). Such a string is no Unicode text: nothing
that holds it can be written out as UTF-8 (a world's state, a run's files), so it is refused
with its line.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.composer import MaxDepthExceededError
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from ancha.errors import Problem

MAX_ALIAS_NODES = 10_000
"""Nodes that aliases may add to a file by expansion (``*name`` repeats its anchor's whole value)."""
MAX_DEPTH = 100
"""Nesting of mappings and lists a file may have."""

_SURROGATE_ESCAPE = re.compile(r"\\(?:u|U0000)[dD][89a-fA-F]")
"""What may escape a surrogate: only a file holding one has its scalars checked."""
_SURROGATE = re.compile("[\ud800-\udfff]")


def read_yaml(text: str, file: str | None = None) -> tuple[Any, list[Problem]]:
    """Parse ``text`` keeping line marks; a syntax error, an alias bomb or a too deep nesting
    becomes a Problem, never an exception or a hang."""
    yaml = YAML(typ="rt")
    yaml.max_depth = MAX_DEPTH
    try:
        constructor, parser = yaml.get_constructor_parser(text)
        try:
            node = constructor.composer.get_single_node()
            if node is None:
                return None, []
            problem = _alias_problem(node, file)
            if problem is None and _SURROGATE_ESCAPE.search(text) is not None:
                problem = _surrogate_problem(node, file)
            if problem is not None:
                return None, [problem]
            return constructor.construct_document(node), []
        finally:
            parser.dispose()
    except MaxDepthExceededError as exc:
        line = exc.problem_mark.line + 1 if exc.problem_mark is not None else None
        return None, [Problem("", f"nested more than {MAX_DEPTH} deep", "flatten the lists and mappings",
                              line, file)]
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        what = exc.problem or exc.context or "invalid YAML"
        return None, [Problem("", f"not valid YAML: {what}", "check the indentation and quoting near this line",
                              line, file)]
    except (YAMLError, ValueError, TypeError, RecursionError) as exc:
        return None, [Problem("", f"not valid YAML: {exc}", "check the file's syntax", None, file)]


def _alias_problem(root: Node, file: str | None) -> Problem | None:
    """A Problem when aliases refer to their own anchor or expand past ``MAX_ALIAS_NODES``."""
    expanded: dict[int, int] = {}
    """id(node) -> its node count with every alias expanded."""
    distinct: set[int] = set()
    open_nodes: set[int] = set()
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        children = _children(node)
        if done:
            open_nodes.discard(key)
            expanded[key] = 1 + sum(expanded[id(child)] for child in children)
            if expanded[key] - len(distinct) > MAX_ALIAS_NODES:
                return _too_many(node, file)
            continue
        if key in expanded:
            continue
        if key in open_nodes:
            return Problem("", "an alias refers to the value it is part of", "remove the recursive alias",
                           node.start_mark.line + 1, file)
        distinct.add(key)
        open_nodes.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in children if id(child) not in expanded)
    return None


def _surrogate_problem(root: Node, file: str | None) -> Problem | None:
    """A Problem at the first scalar (key or value) holding a surrogate code point."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, ScalarNode) and isinstance(node.value, str) and _SURROGATE.search(node.value):
            return Problem("", "not Unicode text: a surrogate escape (U+D800 to U+DFFF)",
                           "write the character itself, or escape it by its code point: \\U0001F600, "
                           "not the UTF-16 pair \\ud83d\\ude00", node.start_mark.line + 1, file)
        stack.extend(reversed(_children(node)))
    return None


def _children(node: Node) -> list[Node]:
    if isinstance(node, SequenceNode):
        return list(node.value)
    if isinstance(node, MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def _too_many(node: Node, file: str | None) -> Problem:
    return Problem("", f"aliases expand to more than {MAX_ALIAS_NODES:,} values",
                   "write the values out, or use fewer aliases (*name repeats its anchor's whole value)",
                   node.start_mark.line + 1, file)


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
