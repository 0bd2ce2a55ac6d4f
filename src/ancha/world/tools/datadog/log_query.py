"""Datadog's log search syntax, compiled into a predicate plus index hints.

Supported: ``service:``, ``status:``, ``host:``, ``source:``, tags (``env:prod``),
``@attr.path:value`` (nested attributes), wildcards (``*``, ``?``) in values, numeric
comparisons and ranges on attributes (``@duration:>100``, ``@http.status_code:[500 TO 599]``),
free text and quoted phrases (case-insensitive, on the message), ``AND`` / ``OR`` / ``NOT``
/ ``-`` negation, implicit AND between terms, parentheses, and value groups
(``service:(orders OR payments)``). ``*`` alone matches everything.

``compile_query`` answers (matches, hints). ``hints`` are clauses every match satisfies,
each a tuple of exact (field, value) pairs (``service``, ``status``, ``host``) of which a
match has at least one: a term is a clause of one pair, an OR of branches that all have
clauses is the clause joining their first ones, a negated term is a negative clause. A search starts from the clause with the
fewest lines in the index and skips lines outside the other clauses before testing any.

A query longer than ``MAX_QUERY_LENGTH`` characters or nested deeper than ``MAX_QUERY_DEPTH``
(each parenthesis, ``NOT`` and ``-`` is a level) is a ``QuerySyntaxError`` (the shared bound
of ``ancha.world.kernel.query_limits``), so parsing and matching never recurse past it and
stay linear in the query.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable
from typing import Any

from ancha.world.kernel.query_limits import MAX_QUERY_DEPTH, TOO_DEEP, TOO_LONG, too_long

INDEXED = ("service", "status", "host")
STATUS_ALIASES = {"warning": "warn", "err": "error", "information": "info", "success": "ok"}


class QuerySyntaxError(ValueError):
    """The query cannot be parsed (Datadog answers 400)."""


class LogLine:
    """One log line as search sees it (plain attributes: the hot path reads them directly)."""

    __slots__ = ("at", "seq", "service", "status", "host", "message", "lower", "attributes", "tags", "ref", "_id",
                 "_words")

    def __init__(self, at: float, seq: int, service: str, status: str, host: str | None, message: str,
                 attributes: dict[str, Any], tags: list[str], ref: str | None = None) -> None:
        self.at = at
        self.seq = seq
        self.service = service
        self.status = normal_status(status)
        self.host = host
        self.message = message
        self.lower = message.lower()
        self.attributes = attributes
        self.tags = tags
        self.ref = ref
        self._id: str | None = None
        self._words: list[str] | None = None

    @property
    def words(self) -> list[str]:
        """The message's words as free text is searched by, split once per line (not once per term)."""
        if self._words is None:
            self._words = words_of(self.lower)
        return self._words

    @property
    def key(self) -> tuple[float, int]:
        return (self.at, self.seq)


def normal_status(status: str) -> str:
    low = (status or "info").lower()
    return STATUS_ALIASES.get(low, low)


Match = Callable[[LogLine], bool]
Clause = tuple[tuple[str, str], ...]
"""Exact (field, value) pairs; a match has at least one of them. A clause of one pair whose
field starts with ``NOT`` (``("!status", "info")``) says a match does not have that value."""
NOT = "!"
WORD = "word"
"""The field of a hint on a word of the message (free text)."""
_WORD = re.compile(r"\w+")
_SHORT_PHRASE = 4
"""Phrases of up to this many words match by one regex search (fast on short lines)."""
Hints = list[Clause]
"""Clauses every match satisfies (all of them)."""
_TOKEN = re.compile(r'\s*(?:(\()|(\))|("(?:[^"\\]|\\.)*")|((?:[^\s()"\\]|\\.)+(?:"(?:[^"\\]|\\.)*")?))')


def _tokens(text: str) -> list[str]:
    out: list[str] = []
    pos = 0
    text = text.strip()
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None or match.end() == pos:
            raise QuerySyntaxError(f"unexpected character at {pos}: {text[pos:pos + 10]!r}")
        out.append(next(g for g in match.groups() if g is not None))
        pos = match.end()
        while pos < len(text) and text[pos].isspace():
            pos += 1
    return out


def _unquote(token: str) -> tuple[str, bool]:
    if len(token) >= 2 and token[0] == '"' and token[-1] == '"':
        return re.sub(r"\\(.)", r"\1", token[1:-1]), True
    return re.sub(r"\\(.)", r"\1", token), False


