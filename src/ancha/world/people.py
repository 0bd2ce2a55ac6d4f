"""The world's people: whom messages reach, what they learn, how they answer the agent.

Every message written during the trial (on any tool with a ``Reach`` adapter, see
``reach.py``) becomes one ``message`` record::

    {tool, channel, ts, thread_ts, user, actor, author_person, text,
     reached: [person], facts: {person: ["owner.fact", ...]}, seq}

``reached`` lists the people it reached (person keys, scene order); ``facts`` the facts
whose ``match`` patterns it contains, for each person it reached (whether or not they
knew them already: that is what ``never: {to, fact}`` asks); ``seq`` is the trace entry
of the call that wrote it. A person who learns a fact for the first time gets a
``knows`` record ``{person, fact, message: {channel, ts}, via: "message"}``; owners
know their own facts from the start (``via: "owner"``).

A message from the agent that reaches a person and matches what they answer to
(facts' and decisions' ``asked_by``; ``otherwise`` for a direct question that matches
nothing) schedules one reply, ``replies_after`` later, in the same place. Asks that
arrive while that reply is pending join it (an item already in it is not added twice),
so a flood gets one answer per question. A person away when asked (or when the reply
would be due) answers when back; what reached them while away they learn then. When
the reply is posted: ``revealed {person, fact, message}`` for each fact, ``decided
{person, decision, option, message}`` when every ``needs`` fact is known to them, else
``pending {person, decision, missing, message}`` (they decide once asked again after
learning what they needed). Replies go through the tool's API with the person's own
account, so they are traced, reach others and reach the agent like any message.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from ancha.scene.model import Person, Scene
from ancha.scene.patterns import TextPattern, compile_text_pattern
from ancha.world.kernel.bus import DomainEvent
from ancha.world.kernel.reach import Directory, Place, Reach, Utterance
from ancha.world.kernel.scheduler import Due

if TYPE_CHECKING:
    from ancha.world.environment import Environment

Item = tuple[str, str]
"""What a reply answers: ``("fact", id)``, ``("decision", id)`` or ``("otherwise", "")``."""


@dataclass(slots=True)
class PendingReply:
    person: str
    place: Place
    adapter: Reach
    items: list[Item] = field(default_factory=list)
    asked_at: float = 0.0
    due: Due | None = None


@dataclass(slots=True)
class Asked:
    """What one message asked one person, kept until they are back when they were away."""

    utterance: Utterance
    direct: bool
    facts: list[str]


class People:
    """Every person of the scene, subscribed to the bus for the tools that reach them."""

    def __init__(self, env: Environment, enabled: bool = True) -> None:
        self.env = env
        self.people: dict[str, Person] = dict(env.scene.people) if enabled else {}
        self.directory = Directory(env)
        self.adapters = reach_adapters(env, self.directory) if enabled else []
        self.rng = random.Random(env.rng.getrandbits(64))
        """Reply delays: a stream of its own, so that ids drawn elsewhere do not shift them."""
        self.knows: dict[str, set[str]] = {p: set() for p in self.people}
        self._matches: list[tuple[str, list[TextPattern]]] = []
        """(``owner.fact``, its ``match`` patterns), for every fact in the scene."""
        self._asked_facts: dict[str, list[tuple[str, list[TextPattern]]]] = {}
        self._asked_decisions: dict[str, list[tuple[str, list[TextPattern]]]] = {}
        for key, person in self.people.items():
            for fact_id, fact in person.facts.items():
                self._matches.append((f"{key}.{fact_id}", _compile(fact.match or [fact.text])))
            self._asked_facts[key] = [(f, _compile(fact.asked_by)) for f, fact in person.facts.items()]
            self._asked_decisions[key] = [(d, _compile(dec.asked_by)) for d, dec in person.decisions.items()]
        self._replies: dict[tuple[str, Place], PendingReply] = {}
        self._backlog: dict[str, list[Asked]] = {}
        """What reached an away person, by person, until their catch-up runs."""
        self._unsettled: list[tuple[Reach, DomainEvent]] = []
        """Messages written by the call being dispatched; recorded when it is traced (its seq)."""
        for adapter in self.adapters:
            for event_type in adapter.events:
                env.bus.subscribe(event_type, partial(self._on_written, adapter))
        env.bus.subscribe("call_traced", self._on_traced)

    def rescene(self, scene: Scene) -> None:
        """Follow a changed scene from now on (``ancha fork --set``): each person's facts,
        decisions, away windows and reply delay as it says. A reply already due is retimed to
        the new delay after its question (never before now); what people know stays known."""
        if not self.people:
            return
        before = self.people
        self.people = {key: scene.people[key] for key in before if key in scene.people}
        self._matches = []
        for name, person in self.people.items():
            for fact_id, fact in person.facts.items():
                self._matches.append((f"{name}.{fact_id}", _compile(fact.match or [fact.text])))
            self._asked_facts[name] = [(f, _compile(fact.asked_by)) for f, fact in person.facts.items()]
            self._asked_decisions[name] = [(d, _compile(dec.asked_by)) for d, dec in person.decisions.items()]
        now = self.env.clock.peek()
        for place, pending in self._replies.items():
            who = pending.person
            if who not in self.people or pending.due is None:
                continue
            if before[who].replies_after == self.people[who].replies_after:
                continue
            self.env.cancel(pending.due)
            due = max(now, self._reply_time(who, pending.asked_at))
            pending.due = self.env.schedule(due, partial(self._reply, place), f"{who} replies")

    def start(self) -> None:
        """The trial begins: owners know their own facts."""
        for key, person in self.people.items():
            for fact_id in person.facts:
                self._learn(key, f"{key}.{fact_id}", via="owner")

    # --- messages -----------------------------------------------------------------------

    def _on_written(self, adapter: Reach, event: DomainEvent) -> None:
        if self.env.dispatching:
            self._unsettled.append((adapter, event))
        else:
            self._take(adapter, event, None)

    def _on_traced(self, event: DomainEvent) -> None:
        if self._unsettled:
            unsettled, self._unsettled = self._unsettled, []
            for adapter, written in unsettled:
                self._take(adapter, written, event.data["entry"].seq)

    def _take(self, adapter: Reach, event: DomainEvent, seq: int | None) -> None:
        utterance = adapter.utterance(event)
        if utterance is None:
            return
        told = self.facts_in(utterance.text) if self._matches else []
        reached = list(utterance.audience)
        author = self.directory.person_of(utterance.tool, utterance.author)
        self.env.add_record("message", utterance.at, {
            "tool": utterance.tool, **utterance.fields, "actor": utterance.actor, "author_person": author,
            "text": utterance.text, "reached": reached, "facts": {p: list(told) for p in reached} if told else {},
            "seq": seq,
        })
        if not reached:
            return  # nobody to hear it: the record is all
        from_agent = utterance.actor == "agent"
        for person in reached:
            asked = Asked(utterance, utterance.audience[person], told)
            if self.away_until(person, utterance.at) is not None:
                self._defer(person, asked)
            else:
                self._hear(person, asked, from_agent)

    def facts_in(self, text: str) -> list[str]:
        """Every fact (``owner.fact``) whose ``match`` patterns appear in ``text``."""
        return [fact for fact, patterns in self._matches if any(p.matches(text) for p in patterns)]

    def _hear(self, person: str, asked: Asked, from_agent: bool) -> None:
        for fact in asked.facts:
            self._learn(person, fact, via="message", message=asked.utterance.locator)
        if from_agent:
            self._ask(person, asked)

    def _learn(self, person: str, fact: str, via: str, message: dict[str, Any] | None = None) -> None:
        known = self.knows[person]
        if fact in known:
            return
        known.add(fact)
        if message is None:
            self.env.record("knows", person=person, fact=fact, via=via)
        else:
            self.env.record("knows", person=person, fact=fact, message=message, via=via)

    # --- away ---------------------------------------------------------------------------

    def away_until(self, person: str, at: float) -> float | None:
        """The end of the away window ``person`` is in at ``at`` (following back-to-back
        windows), or None when they are there."""
        return self.people[person].away_until(self.env.clock.start, at)

    def _defer(self, person: str, asked: Asked) -> None:
        backlog = self._backlog.get(person)
        if backlog is None:
            backlog = self._backlog[person] = []
            back = self.away_until(person, asked.utterance.at)
            assert back is not None
            self.env.schedule(back, lambda: self._catch_up(person), f"{person} is back")
        backlog.append(asked)

    def _catch_up(self, person: str) -> None:
        for asked in self._backlog.pop(person, []):
            self._hear(person, asked, asked.utterance.actor == "agent")

    # --- replies ------------------------------------------------------------------------

    def _ask(self, person: str, asked: Asked) -> None:
        text = asked.utterance.text
        items: list[Item] = [("fact", f) for f, patterns in self._asked_facts[person]
                             if any(p.matches(text) for p in patterns)]
        items += [("decision", d) for d, patterns in self._asked_decisions[person]
                  if any(p.matches(text) for p in patterns)]
        if not items and asked.direct and self.people[person].otherwise is not None:
            items = [("otherwise", "")]
        if not items:
            return
        place = asked.utterance.reply_place
        key = (person, place)
        pending = self._replies.get(key)
        if pending is None:
            adapter = next(a for a in self.adapters if a.tool == place.tool)
            asked_at = self.env.clock.peek()
            pending = self._replies[key] = PendingReply(person, place, adapter, asked_at=asked_at)
            due = self._reply_time(person, asked_at)
            pending.due = self.env.schedule(due, partial(self._reply, key), f"{person} replies")
        for item in items:
            if item not in pending.items:
                pending.items.append(item)

    def _reply_time(self, person: str, asked_at: float) -> float:
        low, high = self.people[person].replies_after
        delay = low if high <= low else self.rng.uniform(low, high)
        due = asked_at + delay
        return self.away_until(person, due) or due

    def _reply(self, key: tuple[str, Place]) -> None:
        pending = self._replies.pop(key)
        person = self.people[pending.person]
        name = pending.person
        parts: list[str] = []
        revealed: list[str] = []
        decided: list[tuple[str, str]] = []
        undecided: list[tuple[str, list[str]]] = []
        items = [i for i in pending.items if i[0] != "otherwise"] or pending.items
        for kind, item_id in items:
            if kind == "fact":
                parts.append(person.facts[item_id].text)
                revealed.append(item_id)
            elif kind == "decision":
                decision = person.decisions[item_id]
                needs = [f.removeprefix("$").removeprefix("person.") for f in decision.needs]
                missing = [f for f in needs if f not in self.knows[name]]
                if missing:
                    parts.append(decision.pending)
                    undecided.append((item_id, missing))
                else:
                    parts.append(decision.text.replace("{option}", decision.chooses))
                    decided.append((item_id, decision.chooses))
            elif person.otherwise is not None:
                parts.append(person.otherwise)
        if not parts:
            return
        message = pending.adapter.post(name, pending.place, " ".join(parts))
        if message is None:
            self.env.record("reply_failed", person=name, tool=pending.place.tool,
                            place={"container": pending.place.container, "thread": pending.place.thread})
            return
        for fact_id in revealed:
            self.env.record("revealed", person=name, fact=f"{name}.{fact_id}", message=message)
        for decision_id, option in decided:
            self.env.record("decided", person=name, decision=decision_id, option=option, message=message)
        for decision_id, missing in undecided:
            self.env.record("pending", person=name, decision=decision_id, missing=missing, message=message)

    @property
    def replies_pending(self) -> int:
        return len(self._replies)


def _compile(texts: list[str]) -> list[TextPattern]:
    patterns = []
    for text in texts:
        try:
            patterns.append(compile_text_pattern(text))
        except ValueError:
            continue  # the loader refuses these; a scene built by hand just loses the pattern
    return patterns


def reach_adapters(env: Environment, directory: Directory) -> list[Reach]:
    """An adapter for every tool of the environment that declares one."""
    specs = env.registry.tools
    return [factory(env.tools[name], env, directory) for name in env.tools
            if (factory := specs[name].reach) is not None]
