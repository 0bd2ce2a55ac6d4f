"""people: who is in the world, what they know and decide, and how checks and rules name them.

A person is a ref of kind ``person`` (``$laura``, ``$person.laura``), and is also written
bare (``laura``) where a person is expected. Facts and decisions are ``person.id``.
Unknown names are problems whose hint lists what exists.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import ValidationError

from ancha.config.validation import join
from ancha.durations import parse_duration, parse_signed_offset
from ancha.scene.model import AwayWindow, Decision, Fact, Person
from ancha.scene.patterns import compile_text_pattern
from ancha.scene.refs import Declared, RefTable, Report, parse_pointer
from ancha.scene.sources import Source

NAME = re.compile(r"^[A-Za-z0-9_]+$")
DEFAULT_REPLY = 60.0
_RANGE_HINT = 'write a duration such as 2m, or a range such as "1m..5m" (min..max, drawn per reply)'
_OFFSET_HINT = "an offset from clock.start, such as 30m, 2h or -1h"


class People:
    """The scene's people by key, and the lookups checks and rules resolve names with."""

    def __init__(self, people: dict[str, Person] | None = None) -> None:
        self.people: dict[str, Person] = dict(people or {})
        self.invalid: set[str] = set()
        """Declared people whose section has problems: naming them reports nothing more."""

    def hint(self) -> str:
        names = sorted({*self.people, *self.invalid})
        return f"people: {', '.join(names)}" if names else "this scene has no people"

    def person(self, text: object, refs: RefTable, report: Report) -> str | None:
        """The key of the person ``text`` names (``laura``, ``$laura``, ``$person.laura``); None if none."""
        if not isinstance(text, str):
            report(f"expected a person such as laura, got {text!r}", self.hint())
            return None
        if not text.startswith("$"):
            if text in self.people:
                return text
            if text in self.invalid:
                return None
            report(f"unknown person {text}", self.hint())
            return None
        pointer = parse_pointer(text)
        if pointer is None:
            report(f"expected a person such as laura or $laura, got {text!r}", self.hint())
            return None
        kind, name = pointer
        if kind not in (None, "person"):
            report(f"{text} is written as a {kind}, but a person is needed here", self.hint())
            return None
        if name in self.people:
            return name
        if name in self.invalid:
            return None
        record = refs.records.get(name)
        if record is not None and record.kind != "person":
            report(f"{text} is a {record.kind}, not a person", self.hint())
        else:
            report(f"unknown person {name}", self.hint())
        return None

    def fact(self, text: object, refs: RefTable, report: Report) -> str | None:
        """``person.fact`` checked to exist; None if not."""
        owner, _, fact = text.partition(".") if isinstance(text, str) else ("", "", "")
        if not owner or not NAME.match(fact):
            report(f"expected a fact such as laura.workspace, got {text!r}", "facts are written <person>.<fact>")
            return None
        person = self.person(owner, refs, report)
        if person is None:
            return None
        facts = self.people[person].facts
        if fact not in facts:
            report(f"unknown fact {person}.{fact}", _listing(f"facts of {person}", [f"{person}.{f}" for f in facts],
                                                             f"{person} has no facts"))
            return None
        return f"{person}.{fact}"

    def decision(self, person: str, text: object, report: Report) -> Decision | None:
        decisions = self.people[person].decisions
        if isinstance(text, str) and text in decisions:
            return decisions[text]
        report(f"unknown decision {text} for {person}", _listing(f"decisions of {person}", list(decisions),
                                                                  f"{person} has no decisions"))
        return None


def _listing(label: str, names: list[str], empty: str) -> str:
    return f"{label}: {', '.join(sorted(names))}" if names else empty


def option_hint(decision: Decision) -> str:
    return f"options: {', '.join(decision.options)}"


def build_people(clean: dict[str, Any], source: Source, refs: RefTable, tools: dict[str, str] | None = None,
                 planned: tuple[str, ...] = ()) -> People:
    """Declare each person as a ref, then resolve accounts, listens, times, facts and decisions.

    Refs of the world must be declared already; facts named by ``needs`` may belong to
    any person, so decisions resolve once every person's facts are known. ``tools``: the
    scene's tools with the ref kind an account there is (``{tool: "user"}``).
    """
    tools = tools or {}
    people = People()
    raw: dict[str, dict[str, Any]] = {}
    for key, data in clean.items():
        path = f"people.{key}"
        if not NAME.match(key):
            source.add(path, f"expected a person name of letters, digits and _, got {key!r}")
            continue
        refs.declare(key, Declared("person", source.line_of(path)), source.reporter(path))
        if data is not None:
            raw[key] = data
        else:
            people.invalid.add(key)
    owners: dict[str, str] = {}
    for key, data in raw.items():
        person = _person(key, data, f"people.{key}", source, refs, owners, tools, planned)
        if person is not None:
            people.people[key] = person
        else:
            people.invalid.add(key)
    for key, data in raw.items():
        for name, decision in (data.get("decisions") or {}).items():
            needs = (decision or {}).get("needs", [])
            path = f"people.{key}.decisions.{name}.needs"
            found = [people.fact(n, refs, source.reporter(f"{path}[{j}]")) for j, n in enumerate(needs)]
            if None in found and key in people.people:
                del people.people[key]
                people.invalid.add(key)
    return people


