"""How a tool shows one of its objects in the console's world diff (``ToolSpec.render``).

The console diffs a trial's world from seed to end, groups the changes by object (a Slack
message, a pull request, a downtime, a user) and hands each object to its tool's ``render``
as an ``ObjectChange``. The tool answers with a ``Rendered``: what a person reads (a message
with its author and text, a pull request as a card, a downtime with its scope), with the
flags a reviewer must not miss and whether the change is bookkeeping (counters, cursors,
timestamps) that the page folds away.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from typing import Any


@dataclass(frozen=True, slots=True)
class FieldChange:
    """One leaf of an object that differs from seed to end."""

    path: str
    """Relative to the object (``status``, ``attributes.schedule.end``); empty for the whole object."""
    kind: str
    """``added``, ``changed`` or ``removed``."""
    before: Any
    after: Any

    @property
    def name(self) -> str:
        """The path's first key (``attributes`` of ``attributes.schedule.end``)."""
        return self.path.split(".", 1)[0].split("[", 1)[0]


@dataclass(frozen=True, slots=True)
class ObjectChange:
    """One object of a tool's world from seed to end, as its tool's ``render`` is given it."""

    collection: str
    """The keys from the tool's section down to the object, list identities left out:
    ``messages.C21E55F03E8``, ``repos.pulls``, ``users``; a section itself (``logs``) when
    the change is not inside a list of objects."""
    ident: str
    """How the object is told apart in its list (``ts=1772460288.929520``); empty for a section."""
    kind: str
    """``added`` (new since the seed), ``changed`` or ``removed``."""
    before: Any
    after: Any
    fields: tuple[FieldChange, ...]
    parents: tuple[Mapping[str, Any], ...] = ()
    """The objects this one sits in, outermost first (a pull request's repository)."""
    snapshot: Mapping[str, Any] | None = None
    """The tool's whole end snapshot: for names behind ids (a Slack user, a channel)."""
    zone: tzinfo = UTC
    """The world's time zone (its clock start's): times are shown in it."""

    @property
    def current(self) -> Any:
        """The object as it ended, or as it was when it was removed."""
        return self.after if self.after is not None else self.before

    @property
    def changed_names(self) -> frozenset[str]:
        return frozenset(f.name for f in self.fields)

    def only_changed(self, bookkeeping: frozenset[str]) -> bool:
        """Whether every changed field is one of ``bookkeeping`` (an object that was there before)."""
        return self.kind == "changed" and bool(self.fields) and self.changed_names <= bookkeeping

    def when(self, value: Any) -> str:
        return readable_time(value, self.zone)


@dataclass(frozen=True, slots=True)
class Field:
    """A labelled value of a rendered object; ``before`` set when it changed (``ACTIVE`` → ``DEPROVISIONED``)."""

    label: str
    value: str
    before: str | None = None


@dataclass(frozen=True, slots=True)
class Rendered:
    """An object as a person reads it in the world diff."""

    kind: str
    """What it is to the page (``message``, ``card``, ``downtime``, ``monitor``, ``incident``,
    ``user``, ``object``): the page styles by it."""
    title: str
    fields: tuple[Field, ...] = ()
    body: str = ""
    """Its full text (a message's, a pull request's description): never cut."""
    flags: tuple[str, ...] = ()
    """What a reviewer must not miss (``covers all monitors``): shown as warnings."""
    bookkeeping: bool = False
    """Only counters, cursors, timestamps or internal ids changed: hidden until "show all"."""


EPOCH_RANGE = (1e8, 1e10)
"""Seconds since 1970 that read as times (1973 to 2286); larger numbers in range ×1000 are milliseconds."""


def readable_time(value: Any, zone: tzinfo = UTC) -> str:
    """A time as a person reads it in the world's zone (``2026-03-02 14:04:48 UTC``), from an
    ISO string, epoch seconds or milliseconds (a number or a Slack ``ts``); anything else as text."""
    moment = parse_time(value)
    if moment is None:
        return "" if value is None else str(value)
    local = moment.astimezone(zone)
    return local.strftime("%Y-%m-%d %H:%M:%S ") + (local.tzname() or local.strftime("%z"))


def parse_time(value: Any) -> datetime | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return _from_epoch(float(value))
    if not isinstance(value, str) or not value:
        return None
    try:
        return _from_epoch(float(value))
    except ValueError:
        pass
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _from_epoch(number: float) -> datetime | None:
    low, high = EPOCH_RANGE
    if low * 1000 <= number < high * 1000:
        number /= 1000
    if not low <= number < high:
        return None
    return datetime.fromtimestamp(number, UTC)


def dig(value: Any, path: str) -> Any:
    """The value at a dotted path in nested dicts (``attributes.schedule.end``), or None."""
    for key in path.split(".") if path else ():
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def shown(value: Any) -> str:
    """A value as a field shows it: lists joined, nothing as a dash."""
    if value is None or value == [] or value == "":
        return "—"
    if isinstance(value, list | tuple):
        return ", ".join(shown(v) for v in value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def field(change: ObjectChange, label: str, path: str, show: Any = shown) -> Field | None:
    """The object's value at ``path`` as a field, with its seed value when it changed; None
    when neither side has one."""
    before, after = dig(change.before, path), dig(change.after, path)
    if before is None and after is None:
        return None
    if change.kind == "changed" and before != after:
        return Field(label, show(after), show(before))
    return Field(label, show(after if change.after is not None else before))


def changed(change: ObjectChange, label: str, path: str, show: Any = shown) -> Field | None:
    """Like ``field``, but only when the value differs from the seed's (or the object is new)."""
    if change.kind == "changed" and dig(change.before, path) == dig(change.after, path):
        return None
    return field(change, label, path, show)


def fields(*found: Field | None) -> tuple[Field, ...]:
    return tuple(f for f in found if f is not None)
