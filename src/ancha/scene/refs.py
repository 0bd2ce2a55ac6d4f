"""Refs: ``ref: NAME`` declares a record; ``$NAME`` or ``$KIND.NAME`` points at one."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

KINDS = ("user", "channel", "message", "repo", "commit", "pull", "issue", "fault", "monitor", "service",
         "escalation_policy", "schedule", "incident", "dashboard", "event", "log", "group", "person")
_POINTER = re.compile(r"^\$(?:([A-Za-z_]+)\.)?([A-Za-z0-9_]+)$")

Report = Callable[[str, str | None], None]
"""report(message, hint) for a problem at the place being resolved."""


@dataclass(slots=True)
class Declared:
    kind: str
    line: int | None
    index: int = 0
    """Position among records of its kind (e.g. the message's place in the seed)."""
    extra: dict[str, str] = field(default_factory=dict)
    tool: str | None = None
    """The tool whose seed declares it (None for people and faults)."""


def parse_pointer(text: object) -> tuple[str | None, str] | None:
    """``$kind.name`` -> (kind, name), ``$name`` -> (None, name); None if ``text`` is not a pointer."""
    match = _POINTER.match(text) if isinstance(text, str) else None
    return (match.group(1), match.group(2)) if match else None


def bare(text: object) -> str | None:
    """The name in ``$name`` or ``$kind.name`` without checking it; None if it is not a pointer."""
    match = _POINTER.match(text) if isinstance(text, str) else None
    return match.group(2) if match else None


class RefTable:
    """Every ref declared in one scene, with its kind."""

    def __init__(self) -> None:
        self.records: dict[str, Declared] = {}

    def declare(self, name: str, record: Declared, report: Report) -> None:
        first = self.records.get(name)
        if first is not None:
            where = f" at line {first.line}" if first.line else ""
            report(f"duplicate ref {name}", f"{name} is already declared{where}; refs are unique in a scene")
            return
        self.records[name] = record

    def of_kind(self, kind: str) -> list[str]:
        return [name for name, record in self.records.items() if record.kind == kind]

    def hint(self, kind: str) -> str:
        names = self.of_kind(kind)
        if not names:
            return f"no refs of kind {kind} in this scene; declare one with ref: NAME"
        return f"refs of kind {kind}: {', '.join('$' + n for n in names)}"

    def _hints(self, kinds: tuple[str, ...]) -> str:
        return "; ".join(self.hint(k) for k in kinds)  # only on a problem: it lists every ref

    def resolve(self, text: object, kind: str | tuple[str, ...], report: Report,
                tool: str | None = None) -> str | None:
        """The bare name ``text`` points at, checking it exists and is a ``kind`` (one of
        them, given several) declared by ``tool`` when given; None if not."""
        kinds = (kind,) if isinstance(kind, str) else kind
        wanted = kinds[0] if len(kinds) == 1 else ", ".join(kinds[:-1]) + " or " + kinds[-1]
        match = _POINTER.match(text) if isinstance(text, str) else None
        if match is None:
            report(f"expected a ref such as $name or ${kinds[0]}.name, got {text!r}", self._hints(kinds))
            return None
        written_kind, name = match.groups()
        if written_kind is not None and written_kind not in KINDS:
            report(f"unknown ref kind {written_kind}", f"ref kinds: {', '.join(KINDS)}")
            return None
        if written_kind is not None and written_kind not in kinds:
            report(f"{text} is written as a {written_kind}, but a {wanted} ref is needed here", self._hints(kinds))
            return None
        record = self.records.get(name)
        if record is None:
            report(f"unknown ref {text}", self._hints(kinds))
            return None
        if record.kind not in kinds:
            report(f"{text} is a {record.kind}, not a {wanted}", self._hints(kinds))
            return None
        if tool is not None and record.tool not in (None, tool):
            report(f"{text} is a {record.tool} {record.kind}, not a {tool} one",
                   f"{tool} {record.kind}s: " + ", ".join(
                       "$" + n for n, r in self.records.items() if r.kind == record.kind and r.tool == tool))
            return None
        return name
