"""world_rules.events: things that happen on their own, at a time or after a milestone."""

from __future__ import annotations

from typing import Any

from ancha.config.validation import join
from ancha.durations import parse_duration, parse_signed_offset
from ancha.scene.model import Action, EventRule, WorldRules
from ancha.scene.predicates import Resolver


def build_world_rules(clean: dict[str, Any], resolver: Resolver) -> WorldRules:
    events = [_event(data, f"world_rules.events[{i}]", resolver)
              for i, data in enumerate(clean.get("events", [])) if data is not None]
    return WorldRules(events=[e for e in events if e is not None])


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
    if data is None:
        return None
    actions = resolver.catalog.actions
    kinds = [k for k in actions if join(path, k) in resolver.present] + sorted(resolver._refused(path))
    if len(kinds) != 1:
        resolver.add(path, "an action needs a kind" if not kinds else
                     f"an action has exactly one kind, got {', '.join(kinds)}",
                     f"actions: {', '.join(actions)}; write one action per list item")
        return None
    kind = actions.get(kinds[0])
    if kind is None:
        return None  # refused as built later: already reported
    body = resolver.body(kind, data.get(kind.attribute), join(path, kind.key))
    return None if body is None else {kind.key: body}
