"""Predicates, milestones, message selectors and process-record values, resolved.

Process checks, ``before``/``within`` milestones and world-rule conditions share these:
a predicate is exactly one of a call pattern, a message selector, a process record
(``decided``/``knows``/``told``/``revealed``), a state check body, or ``all``/``any``/``not``
of predicates. Refs come out bare; people by key; facts as ``person.fact``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from ancha.config.validation import INVALID, FileModel, Walker, join
from ancha.durations import parse_duration
from ancha.scene.model import MessageCheck, MessageSelector, Predicate, StateBody, Within
from ancha.scene.people import People, option_hint
from ancha.scene.refs import RefTable, parse_pointer
from ancha.scene.sections import BodyKind, Catalog, body_json
from ancha.scene.sources import Source

CALL_PATTERN = re.compile(r"^(\*|(?:[A-Za-z]+|\*) [/*]\S*)$")
"""``*``, or a method (letters, or ``*`` for any) and a path: ``/...``, or ``*`` for any path
(``"DELETE *"``), as ``ancha.world.call_patterns`` compiles them."""
CALL_PATTERN_HINT = ('a pattern is "<METHOD> <PATH>" such as "POST /api/chat.postMessage" or "DELETE *" '
                     '(METHOD letters or *; * in the path matches any run of characters), or "*"')


def call_pattern_problem(pattern: str) -> tuple[str, str] | None:
    """(problem, hint) when ``pattern`` is not a call pattern; None when it is."""
    if CALL_PATTERN.match(pattern):
        if "?" in pattern:
            path = pattern.split("?", 1)[0]
            return (f"a pattern matches the path only, not the query string: got {pattern!r}",
                    f'patterns match paths only (the query is not part of a call\'s path); write "{path}"')
        return None
    return f'expected a pattern such as "POST /api/chat.postMessage" or "*", got {pattern!r}', CALL_PATTERN_HINT


_GENERIC = ("called", "message", "decided", "knows", "told", "revealed")
_COMBINERS = ("all", "any", "not")
PLACE_KINDS = ("channel", "issue", "pull")
"""What a selector's ``in`` names: where messages are written."""
_SELECTOR_FIELDS = {"to": "to", "in": "in_", "in_thread_of": "in_thread_of", "from": "from_",
                    "text_contains": "text_contains", "fact": "fact"}
PROCESS_RECORDS = ("revealed", "knows", "told", "decided")


