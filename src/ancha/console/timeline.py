"""A trial's timeline in simulated time: one lane per tool the agent called, per person and
for the world (faults, milestones, and what tools show of their state).

Lanes are data (``Lane`` of ``Mark``); the page lays them out on an ``Axis`` that compresses
idle stretches into breaks (timeline_axis.py). A lane with more marks than fit is binned: one
mark per bin, with its count, linked to the bin's first call. Every mark's colour says one
thing across all lanes (``COLOURS``), and the legend lists the colours the timeline uses.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ancha.console.timeline_axis import Axis, Tick, fit_axis
from ancha.console.trial_data import Call, TrialData, epoch
from ancha.world.registry import registry

MAX_MARKS = 400
"""Marks per lane before it is binned (about one per 2 px of a wide screen)."""


@dataclass(frozen=True, slots=True)
class Colour:
    """One colour of the timeline and what it means, wherever it appears."""

    name: str
    """CSS class ``c-NAME`` (static/timeline.css holds the colour itself)."""
    meaning: str
    kinds: tuple[str, ...]
    """The mark kinds drawn in it."""


COLOURS = (
    Colour("failed", "a failed call, or an alert state (incident triggered, monitor alerting)", ("err", "alert")),
    Colour("warn", "a warning state (incident acknowledged, monitor warning or without data)", ("warn",)),
    Colour("ok", "a call that worked, or a state back to OK (incident or fault resolved)", ("ok",)),
    Colour("info", "other tool state", ("info",)),
    Colour("person", "a person learned, revealed or was told a fact (dot), or decided (diamond)",
           ("fact", "decision")),
    Colour("milestone", "a milestone first held", ("milestone",)),
    Colour("fault", "a fault active (the scene breaks the world on purpose)", ("fault",)),
)
"""The timeline's colour language: red only for failures and alerts, one colour per meaning."""
_COLOUR_OF = {kind: colour for colour in COLOURS for kind in colour.kinds}
TOOL_STATES = {"alert": "alert", "warn": "warn", "ok": "ok", "info": "info"}
"""``TimelineMark.state`` → mark kind; any other word is drawn as ``info``."""


def colour_of(kind: str) -> Colour:
    return _COLOUR_OF.get(kind, _COLOUR_OF["info"])


@dataclass
class Mark:
    at: float
    label: str
    kind: str
    """CSS class: ``ok``, ``err``, ``person``, ``fact``, ``decision``, ``milestone``,
    ``alert``, ``warn``, ``info``, ``fault``."""
    seq: int | None = None
    count: int = 1
    until: float | None = None
    """For a span (a fault while active): its end."""
    left: float = 0.0
    width: float = 0.0

    @property
    def colour(self) -> str:
        return colour_of(self.kind).name


@dataclass
class Lane:
    key: str
    title: str
    group: str
    marks: list[Mark] = field(default_factory=list)


@dataclass
class Timeline:
    start: float
    end: float
    lanes: list[Lane]
    axis: Axis

    @property
    def span(self) -> float:
        return self.end - self.start

    @property
    def ticks(self) -> list[Tick]:
        return self.axis.ticks()

    @property
    def legend(self) -> list[Colour]:
        """The colours the marks use, in ``COLOURS``' order."""
        used = {mark.colour for lane in self.lanes for mark in lane.marks}
        return [colour for colour in COLOURS if colour.name in used]

    @property
    def colours(self) -> list[Colour]:
        """Every colour (a running trial's legend: its marks arrive after the page)."""
        return list(COLOURS)


def build_timeline(trial: TrialData, world: dict[str, Any] | None) -> Timeline:
    lanes: dict[str, Lane] = {}

    def lane(key: str, title: str, group: str) -> Lane:
        if key not in lanes:
            lanes[key] = Lane(key, title, group)
        return lanes[key]

    for call in trial.calls:
        _call_lane(call, lane).marks.append(
            Mark(call.at, f"#{call.seq} {call.actor}: {call.label}", "ok" if call.worked else "err", call.seq))
    _record_marks(trial.records, lane)
    if world:
        _tool_state_marks(world, lane)
    times = [m.at for ln in lanes.values() for m in ln.marks] + [
        m.until for ln in lanes.values() for m in ln.marks if m.until is not None]
    axis = fit_axis(times)
    start, end = axis.origin, axis.stretches[-1].end
    ordered = sorted(lanes.values(), key=lambda ln: (_GROUP_ORDER.get(ln.group, 9), ln.title))
    timeline = Timeline(start, end, ordered, axis)
    for ln in ordered:
        ln.marks.sort(key=lambda m: m.at)
        for mark in ln.marks:
            mark.left = axis.position(mark.at)
            if mark.until is not None:
                mark.width = max(round(axis.position(mark.until) - mark.left, 4), 0.3)
        if len(ln.marks) > MAX_MARKS:
            ln.marks = _binned(ln.marks)
    return timeline


_GROUP_ORDER = {"tool": 0, "person": 1, "world": 2, "state": 3}