def _lookup(attributes: dict[str, Any], path: str) -> Any:
    value: Any = attributes
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            flat = attributes.get(path) if isinstance(attributes, dict) else None
            return flat
        value = value[part]
    return value


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _value_test(raw: str, quoted: bool, lower: bool = True) -> Callable[[Any], bool]:
    """How one written value matches an actual one (wildcards, numbers, comparisons, ranges)."""
    if not quoted:
        for op in (">=", "<=", ">", "<"):
            if raw.startswith(op) and _number(raw[len(op):]) is not None:
                return _comparison(op, float(raw[len(op):]))
        if raw.startswith("[") and raw.endswith("]") and " TO " in raw:
            lo_text, _, hi_text = raw[1:-1].partition(" TO ")
            lo, hi = _number(lo_text.strip()), _number(hi_text.strip())
            if lo is None or hi is None:
                raise QuerySyntaxError(f"invalid range {raw}")
            low, high = lo, hi
            return lambda v: (n := _num(v)) is not None and low <= n <= high
    wanted = raw.lower() if lower else raw
    if not quoted and ("*" in raw or "?" in raw):
        pattern = re.compile(fnmatch.translate(wanted), re.S)
        return lambda v: v is not None and pattern.match(_text(v, lower)) is not None
    return lambda v: v is not None and _text(v, lower) == wanted


def _comparison(op: str, limit: float) -> Callable[[Any], bool]:
    def test(value: Any) -> bool:
        number = _num(value)
        if number is None:
            return False
        return {">=": number >= limit, "<=": number <= limit, ">": number > limit, "<": number < limit}[op]
    return test


def _num(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    return _number(value) if isinstance(value, str) else None


def _text(value: Any, lower: bool) -> str:
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, float) and value.is_integer():
        text = str(int(value))
    else:
        text = str(value)
    return text.lower() if lower else text


def _field_match(field: str, raw: str, quoted: bool) -> Match:
    if field.startswith("@"):
        path = field[1:]
        test = _value_test(raw, quoted)

        def attribute(line: LogLine) -> bool:
            value = _lookup(line.attributes, path)
            if isinstance(value, list):
                return any(test(v) for v in value)
            return test(value)
        return attribute
    if field == "status":
        raw = raw if "*" in raw else normal_status(raw)
        test = _value_test(raw, quoted)
        return lambda line: test(line.status)
    if field == "service":
        test = _value_test(raw, quoted)
        return lambda line: test(line.service)
    if field == "host":
        test = _value_test(raw, quoted)
        return lambda line: test(line.host)
    if field == "message":
        return _text_match(raw, quoted)
    # A tag (env:prod), or a reserved attribute kept among the attributes (source, trace_id).
    tag_test = _value_test(f"{field}:{raw}", quoted)
    attr_test = _value_test(raw, quoted)
    return lambda line: any(tag_test(t) for t in line.tags) or attr_test(line.attributes.get(field))


def words_of(text: str) -> list[str]:
    """The words Datadog searches free text by (case-insensitive, split at anything not a word)."""
    return _WORD.findall(text.lower())


def _text_match(raw: str, quoted: bool) -> Match:
    """Free text on the message, by words as Datadog searches it: ``hello`` matches the word
    (not ``helloworld``), a sequence ``"hello world"`` those words in a row, ``hel*`` a word
    starting so."""
    needle = raw.lower()
    if raw == "*":
        return lambda line: True
    if not quoted and ("*" in raw or "?" in raw):
        pattern = re.compile(fnmatch.translate(needle))
        return lambda line: any(pattern.match(word) for word in line.words)
    words = words_of(needle)
    if not words:  # only punctuation: nothing to split, look for it as written
        return lambda line: needle in line.lower
    if len(words) > _SHORT_PHRASE:
        # The regex tries the whole sequence at every word of the line (line x words); as
        # words joined by one space, it is a substring search, linear in both.
        joined = f" {' '.join(words)} "
        return lambda line: joined in f" {' '.join(line.words)} "
    sequence = re.compile(r"(?<!\w)" + r"\W+".join(map(re.escape, words)) + r"(?!\w)")
    return lambda line: sequence.search(line.lower) is not None


def _text_hints(raw: str, quoted: bool) -> Hints:
    """Every word of a free-text term is in a matching line (none for wildcards)."""
    if raw == "*" or (not quoted and ("*" in raw or "?" in raw)):
        return []
    return [((WORD, word),) for word in dict.fromkeys(words_of(raw))]


WILDCARD_COST = 4
"""What a wildcard term costs against one line, in plain term tests (it tries each word of the line)."""


class CompiledQuery:
    """A query's predicate, and what testing one line costs at most (in plain term tests: a
    wildcard term counts ``WILDCARD_COST``)."""

    __slots__ = ("cost", "test")

    def __init__(self, test: Match, cost: int) -> None:
        self.test = test
        self.cost = cost

    def __call__(self, line: LogLine) -> bool:
        return self.test(line)


