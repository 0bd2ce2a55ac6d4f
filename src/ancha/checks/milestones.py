"""Milestones: when a predicate first held, for ``before`` and ``within`` checks.

- ``{called: ...}``: the agent's first matching call that worked (from the trace);
- ``{message: ...}``: the first matching ``message`` record;
- ``decided``/``knows``/``told``/``revealed``: the first time every record it needs existed;
- ``all``/``any`` of those: rebuilt the same way from history;
- anything with a state check or ``not``: the first-held time the environment's
  ``PredicateWatcher`` saw. Those cannot be rebuilt from history, so one that was not
  watched from the start is watched now, and holds from now if it holds at all.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ancha.scene.model import Predicate
from ancha.world.kernel.predicate import CALL_TRACED, RECORD_ADDED
from ancha.world.predicates import CompiledPredicate, Never, compile_predicate, watcher_of
from ancha.world.registry import registry

if TYPE_CHECKING:
    from ancha.world.environment import Environment

_BARE = re.compile(r"[\w.$-]+")
ANY_EVENT = "*"
"""Every bus event (``Bus.subscribe("*", ...)``)."""


@dataclass(slots=True)
class Milestone:
    label: str
    """The predicate as written, e.g. ``{called: "POST /repos/*/issues/*/labels"}``."""
    at: float | None
    """Simulated time it first held; None: it never happened."""
    evidence: list[int] = field(default_factory=list)
    problem: str | None = None
    """Why it cannot happen in this world (an unknown ref), if so."""


def reconstructible(predicate: Predicate) -> bool:
    """Whether the first-held time can be rebuilt exactly from the trace and records."""
    if predicate.state is not None or predicate.not_ is not None:
        return False
    children = predicate.all if predicate.all is not None else predicate.any
    if children is not None:
        return all(reconstructible(c) for c in children)
    return True


def milestone(predicate: Predicate, env: Environment) -> Milestone:
    node: CompiledPredicate | None
    if reconstructible(predicate):
        node = compile_predicate(predicate, env)
    else:
        watcher = watcher_of(env)
        watcher.watch(predicate)
        node = watcher.compiled(predicate)
    label = describe_predicate(predicate)
    if node is None:
        return Milestone(label, None)
    problem = node.reason if isinstance(node, Never) else None
    return Milestone(label, node.first_held, node.evidence if node.first_held is not None else [], problem)


def predicate_events(predicate: Predicate) -> frozenset[str]:
    """The bus events after which ``predicate`` may hold (or stop holding): a traced call, a
    record, or what its tool's state kind declares; ``*`` for a tool predicate, whose events
    only its compiled node knows."""
    if predicate.called is not None:
        return frozenset({CALL_TRACED})
    if predicate.state is not None:
        states = registry().states
        return frozenset().union(*(states[k].events if k in states else {ANY_EVENT} for k in predicate.state))
    children = predicate.all if predicate.all is not None else predicate.any
    if children is None and predicate.not_ is not None:
        children = [predicate.not_]
    if children is not None:
        return frozenset().union(*(predicate_events(c) for c in children))
    return frozenset({RECORD_ADDED})  # message, decided, knows, told, revealed


def start_milestone(env: Environment) -> Milestone:
    return Milestone("the start", env.clock.start)


def describe_predicate(predicate: Predicate) -> str:
    """The predicate in YAML flow style: ``{decided: [mike, severity, p1]}``."""
    return _flow(_as_written(predicate.model_dump(mode="json", by_alias=True, exclude_none=True,
                                                  exclude_defaults=True)))


_REF_FIELDS = {"in", "in_thread_of", "from_user", "channel", "from"}
_SPELLED = {"from_user": "from", "from_person": "from"}


def _as_written(value: Any) -> Any:
    """Back to the file's spelling: ``from`` for from_user/from_person, ``$`` before refs."""
    if isinstance(value, list):
        return [_as_written(v) for v in value]
    if not isinstance(value, dict):
        return value
    written: dict[str, Any] = {}
    for key, item in value.items():
        if key in _REF_FIELDS and isinstance(item, str):
            item = "$" + item
        written[_SPELLED.get(str(key), str(key))] = _as_written(item)
    return written


def _flow(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    if isinstance(value, str):
        return value if _BARE.fullmatch(value) else json.dumps(value)
    return json.dumps(value)


def format_duration(seconds: float) -> str:
    """``90`` -> ``1m30s``; ``0.5`` -> ``500ms``; ``3600`` -> ``1h``."""
    negative = seconds < 0
    seconds = abs(seconds)
    if seconds < 1:
        text = f"{round(seconds * 1000)}ms"
    else:
        whole = round(seconds)
        hours, rest = divmod(whole, 3600)
        minutes, secs = divmod(rest, 60)
        text = "".join(f"{n}{unit}" for n, unit in ((hours, "h"), (minutes, "m"), (secs, "s")) if n) or "0s"
    return f"-{text}" if negative else text


def elapsed(env: Environment, at: float) -> str:
    """A simulated time as ``+2m10s`` after the start of the trial."""
    return "+" + format_duration(at - env.clock.start)
