"""world_rules: events (things that happen on their own, at a time or after a milestone) and
faults (effects that keep part of the world broken until a predicate holds)."""

from __future__ import annotations

from typing import Any

from ancha.config.validation import join
from ancha.durations import parse_duration, parse_signed_offset
from ancha.scene.model import Action, Effect, EventRule, FaultRule, WorldRules
from ancha.scene.predicates import Resolver
from ancha.scene.refs import Declared
from ancha.scene.sections import BodyKind


def build_world_rules(clean: dict[str, Any], resolver: Resolver) -> WorldRules:
    faults_data = [(i, data) for i, data in enumerate(clean.get("faults", [])) if data is not None]
    # Every fault ref first: events, other faults and checks may name any of them.
    for i, data in faults_data:
        if data.get("ref"):
            path = f"world_rules.faults[{i}].ref"
            resolver.refs.declare(data["ref"], Declared("fault", resolver.source.line_of(path), i),
                                  resolver.source.reporter(path))
    events = [_event(data, f"world_rules.events[{i}]", resolver)
              for i, data in enumerate(clean.get("events", [])) if data is not None]
    faults = [_fault(data, f"world_rules.faults[{i}]", resolver) for i, data in faults_data]
    return WorldRules(events=[e for e in events if e is not None], faults=[f for f in faults if f is not None])


def _fault(data: dict[str, Any], path: str, resolver: Resolver) -> FaultRule | None:
    if "ref" not in data or "effects" not in data or "resolved_when" not in data:
        return None  # missing or invalid: already reported
    at: float | None = None
    after = None
    starts = data.get("starts", "0s")
    if isinstance(starts, str):
        try:
            at = parse_signed_offset(starts)
        except ValueError:
            resolver.add(join(path, "starts"), f"expected a duration from clock.start such as 10m, got {starts!r}",
                         "an offset from clock.start such as 0s or 10m, or { after: <predicate> }")
            return None
    elif isinstance(starts, dict):
        after = resolver.predicate(starts.get("after"), join(join(path, "starts"), "after"))
        if after is None:
            return None
    else:
        return None  # invalid: already reported
    if not data["effects"]:
        resolver.add(join(path, "effects"), "needs at least one effect",
                     f"effects: {', '.join(resolver.catalog.effects) or 'none in this build'}")
        return None
    effects = [_keyed(e, join(join(path, "effects"), j), resolver, resolver.catalog.effects, "an effect", "effects")
               for j, e in enumerate(data["effects"])]
    resolved_when = resolver.predicate(data["resolved_when"], join(path, "resolved_when"))
    if resolved_when is None or None in effects:
        return None
    return FaultRule(ref=data["ref"], at=at, after=after, effects=[e for e in effects if e],
                     resolved_when=resolved_when)


def _event(data: dict[str, Any], path: str, resolver: Resolver) -> EventRule | None:
    has_at, has_after = join(path, "at") in resolver.present, join(path, "after") in resolver.present
    if has_at == has_after:
        resolver.add(path, "an event needs exactly one of at or after" if has_at else "an event needs at or after",
                     "at: 10m (from clock.start), or after: <milestone> with an optional delay: 5m")
        return None
    if join(path, "delay") in resolver.present and not has_after:
        resolver.add(join(path, "delay"), "only applies with after", "remove delay, or write the time in at")
        return None
    at = None
    if data.get("at") is not None:
        try:
            at = parse_signed_offset(data["at"])
        except ValueError:
            resolver.add(join(path, "at"), f"expected a duration from clock.start such as 10m, got {data['at']!r}",
                         "an offset from clock.start, such as 30m, 2h or -1h")
            return None
    after = resolver.predicate(data["after"], join(path, "after")) if data.get("after") is not None else None
    unless = resolver.predicate(data["unless"], join(path, "unless")) if data.get("unless") is not None else None
    if "do" not in data:
        return None  # missing or invalid: already reported
    if not data["do"]:
        resolver.add(join(path, "do"), "needs at least one action",
                     f"actions: {', '.join(resolver.catalog.actions) or 'none in this build'}")
        return None
    actions = [_action(a, join(join(path, "do"), j), resolver) for j, a in enumerate(data["do"])]
    if (at is None and after is None) or (data.get("unless") is not None and unless is None) or None in actions:
        return None
    return EventRule(at=at, after=after, delay=parse_duration(data["delay"]) if data.get("delay") else 0.0,
                     unless=unless, do=[a for a in actions if a])


def _action(data: dict[str, Any] | None, path: str, resolver: Resolver) -> Action | None:
    return _keyed(data, path, resolver, resolver.catalog.actions, "an action", "actions")


def _keyed(data: dict[str, Any] | None, path: str, resolver: Resolver, known: dict[str, BodyKind], what: str,
           plural: str) -> Action | Effect | None:
    """One action or effect: exactly one of the ``known`` kinds, its body resolved by its tool."""
    if data is None:
        return None
    kinds = [k for k in known if join(path, k) in resolver.present] + sorted(resolver._refused(path))
    if len(kinds) != 1:
        resolver.add(path, f"{what} needs a kind" if not kinds else
                     f"{what} has exactly one kind, got {', '.join(kinds)}",
                     f"{plural}: {', '.join(known) or 'none in this build'}; write one per list item")
        return None
    kind = known.get(kinds[0])
    if kind is None:
        return None  # refused as built later: already reported
    body = resolver.body(kind, data.get(kind.attribute), join(path, kind.key))
    return None if body is None else {kind.key: body}
