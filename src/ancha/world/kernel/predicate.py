"""A compiled predicate: a condition on the world, re-evaluated only on the bus events that
can change it. Tools subclass it for their incremental state checks (``StateKind.compile``);
the world's own kinds and the composites live in ``ancha.world.predicates``."""

from __future__ import annotations

from collections.abc import Iterable

from ancha.world.kernel.bus import DomainEvent

CALL_TRACED = "call_traced"
"""The bus event of every traced call (payload ``entry``)."""
RECORD_ADDED = "record_added"
"""The bus event of every new people/process record (payload ``record``)."""


class CompiledPredicate:
    """One compiled predicate. Subclasses set ``events`` and update ``holds``."""

    events: frozenset[str] = frozenset()
    record_kinds: frozenset[str] = frozenset()
    """For ``record_added`` listeners: the record kinds that can change it."""
    monotonic = True
    """Once true, true for ever (and exactly rebuilt from history when compiled late)."""

    height = 0
    """0 for a leaf; a composite is one more than its highest child."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.holds = False
        self.first_held: float | None = None
        self.parents: list[CompiledPredicate] = []
        """The composites (``all``, ``any``, ``not``) this one is a child of."""
        self._evidence: list[int] = []

    def on_event(self, event: DomainEvent) -> bool:
        """Take one bus event into account; return whether the predicate holds now."""
        return self.holds

    @property
    def evidence(self) -> list[int]:
        """Trace seqs behind the first time it held."""
        return list(self._evidence)

    def _set(self, holds: bool, at: float, evidence: Iterable[int] = ()) -> None:
        self.holds = holds
        if holds and self.first_held is None:
            self.first_held = at
            self._evidence = sorted(set(evidence))

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.key} holds={self.holds} first_held={self.first_held}>"
