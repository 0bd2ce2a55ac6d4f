"""The environment's domain-event bus.

Tools publish what changed (``message_posted``, ``reaction_added``, ...); people,
rules, the predicate watcher and event delivery subscribe by event type. Delivery
is synchronous and in publish order, so a subscriber sees the world as it was
right after the change.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class DomainEvent:
    type: str
    tool: str
    at: float
    data: dict[str, Any] = field(default_factory=dict)


Handler = Callable[[DomainEvent], None]


class Bus:
    def __init__(self) -> None:
        self._handlers: dict[str, list[Handler]] = defaultdict(list)
        self._any: list[Handler] = []

    def subscribe(self, event_type: str, handler: Handler) -> None:
        """Call ``handler`` for every event of ``event_type`` (``*`` for all)."""
        if event_type == "*":
            self._any.append(handler)
        else:
            self._handlers[event_type].append(handler)

    def unsubscribe(self, event_type: str, handler: Handler) -> None:
        """Stop calling ``handler`` (a live view that went away); unknown handlers are ignored."""
        handlers = self._any if event_type == "*" else self._handlers.get(event_type, [])
        if handler in handlers:
            handlers.remove(handler)

    def publish(self, event: DomainEvent) -> None:
        for handler in self._handlers.get(event.type, ()):
            handler(event)
        for handler in self._any:
            handler(event)
