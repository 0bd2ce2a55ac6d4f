"""Okta's list expressions: ``filter`` and ``search`` (SCIM-style), and ``q``.

``status eq "ACTIVE" and (profile.login sw "dana" or lastUpdated gt "2026-01-01T00:00:00.000Z")``:
attribute paths, the operators ``eq ne gt ge lt le sw co ew pr``, ``and``/``or``/``not``
and parentheses; values are double-quoted strings, numbers, ``true``/``false``/``null``.
String comparisons ignore case as Okta's do. ``filter`` allows only the attributes and
operators Okta's filter does (``eq`` on ids, statuses, logins..., ranges on timestamps);
``search`` allows any attribute. The System Log's ``filter`` allows any attribute too, and
its paths may cross arrays (``target.id``: any target's id, ``multi_getter``). A malformed or refused expression raises
``InvalidSearch`` (Okta's ``E0000031``), and so does one past the shared query bound
(``ancha.world.kernel.query_limits``: its length, or parentheses and ``not`` nested deeper
than its depth).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ancha.world.kernel.query_limits import MAX_QUERY_DEPTH, too_long
from ancha.world.tools.okta.errors import InvalidSearch

_TOKEN = re.compile(r'\s*(?:(\()|(\))|"((?:[^"\\]|\\.)*)"|([A-Za-z_][A-Za-z0-9_.]*)|(-?\d+(?:\.\d+)?))')
_OPERATORS = {"eq", "ne", "gt", "ge", "lt", "le", "sw", "co", "ew", "pr"}

Getter = Callable[[str], Any]
"""Resolves an attribute path (``profile.login``) on one record; None when absent."""
Matcher = Callable[[Getter], bool]


@dataclass(frozen=True, slots=True)
class Allowed:
    """What a ``filter`` may use: attribute -> operators (``search`` passes None: anything)."""

    attributes: dict[str, frozenset[str]]


USER_FILTER = Allowed({
    "status": frozenset({"eq"}),
    "id": frozenset({"eq"}),
    "profile.login": frozenset({"eq"}),
    "profile.email": frozenset({"eq"}),
    "profile.firstName": frozenset({"eq"}),
    "profile.lastName": frozenset({"eq"}),
    "type.id": frozenset({"eq"}),
    "lastUpdated": frozenset({"eq", "gt", "ge", "lt", "le"}),
    "created": frozenset({"eq", "gt", "ge", "lt", "le"}),
    "activated": frozenset({"eq", "gt", "ge", "lt", "le"}),
    "statusChanged": frozenset({"eq", "gt", "ge", "lt", "le"}),
})
GROUP_FILTER = Allowed({
    "id": frozenset({"eq"}),
    "type": frozenset({"eq"}),
    "lastUpdated": frozenset({"eq", "gt", "ge", "lt", "le"}),
    "lastMembershipUpdated": frozenset({"eq", "gt", "ge", "lt", "le"}),
    "created": frozenset({"eq", "gt", "ge", "lt", "le"}),
})


def _tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    position = 0
    text = text.rstrip()
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None or match.end() == position:
            raise InvalidSearch()
        position = match.end()
        opened, closed, quoted, word, number = match.groups()
        if opened:
            out.append(("(", "("))
        elif closed:
            out.append((")", ")"))
        elif quoted is not None:
            out.append(("str", re.sub(r"\\(.)", r"\1", quoted)))
        elif word is not None:
            out.append(("word", word))
        else:
            out.append(("num", number))
    return out


def _as_time(value: str) -> datetime | None:
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def _compare(op: str, actual: Any, expected: Any) -> bool:
    if op == "pr":
        return actual is not None and actual != ""
    if actual is None:
        return op == "eq" and expected is None or op == "ne" and expected is not None
    if isinstance(expected, str) and isinstance(actual, str):
        left_time, right_time = _as_time(actual), _as_time(expected)
        if op in ("gt", "ge", "lt", "le") and left_time is not None and right_time is not None:
            left: Any = left_time
            right: Any = right_time
        else:
            left, right = actual.casefold(), expected.casefold()
    else:
        left, right = actual, expected
    try:
        return {
            "eq": lambda: left == right, "ne": lambda: left != right,
            "gt": lambda: left > right, "ge": lambda: left >= right,
            "lt": lambda: left < right, "le": lambda: left <= right,
            "sw": lambda: isinstance(left, str) and left.startswith(right),
            "co": lambda: isinstance(left, str) and right in left,
            "ew": lambda: isinstance(left, str) and left.endswith(right),
        }[op]()
    except TypeError:
        return False


class _Parser:
    def __init__(self, text: str, allowed: Allowed | None) -> None:
        if not text.strip() or too_long(text):
            raise InvalidSearch()
        self.tokens = _tokens(text)
        self.at = 0
        self.depth = 0
        self.allowed = allowed

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        token = self.peek()
        if token is None:
            raise InvalidSearch()
        self.at += 1
        return token

    def keyword(self, word: str) -> bool:
        token = self.peek()
        if token is not None and token[0] == "word" and token[1].lower() == word:
            self.at += 1
            return True
        return False

    def parse(self) -> Matcher:
        matcher = self.disjunction()
        if self.peek() is not None:
            raise InvalidSearch()
        return matcher

    def disjunction(self) -> Matcher:
        parts = [self.conjunction()]
        while self.keyword("or"):
            parts.append(self.conjunction())
        return parts[0] if len(parts) == 1 else (lambda get: any(p(get) for p in parts))

    def conjunction(self) -> Matcher:
        parts = [self.unary()]
        while self.keyword("and"):
            parts.append(self.unary())
        return parts[0] if len(parts) == 1 else (lambda get: all(p(get) for p in parts))

    def nested(self) -> None:
        """One level deeper (a parenthesis or a ``not``); past the shared bound, refused."""
        self.depth += 1
        if self.depth > MAX_QUERY_DEPTH:
            raise InvalidSearch()

    def unary(self) -> Matcher:
        if self.allowed is None and self.keyword("not"):
            self.nested()
            inner = self.unary()
            self.depth -= 1
            return lambda get: not inner(get)
        token = self.take()
        if token[0] == "(":
            self.nested()
            inner = self.disjunction()
            self.depth -= 1
            if self.take()[0] != ")":
                raise InvalidSearch()
            return inner
        if token[0] != "word":
            raise InvalidSearch()
        return self.comparison(token[1])

    def comparison(self, attribute: str) -> Matcher:
        kind, op = self.take()
        op = op.lower()
        if kind != "word" or op not in _OPERATORS:
            raise InvalidSearch()
        if self.allowed is not None and op not in self.allowed.attributes.get(attribute, frozenset()):
            raise InvalidSearch()
        if op == "pr":
            return lambda get: _matches("pr", get(attribute), None)
        kind, raw = self.take()
        value: Any
        if kind == "str":
            value = raw
        elif kind == "num":
            value = float(raw) if "." in raw else int(raw)
        elif kind == "word" and raw.lower() in ("true", "false", "null"):
            value = {"true": True, "false": False, "null": None}[raw.lower()]
        else:
            raise InvalidSearch()
        return lambda get: _matches(op, get(attribute), value)


def _matches(op: str, actual: Any, expected: Any) -> bool:
    """A comparison; on a multi-valued attribute (a tuple), true when any value matches."""
    if isinstance(actual, tuple):
        return any(_compare(op, one, expected) for one in actual)
    return _compare(op, actual, expected)


def compile_expression(text: str, allowed: Allowed | None) -> Matcher:
    """A matcher for ``text``; ``allowed`` limits it as Okta's ``filter`` is (None: ``search``)."""
    return _Parser(text, allowed).parse()


def record_getter(record: dict[str, Any]) -> Getter:
    """Attribute paths over a record's wire JSON (``profile.login``, ``type.id``)."""

    def get(path: str) -> Any:
        value: Any = record
        for part in path.split("."):
            if not isinstance(value, dict):
                return None
            value = value.get(part)
        return value
    return get


def multi_getter(record: dict[str, Any]) -> Getter:
    """Attribute paths that may cross arrays (``target.id`` over a log event's ``target[]``):
    a path through an array answers every value found, as a tuple (any one may match)."""

    def get(path: str) -> Any:
        values: list[Any] = [record]
        crossed = False
        for part in path.split("."):
            found: list[Any] = []
            for value in values:
                if isinstance(value, list):
                    crossed = True
                    found.extend(item.get(part) for item in value if isinstance(item, dict))
                elif isinstance(value, dict):
                    found.append(value.get(part))
            values = found
        flat: list[Any] = []
        for value in values:
            if isinstance(value, list):
                crossed = True
                flat.extend(value)
            else:
                flat.append(value)
        if crossed:
            return tuple(flat)
        return flat[0] if flat else None
    return get
