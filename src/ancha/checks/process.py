"""Process checks: what happened between the agent and the people of the world.

``revealed``, ``knows``/``told`` and ``decided`` read the engine's records; ``message``
and ``never`` read its ``message`` records through a selector; ``before`` and
``within`` compare milestone times (``milestones.py``). Nothing here reads text a
model wrote beyond the records. Evidence is the trace seqs of the messages (or calls)
behind a result.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ancha.checks.kinds import CheckKind, Grade
from ancha.checks.milestones import (
    Milestone,
    elapsed,
    format_duration,
    milestone,
    predicate_events,
    start_milestone,
)
from ancha.scene.check_kinds import form
from ancha.scene.model import CheckSpec, MessageCheck, MessageSelector, Predicate, Within
from ancha.world.kernel.predicate import RECORD_ADDED
from ancha.world.kernel.records import Record
from ancha.world.predicates import message_seqs
from ancha.world.selectors import (
    AGENT,
    closest_miss,
    compile_selector,
    fact_name,
    fact_owner,
    message_records,
    person_name,
    record_seqs,
)

if TYPE_CHECKING:
    from ancha.world.environment import Environment

SHOWN = 5
SNIPPET = 60


@dataclass(slots=True)
class ProcessOutcome:
    passed: bool
    expected: str
    actual: str
    explanation: str
    evidence: list[int]


# --- revealed, knows/told, decided ----------------------------------------------------------


def revealed(facts: list[str], env: Environment) -> ProcessOutcome:
    names = [fact_name(f) for f in facts]
    if not names:
        raise ValueError("revealed needs at least one person.fact")
    found: dict[str, Record] = {}
    for record in env.records.of_kind("revealed"):
        fact = record.data.get("fact")
        if fact in names and fact not in found and record.data.get("person") == fact_owner(fact):
            found[fact] = record
    expected = f"{_and(names)} revealed to the agent when it asked their owner{'s' if len(names) > 1 else ''}"
    evidence = message_seqs(env, found.values())
    if len(found) == len(names):
        actual = "; ".join(f"{fact_owner(f)} revealed {f} at {elapsed(env, found[f].at)}" for f in names)
        return _outcome(True, expected, actual, evidence)
    missing = [f for f in names if f not in found]
    parts = [_not_revealed(f, env) for f in missing]
    if found:
        parts.append(f"({_and(list(found))} {'was' if len(found) == 1 else 'were'} revealed)")
    return _outcome(False, expected, "; ".join(parts), evidence)


def _not_revealed(fact: str, env: Environment) -> str:
    owner = fact_owner(fact)
    person = env.scene.people.get(owner)
    spec = person.facts.get(fact.partition(".")[2]) if person is not None else None
    if spec is None:
        return f"the scene has no fact {fact}"
    reached = _agent_messages_reaching(env, owner)
    if not reached:
        return f"{owner} never revealed {fact}: no message from the agent reached {owner}"
    asked = f" (they reveal it when asked about {_or(spec.asked_by)})" if spec.asked_by else ""
    n = len(reached)
    return (f"{owner} never revealed {fact}: {n} message{'' if n == 1 else 's'} from the agent reached "
            f"{owner}, none asking for it{asked}")


def knows(value: list[str], env: Environment) -> ProcessOutcome:
    if len(value) < 2:
        raise ValueError("knows/told is [person, person.fact, ...]")
    person = person_name(value[0])
    facts = [fact_name(f) for f in value[1:]]
    records = env.records.of_kind("knows")
    learned: dict[str, Record] = {}
    for record in records:
        fact = record.data.get("fact")
        if record.data.get("person") == person and fact in facts and fact not in learned:
            learned[fact] = record
    expected = f"{person} knows {_and(facts)}"
    found: list[str] = []
    missing: list[str] = []
    for fact in facts:
        if fact_owner(fact) == person:
            found.append(f"{fact} is their own")
        elif fact in learned:
            found.append(f"learned {fact} at {elapsed(env, learned[fact].at)}")
        else:
            missing.append(fact)
    evidence = message_seqs(env, learned.values())
    if not missing:
        return _outcome(True, expected, f"{person} " + "; ".join(found), evidence)
    parts = []
    for fact in missing:
        others = sorted({str(r.data.get("person")) for r in records if r.data.get("fact") == fact}
                        | {fact_owner(fact)})
        parts.append(f"{person} does not know {fact} (known to {_and(others)})")
    n = sum(1 for r in message_records(env) if person in (r.data.get("reached") or ()))
    parts.append(f"{n} message{'' if n == 1 else 's'} written during the trial reached {person}"
                 if n else f"no message written during the trial reached {person}")
    if found:
        parts.append(f"{person} " + "; ".join(found))
    return _outcome(False, expected, "; ".join(parts), evidence)


def decided(value: list[str], env: Environment) -> ProcessOutcome:
    if len(value) not in (2, 3):
        raise ValueError("decided is [person, decision] or [person, decision, option]")
    person, decision = person_name(value[0]), value[1]
    option = value[2] if len(value) == 3 else None
    expected = f"{person} decided {decision}" + (f" as {option}" if option is not None else "")
    mine = [r for r in env.records.of_kind("decided")
            if r.data.get("person") == person and r.data.get("decision") == decision]
    chosen = [r for r in mine if option is None or r.data.get("option") == option]
    if chosen:
        first = chosen[0]
        actual = f"{person} decided {decision} as {first.data.get('option')} at {elapsed(env, first.at)}"
        return _outcome(True, expected, actual, message_seqs(env, [first]))
    if mine:
        options = _and(list(dict.fromkeys(str(r.data.get("option")) for r in mine)))
        actual = f"{person} decided {decision} as {options}, not {option}"
        return _outcome(False, expected, actual, message_seqs(env, mine))
    pending = [r for r in env.records.of_kind("pending")
               if r.data.get("person") == person and r.data.get("decision") == decision]
    if pending:
        latest = pending[-1]
        missing = [str(m) for m in latest.data.get("missing") or []]
        times = f" ({len(pending)} times)" if len(pending) > 1 else ""
        actual = (f"{person}'s decision {decision} is pending{times}: they still needed "
                  f"{_and(missing) if missing else 'something'} when last asked at {elapsed(env, latest.at)}")
        return _outcome(False, expected, actual, message_seqs(env, pending))
    reached = _agent_messages_reaching(env, person)
    spec = env.scene.people.get(person)
    decision_spec = spec.decisions.get(decision) if spec is not None else None
    if decision_spec is None:
        actual = f"the scene has no decision {decision} for {person}"
    elif not reached:
        actual = f"{person} never decided {decision}: no message from the agent reached {person}"
    else:
        asked = f" (asked by {_or(decision_spec.asked_by)})" if decision_spec.asked_by else ""
        n = len(reached)
        actual = (f"{person} never decided {decision}: {n} message{'' if n == 1 else 's'} from the agent "
                  f"reached {person}, none asking for it{asked}")
    return _outcome(False, expected, actual, record_seqs(reached))


def _agent_messages_reaching(env: Environment, person: str) -> list[Record]:
    return [r for r in message_records(env)
            if r.data.get("actor") == AGENT and person in (r.data.get("reached") or ())]


# --- message and never ---------------------------------------------------------------------


def message(check: MessageCheck, env: Environment) -> ProcessOutcome:
    selector = MessageSelector.model_validate(check.model_dump(exclude={"count_gte"}))
    sel = compile_selector(selector, env)
    records = message_records(env)
    matching = [r for r in records if sel.matches(r.data)]
    count = check.count_gte
    amount = "a message" if count == 1 else f"at least {count} messages"
    expected = f"{amount} {sel.describe()} written during the trial"
    if len(matching) >= count:
        return _outcome(True, expected, f"{_count(matching, 'matching message')}{_listed(env, matching)}",
                        record_seqs(matching))
    if matching:
        return _outcome(False, expected, f"only {_count(matching, 'matching message')}, {count} needed"
                        f"{_listed(env, matching)}", record_seqs(matching))
    actual, group = closest_miss(sel, records)
    return _outcome(False, expected, actual, record_seqs(group))


def never(selector: MessageSelector, env: Environment) -> ProcessOutcome:
    sel = compile_selector(selector, env)
    records = message_records(env)
    offending = [r for r in records if sel.matches(r.data)]
    expected = f"no message {sel.describe()} during the trial"
    if not offending:
        return _outcome(True, expected, f"none of the {_count(records, 'message')} written matched", [])
    return _outcome(False, expected, f"{_count(offending, 'message')} matched{_listed(env, offending)}",
                    record_seqs(offending))


def _listed(env: Environment, records: list[Record]) -> str:
    shown = []
    for r in records[:SHOWN]:
        text = str(r.data.get("text") or "")
        snippet = text if len(text) <= SNIPPET else text[: SNIPPET - 1] + "…"
        seq = r.data.get("seq")
        where = f"#{seq}" if seq is not None else elapsed(env, r.at)
        shown.append(f"{where} {snippet!r}")
    more = f", and {len(records) - SHOWN} more" if len(records) > SHOWN else ""
    return ": " + ", ".join(shown) + more if shown else ""


# --- before and within ---------------------------------------------------------------------------


def before(milestones: list[Milestone], env: Environment) -> ProcessOutcome:
    if len(milestones) < 2:
        raise ValueError("before needs at least two milestones")
    expected = ", then ".join(m.label for m in milestones) + ", each strictly earlier than the next"
    evidence = [seq for m in milestones for seq in m.evidence]
    missing = [m for m in milestones if m.at is None]
    if missing:
        return _outcome(False, expected, "; ".join(_never_happened(m) for m in missing), evidence)
    happened = "; ".join(f"{m.label} at {elapsed(env, _at(m))}" for m in milestones)
    for earlier, later in zip(milestones, milestones[1:], strict=False):
        if not _at(earlier) < _at(later):
            how = "at the same time as" if _at(earlier) == _at(later) else "before"
            actual = (f"{later.label} happened {how} {earlier.label} ({elapsed(env, _at(later))} vs "
                      f"{elapsed(env, _at(earlier))})")
            return _outcome(False, expected, actual, evidence)
    return _outcome(True, expected, happened, evidence)


def within(spec: Within, env: Environment) -> ProcessOutcome:
    event = milestone(spec.event, env)
    of = start_milestone(env) if spec.of is None else milestone(spec.of, env)
    expected = f"{event.label} no later than {format_duration(spec.limit)} after {of.label}"
    evidence = event.evidence + of.evidence
    missing = [m for m in (event, of) if m.at is None]
    if missing:
        return _outcome(False, expected, "; ".join(_never_happened(m) for m in missing), evidence)
    delta = _at(event) - _at(of)
    if delta < 0:
        actual = f"{event.label} happened {format_duration(-delta)} before {of.label}"
    else:
        actual = f"{event.label} happened {format_duration(delta)} after {of.label}"
    actual += f" (limit {format_duration(spec.limit)})"
    return _outcome(delta <= spec.limit, expected, actual, evidence)


def _never_happened(m: Milestone) -> str:
    reason = f" ({m.problem})" if m.problem else ""
    return f"the milestone {m.label} never happened{reason}"


def _at(m: Milestone) -> float:
    assert m.at is not None
    return m.at


# --- words ---------------------------------------------------------------------------------------


def _outcome(passed: bool, expected: str, actual: str, evidence: Iterable[int]) -> ProcessOutcome:
    if passed:
        explanation = f"Passed: expected {expected}, and found {actual}."
    else:
        explanation = f"Failed: expected {expected}; actually {actual}."
    return ProcessOutcome(passed, expected, actual, explanation, sorted(set(evidence)))


def _and(items: list[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _or(items: list[str]) -> str:
    quoted = [repr(i) for i in items]
    if len(quoted) <= 1:
        return "".join(quoted)
    return ", ".join(quoted[:-1]) + " or " + quoted[-1]


def _count(items: list[Record], noun: str) -> str:
    return f"{len(items)} {noun}{'' if len(items) == 1 else 's'}"


# --- the kinds ------------------------------------------------------------------------------------


def _graded(grade: Callable[[Any, Environment], ProcessOutcome]) -> Grade:
    """A grader of ``spec.<kind>``; ``ValueError`` when it cannot be graded in this world."""

    def on_world(spec: CheckSpec, env: Environment) -> ProcessOutcome:
        try:
            return grade(spec.body, env)
        except LookupError as exc:
            raise ValueError(str(exc.args[0]) if exc.args else str(exc)) from exc

    return on_world


def _before(items: list[Predicate], env: Environment) -> ProcessOutcome:
    return before([milestone(p, env) for p in items], env)


def _records(spec: CheckSpec) -> frozenset[str]:
    return frozenset({RECORD_ADDED})


def _milestones(spec: CheckSpec) -> frozenset[str]:
    """The events of the milestones a check times (``before``, ``within``)."""
    return frozenset().union(*(predicate_events(p) for p in form(spec.kind).milestones(spec.body)))


PROCESS_KINDS: tuple[CheckKind, ...] = (
    CheckKind(form("revealed"), _graded(revealed), _records),
    CheckKind(form("knows"), _graded(knows), _records),
    CheckKind(form("told"), _graded(knows), _records),
    CheckKind(form("decided"), _graded(decided), _records),
    CheckKind(form("message"), _graded(message), _records),
    CheckKind(form("never"), _graded(never), _records),
    CheckKind(form("before"), _graded(_before), _milestones),
    CheckKind(form("within"), _graded(within), _milestones),
)
"""The process kinds: records (``revealed``, ``knows``/``told``, ``decided``), messages
(``message``, ``never``) and milestones (``before``, ``within``)."""