@dataclass(slots=True)
class Resolver:
    """What resolving a check or a rule needs: where problems go, which keys the file had, refs, people."""

    source: Source
    present: set[str]
    """Dotted paths of every key the file had (valid or not)."""
    refs: RefTable
    people: People
    catalog: Catalog

    @property
    def predicate_kinds(self) -> tuple[str, ...]:
        return (*_GENERIC, *self.catalog.states, *self.catalog.predicates, *_COMBINERS)

    def add(self, path: str, message: str, hint: str | None = None) -> None:
        self.source.add(path, message, hint)

    # --- process records -------------------------------------------------------------

    def record(self, kind: str, items: list[Any], path: str) -> list[str] | None:
        """The value of ``revealed``/``knows``/``told``/``decided`` (a check or a predicate), bare; None if wrong."""
        if kind == "decided":
            return self._decided(items, path)
        if kind == "revealed":
            if not items:
                self.add(path, "needs at least one fact", "for example revealed: [laura.workspace]")
                return None
            facts = [self.people.fact(f, self.refs, self.source.reporter(join(path, j))) for j, f in enumerate(items)]
            return None if None in facts else [f for f in facts if f]
        if len(items) < 2:
            self.add(path, "needs a person and at least one fact", f"for example {kind}: [ben, laura.beta_on]")
            return None
        if isinstance(items[0], str) and "." in items[0] and not items[0].startswith("$"):
            self.add(join(path, 0), f"expected the person who {'knows' if kind == 'knows' else 'was told'}, "
                     f"got the fact {items[0]}", f"write [<person>, <fact>, ...], for example [ben, {items[0]}]")
            return None
        person = self.people.person(items[0], self.refs, self.source.reporter(join(path, 0)))
        facts = [self.people.fact(f, self.refs, self.source.reporter(join(path, j)))
                 for j, f in enumerate(items[1:], start=1)]
        if person is None or None in facts:
            return None
        return [person, *(f for f in facts if f)]

    def _decided(self, items: list[Any], path: str) -> list[str] | None:
        if len(items) not in (2, 3):
            self.add(path, f"expected [person, decision] or [person, decision, option], got {len(items)} items",
                     "for example decided: [mike, severity, p1]")
            return None
        person = self.people.person(items[0], self.refs, self.source.reporter(join(path, 0)))
        if person is None:
            return None
        decision = self.people.decision(person, items[1], self.source.reporter(join(path, 1)))
        if decision is None:
            return None
        if len(items) == 3 and items[2] not in decision.options:
            self.add(join(path, 2), f"unknown option {items[2]} for {person}.{items[1]}", option_hint(decision))
            return None
        return [person, *items[1:]]

    # --- message selectors -----------------------------------------------------------

    def selector(self, data: dict[str, Any], path: str, count: bool = False) -> MessageSelector | None:
        """A ``message``/``never`` selector (``count``: a ``message`` check, with ``count_gte``)."""
        written = {p[len(path) + 1:].split(".")[0].split("[")[0] for p in self.present if p.startswith(path + ".")}
        if not written - {"count_gte"}:  # (an unknown key is reported as such)
            self.add(path, "a message selector needs at least one field",
                     f"fields: {', '.join(_SELECTOR_FIELDS)}")
            return None
        if len([k for k in _SELECTOR_FIELDS.values() if k in data]) < \
                len([k for k in _SELECTOR_FIELDS if join(path, k) in self.present]):
            return None  # a field was invalid: already reported
        ok = True
        fields: dict[str, Any] = {}
        if data.get("to") is not None:
            fields["to"] = self.people.person(data["to"], self.refs, self.source.reporter(join(path, "to")))
        kinds: tuple[tuple[str, str, str | tuple[str, ...]], ...] = (
            ("in", "in_", PLACE_KINDS), ("in_thread_of", "in_thread_of", "message"))
        for name, attribute, kind in kinds:
            if data.get(attribute) is not None:
                fields[attribute] = self.refs.resolve(data[attribute], kind, self.source.reporter(join(path, name)))
        if data.get("from_") is not None:
            ok = self._author(data["from_"], join(path, "from"), fields)
        if data.get("fact") is not None:
            fields["fact"] = self.people.fact(data["fact"], self.refs, self.source.reporter(join(path, "fact")))
        text = data.get("text_contains")
        if text is not None:
            fields["text_contains"] = [text] if isinstance(text, str) else list(text)
            if not fields["text_contains"] or not all(fields["text_contains"]):
                self.add(join(path, "text_contains"), "needs non-empty text", "for example text_contains: [CSV, beta]")
                ok = False
        if not ok or any(fields.get(k) is None for k in ("to", "in_", "in_thread_of", "fact") if data.get(k)):
            return None
        parent = fields.get("in_thread_of")
        channel = self.refs.records[parent].extra.get("channel") if parent else None
        if parent and fields.get("in_") and channel and channel != fields["in_"]:
            self.add(join(path, "in_thread_of"), f"${parent} is in channel ${channel}, not ${fields['in_']}",
                     "in and in_thread_of must name the same channel")
            return None
        if count:
            return MessageCheck(**fields, count_gte=data.get("count_gte", 1))
        return MessageSelector(**fields)

    def _author(self, text: str, path: str, fields: dict[str, Any]) -> bool:
        """``from``: a user ref (-> ``from_user``) or a person (-> ``from_person``)."""
        pointer = parse_pointer(text)
        kind, name = pointer if pointer else (None, text)
        record = self.refs.records.get(name) if pointer else None
        if kind == "person" or pointer is None or (record is not None and record.kind == "person"):
            person = self.people.person(text, self.refs, self.source.reporter(path))
            fields["from_person"] = person
            return person is not None
        if kind is None and record is not None and record.kind != "user":
            hint = f"{self.refs.hint('user')}; {self.people.hint()}"
            self.add(path, f"{text} is a {record.kind}, not a user or a person", hint)
            return False
        user = self.refs.resolve(text, "user", self.source.reporter(path))
        fields["from_user"] = user
        return user is not None

    # --- state bodies and predicates ---------------------------------------------------

    def body(self, kind: BodyKind, data: Any, path: str, beside: dict[str, Any] | None = None) -> \
            dict[str, Any] | None:
        """A tool's body (state check, predicate or action) resolved, as JSON; None if invalid.
        ``beside``: the mapping the kind's key is in, for kinds with sibling fields."""
        if data is None:
            return None  # invalid: already reported
        if kind.siblings:
            parent = path.rsplit(".", kind.key.count(".") + 1)[0]
            siblings = [name for name in kind.siblings if join(parent, name) in self.present]
            if siblings and beside is not None and not all(name in beside for name in siblings):
                return None  # a sibling was invalid: already reported
            values = {name: (beside or {}).get(name) for name in siblings}
            if not all([self._sibling_valid(kind, name, value, join(parent, name)) for name, value in values.items()]):
                return None
            data = {"value": data, **values}
        model = kind.resolve(data, path, self)
        return None if model is None else body_json(model)

    def _sibling_valid(self, kind: BodyKind, name: str, value: Any, path: str) -> bool:
        """Whether ``value``, written beside ``kind``, has the form that kind gives ``name``;
        each problem names the kind (other kinds may have a field of the same name)."""
        if value is None:
            return True
        walker = Walker(FileModel)
        if walker.typed(value, kind.siblings[name], [], path, None) is not INVALID:
            return True
        for problem in walker.problems:
            self.add(problem.path, f"for {kind.key}, {problem.message}", problem.hint)
        return False

    def _stray_siblings(self, path: str, kind: BodyKind | None, kinds: dict[str, BodyKind]) -> bool:
        """Report sibling fields (``contains``) written beside a kind they do not belong to."""
        own = set(kind.siblings) if kind is not None else set()
        stray = sorted({name for k in kinds.values() for name in k.siblings
                        if name not in own and join(path, name) in self.present})
        for name in stray:
            owners = ", ".join(k.key for k in kinds.values() if name in k.siblings)
            self.add(join(path, name), f"only applies with {owners}", f"remove {name}, or use {owners}")
        return bool(stray)

    def state(self, data: dict[str, Any], path: str, kinds: dict[str, BodyKind], what: str) -> StateBody | None:
        """A body keyed by one of ``kinds`` (``state:`` of a check), resolved; None if invalid."""
        written = [k for k in kinds if join(path, k) in self.present] + sorted(self._refused(path))
        if not written:
            self.add(path, f"needs a {what} kind", f"kinds: {', '.join(kinds)}")
            return None
        if len(written) > 1:
            self.add(path, f"a {what} check has exactly one kind, got {', '.join(written)}",
                     "split it into one check per kind")
            return None
        kind = kinds.get(written[0])
        if kind is None:
            return None  # refused as built later: already reported
        if self._stray_siblings(path, kind, kinds):
            return None
        body = self.body(kind, data.get(kind.attribute), join(path, kind.key), data)
        return None if body is None else {kind.key: body}

    def predicate(self, data: dict[str, Any] | None, path: str) -> Predicate | None:
        """One predicate (milestone, condition), or None after reporting why."""
        if data is None:  # invalid: already reported
            return None
        known = self.predicate_kinds
        kinds = [k for k in known if join(path, k) in self.present]
        kinds += [k for k in self._written_keys(path) if k not in known and k in self._refused(path)]
        if not kinds:
            self.add(path, "a predicate needs a kind", f"kinds: {', '.join(known)}")
            return None
        if len(kinds) > 1:
            self.add(path, f"a predicate has exactly one kind, got {', '.join(kinds)}",
                     "combine conditions with all: [...] or any: [...]")
            return None
        kind = kinds[0]
        tool_kind = self.catalog.body_kind(kind)
        attribute = "not_" if kind == "not" else tool_kind.attribute if tool_kind else kind
        value = data.get(attribute)
        sub = join(path, kind)
        if value is None:
            if attribute in data:
                self.add(sub, "is empty", "write the condition here")
            return None  # otherwise refused (not supported yet) or invalid: already reported
        built: Any = None
        if kind == "called":
            problem = call_pattern_problem(value)
            if problem is None:
                built = value
            else:
                self.add(sub, *problem)
        elif kind == "message":
            built = self.selector(value, sub)
        elif kind in PROCESS_RECORDS:
            built = self.record(kind, value, sub)
        elif tool_kind is not None:
            if self._stray_siblings(path, tool_kind, {**self.catalog.states, **self.catalog.predicates}):
                return None
            body = self.body(tool_kind, value, sub, data)
            return None if body is None else Predicate(state={kind: body})
        elif kind == "not":
            built = self.predicate(value, sub)
        else:
            built = self.predicates(value, sub, 1)
        if built is None:
            return None
        try:
            return Predicate.model_validate({attribute: built})
        except ValidationError:  # pragma: no cover - a bug if reached: every part was checked above
            self.add(sub, "invalid predicate")
            return None

    def _written_keys(self, path: str) -> list[str]:
        return list(dict.fromkeys(p[len(path) + 1:].split(".")[0].split("[")[0] for p in self.present
                                  if p.startswith(path + ".")))

    def _refused(self, path: str) -> set[str]:
        """Keys at ``path`` refused as built in a later version (already reported)."""
        planned = self.catalog.planned_tools
        return {k for k in self._written_keys(path) if k.split(".", 1)[0] in planned}

    def predicates(self, items: list[dict[str, Any] | None], path: str, least: int) -> list[Predicate] | None:
        """A list of at least ``least`` predicates (``all``/``any``: 1; ``before``: 2), all valid, or None."""
        if len(items) < least:
            what = "milestones" if least > 1 else "predicate"
            self.add(path, f"needs at least {least} {what}", "for example [{ called: \"POST /x\" }, ...]")
            return None
        built = [self.predicate(item, join(path, j)) for j, item in enumerate(items)]
        return None if None in built else [p for p in built if p]

    def within(self, data: dict[str, Any], path: str) -> Within | None:
        event = self.predicate(data.get("event"), join(path, "event"))
        of = data.get("of", "start")
        of_invalid = "of" not in data and join(path, "of") in self.present  # already reported
        start = None if of == "start" or of_invalid else self.predicate(of, join(path, "of"))
        limit = parse_duration(data["limit"]) if "limit" in data else None
        if limit is not None and limit <= 0:
            self.add(join(path, "limit"), "expected a positive duration, got 0", "for example limit: 30m")
            return None
        if event is None or limit is None or of_invalid or (of != "start" and start is None):
            return None
        return Within(event=event, of=start, limit=limit)
