"""Message selectors: which ``message`` records a ``message``/``never`` check or a message
milestone selects, and, when none does, the closest miss in words.

A selector is compiled once against a trial's refs. It reads the engine's ``message``
records (one per message written during the trial, never the seed)::

    {tool, channel, ts, thread_ts, user, actor, author_person, text, reached: [person],
     facts: {person: ["owner.fact", ...]}, seq}

Every field given must hold: ``to`` (the person is in ``reached``), ``in`` (the
place of the ref: a channel, an issue, a pull request), ``in_thread_of`` (a reply in that message's thread, not the
parent), ``from`` a user ref (the author; a ref of the agent's own account on any tool names
the agent, ``actor == "agent"``, on every tool) or a person (``author_person``), ``text_contains``
(every string, ignoring case) and ``fact`` (the message told its recipient, or ``to``
when given, that fact).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ancha.scene.model import MessageSelector

if TYPE_CHECKING:
    from ancha.world.environment import Environment
    from ancha.world.kernel.records import Record

ORDER = ("to", "in", "in_thread_of", "from", "text_contains", "fact")
SNIPPET = 80
AGENT = "agent"


def person_name(value: str) -> str:
    """A person written as ``laura``, ``$laura`` or ``$person.laura`` -> ``laura``."""
    return value.removeprefix("$").removeprefix("person.")


def fact_owner(fact: str) -> str:
    """``laura.beta_on`` -> ``laura``."""
    return person_name(fact).partition(".")[0]


def fact_name(fact: str) -> str:
    """``$person.laura.beta_on`` -> ``laura.beta_on``."""
    return person_name(fact)


class CompiledSelector:
    """A selector with its refs resolved; ``LookupError`` when one names nothing."""

    __slots__ = ("selector", "env", "to", "channel", "parent", "author", "author_is_agent", "from_person",
                 "needles", "fact", "given", "tests")

    def __init__(self, selector: MessageSelector, env: Environment) -> None:
        self.selector = selector
        self.env = env
        self.to = person_name(selector.to) if selector.to else None
        self.channel = _ref(env, selector.in_, ("channel", "issue", "pull")).id if selector.in_ else None
        self.parent: tuple[str, str] | None = None
        if selector.in_thread_of:
            channel, sep, ts = _ref(env, selector.in_thread_of, ("message",)).id.partition("/")
            if not sep:
                raise LookupError(f"${selector.in_thread_of} is not a message with a thread")
            self.parent = (channel, ts)
        self.author: tuple[str, str] | None = None
        self.author_is_agent = False
        if selector.from_user:
            record = _ref(env, selector.from_user, ("user",))
            self.author = (record.tool, record.id)
            self.author_is_agent = selector.from_user in env.agent_accounts
        self.from_person = person_name(selector.from_person) if selector.from_person else None
        self.needles = [t.lower() for t in selector.text_contains]
        self.fact = fact_name(selector.fact) if selector.fact else None
        given = {"to": self.to, "in": self.channel, "in_thread_of": self.parent,
                 "from": self.author or self.from_person, "text_contains": self.needles or None,
                 "fact": self.fact}
        self.given = tuple(name for name in ORDER if given[name] is not None)
        if not self.given:
            raise LookupError("a message selector needs at least one field")
        self.tests = tuple(self._test(name) for name in self.given)

    # --- matching ---------------------------------------------------------------------

    def matches(self, data: Mapping[str, Any]) -> bool:
        """Whether the message record's data meets every field (stops at the first miss)."""
        for test in self.tests:  # noqa: SIM110 - a plain loop is faster here than all() over a generator
            if not test(data):
                return False
        return True

    def misses(self, data: Mapping[str, Any]) -> list[str]:
        """The fields the record does not meet, in ``ORDER``."""
        return [name for name in self.given if not self._holds(name, data)]

    def _test(self, name: str) -> Callable[[Mapping[str, Any]], bool]:
        """One field's test, with its values bound (the hot path of message predicates)."""
        if name == "to":
            to = self.to
            return lambda data: to in (data.get("reached") or ())
        if name == "text_contains":
            needles = self.needles

            def contains(data: Mapping[str, Any]) -> bool:
                text = str(data.get("text") or "").lower()
                return all(needle in text for needle in needles)

            return contains
        return lambda data: self._holds(name, data)

    def _holds(self, name: str, data: Mapping[str, Any]) -> bool:
        if name == "to":
            return self.to in (data.get("reached") or ())
        if name == "in":
            return self.channel in (data.get("channel"), data.get("issue"), data.get("pull"))
        if name == "in_thread_of":
            assert self.parent is not None
            return (data.get("channel") == self.parent[0] and data.get("thread_ts") == self.parent[1]
                    and data.get("ts") != self.parent[1])
        if name == "from":
            if self.from_person is not None:
                return bool(data.get("author_person") == self.from_person)
            assert self.author is not None
            if self.author_is_agent and data.get("actor") == AGENT:
                return True
            return data.get("tool") == self.author[0] and data.get("user") == self.author[1]
        if name == "text_contains":
            text = str(data.get("text") or "").lower()
            return all(needle in text for needle in self.needles)
        # fact
        facts: Mapping[str, list[str]] = data.get("facts") or {}
        if self.to is not None:
            return self.fact in (facts.get(self.to) or ())
        return any(self.fact in learned for learned in facts.values())

    # --- words ------------------------------------------------------------------------

    def describe(self) -> str:
        """``to laura from $bot in the thread of $question containing 'x'``."""
        return " ".join(self._phrase(name) for name in self.given)

    def _phrase(self, name: str) -> str:
        s = self.selector
        if name == "to":
            return f"to {self.to}"
        if name == "in":
            return f"in ${s.in_}"
        if name == "in_thread_of":
            return f"in the thread of ${s.in_thread_of}"
        if name == "from":
            return f"from {self.from_person}" if self.from_person is not None else f"from ${s.from_user}"
        if name == "text_contains":
            return "containing " + " and ".join(repr(t) for t in s.text_contains)
        return f"telling {self.to or 'its recipient'} {self.fact}"

    def _subject_phrase(self, name: str) -> str:
        """The phrase for a field a group of messages met, after ``N messages``."""
        s = self.selector
        if name == "in":
            return f"in {_place_label(self.env, self.channel or '')}"
        if name == "from":
            if self.from_person is not None:
                return f"by {self.from_person}"
            return "by the bot" if self.author_is_agent else f"by ${s.from_user}"
        return self._phrase(name)