def _call_lane(call: Call, lane: Any) -> Lane:
    if call.actor == "agent":
        return lane(f"tool:{call.tool}", f"agent → {call.tool}", "tool")  # type: ignore[no-any-return]
    if call.actor.startswith("person:"):
        person = call.actor.removeprefix("person:")
        return lane(f"person:{person}", person, "person")  # type: ignore[no-any-return]
    return lane("world", "world (faults, scheduled events)", "world")  # type: ignore[no-any-return]


def _record_marks(records: Iterable[dict[str, Any]], lane: Any) -> None:
    faults: dict[str, Mark] = {}
    for record in records:
        kind, at, person = record.get("kind"), record["_at"], record.get("person")
        if kind == "knows" and record.get("via") != "owner" and person:
            lane(f"person:{person}", person, "person").marks.append(
                Mark(at, f"{person} learned {record.get('fact')}", "fact"))
        elif kind == "revealed" and person:
            lane(f"person:{person}", person, "person").marks.append(
                Mark(at, f"{person} revealed {record.get('fact')}", "fact"))
        elif kind == "told" and person:
            lane(f"person:{person}", person, "person").marks.append(
                Mark(at, f"{person} was told {record.get('fact') or ''}".strip(), "fact"))
        elif kind == "decided" and person:
            lane(f"person:{person}", person, "person").marks.append(
                Mark(at, f"{person} decided {record.get('decision')}: {record.get('option')}", "decision"))
        elif kind == "predicate" and record.get("held"):
            lane("milestones", "milestones (first held)", "world").marks.append(
                Mark(at, f"first held: {_predicate_label(record.get('key'))}", "milestone"))
        elif kind == "fault_started":
            mark = Mark(at, f"fault {record.get('fault')} active", "fault", until=None)
            faults[str(record.get("fault"))] = mark
            lane("faults", "faults", "world").marks.append(mark)
        elif kind == "fault_resolved":
            name = str(record.get("fault"))
            lane("faults", "faults", "world").marks.append(Mark(at, f"fault {name} resolved", "ok"))
            if name in faults:
                faults[name].until = at
                faults[name].label = f"fault {name} active until it was resolved"
    for mark in faults.values():
        if mark.until is None:  # never resolved: it lasts to the end of the trial
            mark.until = max((r["_at"] for r in records), default=mark.at)
            mark.label = f"fault {mark.label.split()[1]} never resolved"


def _tool_state_marks(world: dict[str, Any], lane: Any) -> None:
    for name, spec in registry().tools.items():
        snapshot = world.get(name)
        if spec.timeline is None or not isinstance(snapshot, dict):
            continue
        try:
            marks = spec.timeline(snapshot)
        except Exception:  # a malformed world.json must not take the page down
            continue
        for mark in marks:
            at = epoch(mark.at)
            if at is not None:
                lane(f"state:{name}", f"{name} state", "state").marks.append(
                    Mark(at, mark.label, TOOL_STATES.get(mark.state, "info")))


def _predicate_label(key: Any) -> str:
    """A predicate key (its JSON) as short text: ``message to=laura from_user=slack_bot``,
    ``decided mike severity p1``, ``state github.production repo=github_orders commit=github_good``."""
    try:
        data = json.loads(key) if isinstance(key, str) else key
    except ValueError:
        return str(key)[:160]
    return _readable(data, top=True)[:160]


def _readable(value: Any, top: bool = False) -> str:
    """A predicate's JSON as words, never a Python repr: a map's one key (or the predicate's
    kind) followed by its body, other keys as ``key=value``, lists space separated."""
    if isinstance(value, dict):
        parts = []
        for key, item in value.items():
            if item in (None, [], {}, ""):
                continue
            if top or (len(value) == 1 and isinstance(item, (dict, list))):
                parts.append(f"{key} {item if isinstance(item, str) else _readable(item)}")
            else:
                parts.append(f"{key}=({_readable(item)})" if isinstance(item, dict) else f"{key}={_readable(item)}")
        return " ".join(parts)
    if isinstance(value, list):
        return " ".join(_readable(item) for item in value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False) if not value or any(c.isspace() for c in value) else value
    return json.dumps(value)


def _binned(marks: list[Mark]) -> list[Mark]:
    """Bins of equal width on the axis (placed marks: breaks hold none)."""
    bins: dict[int, list[Mark]] = {}
    for mark in marks:
        bins.setdefault(min(int(mark.left * MAX_MARKS / 100), MAX_MARKS - 1), []).append(mark)
    out = []
    for group in bins.values():
        first = group[0]
        failed = sum(1 for m in group if m.kind == "err")
        label = f"{len(group)} calls from #{first.seq}" + (f", {failed} failed" if failed else "")
        out.append(Mark(first.at, label if len(group) > 1 else first.label, "err" if failed else first.kind,
                        first.seq, len(group), left=first.left))
    return out


def format_offset(seconds: float) -> str:
    """``+2m5s`` style, as ``ancha explain`` says times."""
    if seconds < 1:
        return f"{seconds * 1000:.0f}ms" if seconds > 0 else "0s"
    whole = int(round(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes}m" if minutes else f"{hours}h"
    if minutes:
        return f"{minutes}m{secs}s" if secs else f"{minutes}m"
    return f"{secs}s"
