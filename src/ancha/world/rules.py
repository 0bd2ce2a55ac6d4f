"""World-rule events: things that happen on their own.

Each event of ``world_rules.events`` (numbered from 0 in scene order) is scheduled at
``clock.start + at``, or ``delay`` after its ``after`` predicate first holds. When it
comes due, an ``unless`` predicate that has held by then skips it (``event_skipped
{index}``); otherwise its actions run, in order, through the tools' own APIs (traced
with actor ``world``), and ``event_fired {index, seqs}`` records it with the trace
seqs of the calls its actions made.

Actions are the tools' own (``ToolSpec.actions``): each is performed through its
replica's API and traced with actor ``world``.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

from ancha.scene.model import Action, EventRule

if TYPE_CHECKING:
    from ancha.world.environment import Environment

ACTOR = "world"


class WorldEvents:
    def __init__(self, env: Environment) -> None:
        self.env = env
        self.rules = list(env.scene.world_rules.events)
        self._scheduled: set[int] = set()

    def start(self) -> None:
        """Schedule the timed events and watch the conditions of the others."""
        env = self.env
        for index, rule in enumerate(self.rules):
            if rule.unless is not None:
                env.predicates.watch(rule.unless)
            if rule.at is not None:
                self._schedule(index, env.clock.start + rule.at)
            elif rule.after is not None:
                env.predicates.watch(rule.after, partial(self._after_held, index))

    def _after_held(self, index: int, held: float) -> None:
        self._schedule(index, held + self.rules[index].delay)

    def _schedule(self, index: int, at: float) -> None:
        if index in self._scheduled:
            return
        self._scheduled.add(index)
        self.env.schedule(at, lambda: self._fire(index), f"world event {index}")

    def _fire(self, index: int) -> None:
        rule: EventRule = self.rules[index]
        env = self.env
        if rule.unless is not None and env.predicates.first_held(rule.unless) is not None:
            env.record("event_skipped", index=index)
            return
        first = len(env.trace) + 1
        errors = [error for action in rule.do if (error := self._act(action)) is not None]
        fired: dict[str, Any] = {"index": index, "seqs": list(range(first, len(env.trace) + 1))}
        if errors:
            fired["errors"] = errors
        env.record("event_fired", **fired)

    def _act(self, action: Action) -> str | None:
        """Perform one action; a description of what went wrong, or None."""
        try:
            return self._perform(action)
        except LookupError as exc:  # a ref this world does not have (a scene built by hand)
            return f"{exc}"

    def _perform(self, action: Action) -> str | None:
        ((key, body),) = action.items()
        kind = self.env.registry.actions.get(key)
        if kind is None or kind.body.tool not in self.env.tools:
            return f"{key}: this world has no {key.split('.', 1)[0]}"
        return kind.perform(body, self.env.tools[kind.body.tool], self.env)