def compile_selector(selector: MessageSelector, env: Environment) -> CompiledSelector:
    return CompiledSelector(selector, env)


def message_records(env: Environment) -> list[Record]:
    return env.records.of_kind("message")


def record_seqs(records: Iterable[Record]) -> list[int]:
    return sorted({int(r.data["seq"]) for r in records if r.data.get("seq") is not None})


def closest_miss(sel: CompiledSelector, records: list[Record]) -> tuple[str, list[Record]]:
    """Words for the messages that met the most fields (the latest one's set of misses
    decides the group) and what kept them from matching, with those messages."""
    if not records:
        return "no message was written during the trial", []
    scored = [(r, sel.misses(r.data)) for r in records]
    # Most fields met; then by the right author (the check is about what they did); then the latest.
    def rank(missed: list[str]) -> tuple[int, bool]:
        return len(missed), "from" in missed

    closest = min(rank(missed) for _, missed in scored)
    best = [missed for _, missed in scored if rank(missed) == closest][-1]
    group = [r for r, missed in scored if missed == best]
    met = [name for name in sel.given if name not in best]
    n = len(group)
    noun = f"{n} message{'' if n == 1 else 's'}"
    if "to" in met:
        subject = f"{sel.to} was sent {noun}"
        met.remove("to")
    else:
        subject = f"{noun} {'was' if n == 1 else 'were'} written"
    phrases = [sel._subject_phrase(name) for name in met]
    subject += "".join(" " + p for p in phrases)
    reasons = " and ".join(_explain(sel, name, group) for name in best)
    return f"{subject}, but {reasons}", group