def _person(key: str, data: dict[str, Any], path: str, source: Source, refs: RefTable,
            owners: dict[str, str], tools: dict[str, str], planned: tuple[str, ...]) -> Person | None:
    ok = True
    accounts: dict[str, str] = {}
    for tool, ref in (data.get("accounts") or {}).items():
        where = f"{path}.accounts.{tool}"
        if tool not in tools:
            if tool in planned:
                source.add(where, "not supported yet",
                           f"a {tool} account is built in a later version of Ancha; remove it to run this scene now")
            else:
                source.add(where, f"unknown tool {tool}",
                           f"accounts name a tool of the scene's world: {', '.join(tools) or 'none'}")
            ok = False
            continue
        user = refs.resolve(ref, tools[tool], source.reporter(where), tool=tool)
        if user is not None and user in owners:
            source.add(where, f"${user} already belongs to {owners[user]}", "a user belongs to one person only")
            user = None
        if user is None:
            ok = False
        else:
            owners[user] = key
            accounts[tool] = user
    listens = [refs.resolve(c, "channel", source.reporter(f"{path}.listens[{j}]"))
               for j, c in enumerate(data.get("listens", []))]
    ok = ok and None not in listens
    replies_after = _replies_after(data.get("replies_after"), f"{path}.replies_after", source)
    away = [_away(w, f"{path}.away[{j}]", source) for j, w in enumerate(data.get("away", [])) if w is not None]
    facts = {name: _fact(f, f"{path}.facts.{name}", source) for name, f in data.get("facts", {}).items()
             if f is not None}
    decisions = {name: _decision(d, f"{path}.decisions.{name}", source)
                 for name, d in data.get("decisions", {}).items() if d is not None}
    if data.get("voice") == "model":
        # Never silently: people would still speak the scene's text, which the author did not ask for.
        source.add(f"{path}.voice", "voice: model is built in a later version of Ancha",
                   "remove it (or write voice: scene): people then reply with the scene's own text")
        ok = False
    for name in [*facts, *decisions]:
        where = f"{path}.facts.{name}" if name in facts else f"{path}.decisions.{name}"
        if not NAME.match(name):
            source.add(where, f"expected a name of letters, digits and _, got {name!r}",
                       "facts and decisions are written <person>.<name>")
            ok = False
    if not ok or replies_after is None or None in away or None in facts.values() or None in decisions.values():
        return None
    try:
        return Person.model_validate({
            "name": data.get("name") or key, "accounts": accounts, "listens": listens, "replies_after": replies_after,
            "away": away, "facts": facts, "decisions": decisions, "otherwise": data.get("otherwise"),
            "voice": data.get("voice", "scene")})
    except ValidationError:  # a field the walker already reported
        return None


def _replies_after(text: str | None, path: str, source: Source) -> tuple[float, float] | None:
    if text is None:
        return DEFAULT_REPLY, DEFAULT_REPLY
    low_text, dots, high_text = text.partition("..")
    try:
        low = parse_duration(low_text)
        high = parse_duration(high_text) if dots else low
    except ValueError:
        source.add(path, f"expected a duration such as 2m, or a range such as 1m..5m, got {text!r}", _RANGE_HINT)
        return None
    if low > high:
        source.add(path, f"the range {text} ends before it starts", "write the shorter delay first, as in 1m..5m")
        return None
    return low, high


def _offset(text: object, path: str, source: Source) -> float | None:
    try:
        return parse_signed_offset(text)  # type: ignore[arg-type]
    except ValueError:
        source.add(path, f"expected a duration from clock.start such as 30m or -1h, got {text!r}", _OFFSET_HINT)
        return None


def _away(data: dict[str, Any], path: str, source: Source) -> AwayWindow | None:
    if "from_" not in data or "to" not in data:
        return None  # missing: already reported
    start, end = _offset(data["from_"], join(path, "from"), source), _offset(data["to"], join(path, "to"), source)
    if start is None or end is None:
        return None
    if start >= end:
        source.add(path, f"away ends ({data['to']}) before it starts ({data['from_']})",
                   "to is later than from; both are offsets from clock.start")
        return None
    return AwayWindow.model_validate({"from": start, "to": end})


def _patterns(items: list[str], path: str, source: Source) -> bool:
    ok = True
    for j, text in enumerate(items):
        if not text:
            source.add(f"{path}[{j}]", "is empty", "write a word or phrase, or a /regex/")
            ok = False
            continue
        try:
            compile_text_pattern(text)
        except ValueError as exc:
            source.add(f"{path}[{j}]", f"invalid regex {text}: {exc}", "patterns are substrings, or /regex/")
            ok = False
    return ok


def _fact(data: dict[str, Any], path: str, source: Source) -> Fact | None:
    if "text" not in data:
        return None
    match = data.get("match")
    if match is None:
        match = [data["text"]]
    elif not match:
        source.add(f"{path}.match", "needs at least one pattern", "omit match to use the fact's text")
        return None
    ok = _patterns(data.get("asked_by", []), f"{path}.asked_by", source)
    if not _patterns(match, f"{path}.match", source) or not ok:
        return None
    return Fact(text=data["text"], asked_by=data.get("asked_by", []), match=match)


def _decision(data: dict[str, Any], path: str, source: Source) -> Decision | None:
    if "options" not in data or "chooses" not in data:
        return None
    options: list[str] = data["options"]
    ok = _patterns(data.get("asked_by", []), f"{path}.asked_by", source)
    if not options:
        source.add(f"{path}.options", "needs at least one option", "for example options: [p1, p2, p3]")
        return None
    duplicates = sorted({o for o in options if options.count(o) > 1})
    if duplicates:
        source.add(f"{path}.options", f"duplicate option {duplicates[0]}", "options are unique")
        ok = False
    if data["chooses"] not in options:
        source.add(f"{path}.chooses", f"{data['chooses']} is not one of the options",
                   f"options: {', '.join(options)}")
        ok = False
    if not ok:
        return None
    fields = {k: v for k, v in data.items() if k in ("asked_by", "options", "chooses", "needs", "text", "pending")}
    return Decision.model_validate(fields)