class _Parser:
    def __init__(self, tokens: list[str]) -> None:
        self.tokens = tokens
        self.pos = 0
        self.depth = 0
        self.cost = 0

    def charge(self, raw: str) -> None:
        self.cost += WILDCARD_COST if "*" in raw or "?" in raw else 1

    def peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self) -> str:
        token = self.tokens[self.pos]
        self.pos += 1
        return token

    def expr(self) -> tuple[Match, Hints]:
        parts = [self.conjunction()]
        while self.peek() == "OR":
            self.take()
            parts.append(self.conjunction())
        if len(parts) == 1:
            return parts[0]
        tests = [p[0] for p in parts]
        # A line matching the OR matches some branch, hence that branch's first clause: the
        # union of those clauses narrows the candidates (when every branch has one).
        firsts = [next((c for c in p[1] if not c[0][0].startswith(NOT)), None) for p in parts]
        union = tuple(pair for c in firsts for pair in c) if all(firsts) else ()  # type: ignore[union-attr]
        return (lambda line: any(t(line) for t in tests)), [union] if union else []

    def conjunction(self) -> tuple[Match, Hints]:
        parts = [self.unary()]
        while self.peek() not in (None, ")", "OR"):
            if self.peek() == "AND":
                self.take()
            parts.append(self.unary())
        if len(parts) == 1:
            return parts[0]
        tests = [p[0] for p in parts]
        hints = list(dict.fromkeys(h for p in parts for h in p[1]))  # a repeated term narrows nothing more
        return (lambda line: all(t(line) for t in tests)), hints

    def nested(self) -> None:
        """One level deeper (a parenthesis or a negation); past the shared bound, refused."""
        self.depth += 1
        if self.depth > MAX_QUERY_DEPTH:
            raise QuerySyntaxError(TOO_DEEP)

    def unary(self) -> tuple[Match, Hints]:
        token = self.peek()
        if token is None:
            raise QuerySyntaxError("the query ends where a term was expected")
        if token == "NOT" or (token.startswith("-") and len(token) > 1):
            if token == "NOT":
                self.take()
            else:
                self.tokens[self.pos] = token[1:]
            self.nested()
            inner, inner_hints = self.unary()
            self.depth -= 1
            # NOT of one exact indexed value: lines in its posting list can be skipped unseen.
            negated: Hints = [((NOT + inner_hints[0][0][0], inner_hints[0][0][1]),)] \
                if len(inner_hints) == 1 and len(inner_hints[0]) == 1 else []
            return (lambda line: not inner(line)), negated
        if token == "(":
            self.take()
            self.nested()
            found = self.expr()
            self.depth -= 1
            if self.peek() != ")":
                raise QuerySyntaxError("missing )")
            self.take()
            return found
        if token in (")", "AND", "OR"):
            raise QuerySyntaxError(f"unexpected {token}")
        return self.term(self.take())

    def term(self, token: str) -> tuple[Match, Hints]:
        self.charge(token)
        field, sep, rest = token.partition(":")
        if not sep or token.startswith('"') or not field:
            raw, quoted = _unquote(token)
            return _text_match(raw, quoted), _text_hints(raw, quoted)
        if rest == "":
            if self.peek() != "(":
                raise QuerySyntaxError(f"{field}: needs a value")
            self.take()
            values: list[Match] = []
            while self.peek() not in (None, ")"):
                word = self.take()
                if word in ("OR", "AND"):
                    continue
                raw, quoted = _unquote(word)
                self.charge(raw)
                values.append(_field_match(field, raw, quoted))
            if self.peek() != ")":
                raise QuerySyntaxError("missing )")
            self.take()
            return (lambda line: any(v(line) for v in values)), []  # (values may hold wildcards)
        if rest.startswith("[") and not rest.endswith("]"):
            # A range written with spaces: @x:[1 TO 5]
            while self.peek() is not None and not rest.endswith("]"):
                rest += " " + self.take()
        raw, quoted = _unquote(rest)
        hints: Hints = []
        if field in INDEXED and "*" not in raw and "?" not in raw:
            hints = [((field, normal_status(raw) if field == "status" else raw.lower()),)]
        return _field_match(field, raw, quoted), hints


def compile_query(text: str | None) -> tuple[CompiledQuery, Hints]:
    """The query's predicate and its exact-value index hints; ``QuerySyntaxError`` if invalid."""
    if text is not None and too_long(text):
        raise QuerySyntaxError(TOO_LONG)
    if text is None or not text.strip() or text.strip() == "*":
        return CompiledQuery(lambda line: True, 0), []
    parser = _Parser(_tokens(text))
    match, hints = parser.expr()
    if parser.peek() is not None:
        raise QuerySyntaxError(f"unexpected {parser.peek()}")
    return CompiledQuery(match, parser.cost), hints