def _explain(sel: CompiledSelector, name: str, group: list[Record]) -> str:
    env = sel.env
    one = len(group) == 1
    it = "it" if one else "they"
    s = sel.selector
    if name == "to":
        reached = sorted({p for r in group for p in (r.data.get("reached") or ())})
        return f"{it} did not reach {sel.to} ({'reached ' + ', '.join(reached) if reached else 'reached no one'})"
    if name == "in":
        places = _distinct(_record_place(env, r.data) for r in group)
        return f"{'it was' if one else 'they were'} {places} instead of ${s.in_}"
    if name == "in_thread_of":
        places = _distinct(_thread_label(env, r.data) for r in group)
        return f"{'it was' if one else 'they were'} {places} instead of in the thread of ${s.in_thread_of}"
    if name == "from":
        authors = _distinct(_author_label(env, r.data) for r in group)
        wanted = sel.from_person if sel.from_person is not None else f"${s.from_user}"
        return f"{'it was' if one else 'they were'} written by {authors} instead of {wanted}"
    if name == "text_contains":
        latest = str(group[-1].data.get("text") or "")
        missing = [t for t, needle in zip(s.text_contains, sel.needles, strict=True)
                   if needle not in latest.lower()]
        snippet = latest if len(latest) <= SNIPPET else latest[: SNIPPET - 1] + "…"
        lead = "it did not" if one else "the latest did not"
        return f"{lead} contain {' or '.join(repr(t) for t in missing)} (it said {snippet!r})"
    told = sorted({f"{person} {f}" for r in group for person, learned in (r.data.get("facts") or {}).items()
                   for f in learned})
    whom = sel.to or "anyone"
    extra = f" ({'it' if one else 'they'} told {', '.join(told)})" if told else ""
    return f"{it} did not tell {whom} {sel.fact}{extra}"


def _distinct(items: Iterable[str]) -> str:
    return ", ".join(dict.fromkeys(items))


def _ref(env: Environment, name: str, kinds: tuple[str, ...]) -> Any:
    record = env.refs.get(name.removeprefix("$"))
    if record is None:
        raise LookupError(f"the world has no ref ${name.removeprefix('$')}")
    if record.kind not in kinds:
        raise LookupError(f"${name} is a {record.kind}, not a {' or '.join(kinds)}")
    return record


def _ref_names(env: Environment, kind: str) -> dict[str, str]:
    return {r.id: name for name, r in env.refs.items() if r.kind == kind}


def _place_label(env: Environment, place_id: str) -> str:
    """How a place reads in an explanation: what the tool calls it, else its ref, else its id."""
    for tool in env.tools.values():
        label = tool.place_label(place_id)
        if label is not None:
            return label
    for kind in ("channel", "issue", "pull"):
        name = _ref_names(env, kind).get(place_id)
        if name:
            return f"${name}"
    return place_id


def _record_place(env: Environment, data: Mapping[str, Any]) -> str:
    """Where a message record was written, as ``in <place>``: a Slack channel, a GitHub
    issue or pull request; ``nowhere`` for a record that names no place."""
    place = data.get("channel") or data.get("issue") or data.get("pull")
    if not place:
        return "in no channel, issue or pull request"
    return f"in {_place_label(env, str(place))}"


def _thread_label(env: Environment, data: Mapping[str, Any]) -> str:
    channel, thread_ts, ts = data.get("channel"), data.get("thread_ts"), data.get("ts")
    if not thread_ts or thread_ts == ts:
        return f"at the top level of {_place_label(env, str(channel))}"
    name = _ref_names(env, "message").get(f"{channel}/{thread_ts}")
    if name:
        return f"in the thread of ${name} (ts {thread_ts})"
    return f"in the thread of message {thread_ts} in {_place_label(env, str(channel))}"


def _author_label(env: Environment, data: Mapping[str, Any]) -> str:
    if data.get("actor") == AGENT:
        return "the bot"
    if data.get("author_person"):
        return str(data["author_person"])
    user = str(data.get("user"))
    name = _ref_names(env, "user").get(user)
    return f"${name}" if name else user
