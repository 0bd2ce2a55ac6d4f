"""A trial's world diff as people read it: per tool, per object (a message, a pull request, a
downtime, a user), each rendered by its own tool (``ToolSpec.render``).

The diff (``ancha.checks.world_diff``) lists leaves that changed. Each leaf belongs to the
innermost object on its path that its tool renders: a tool answers None for a level it does
not show on its own (a pull request's comment), and the leaf goes to the object around it. A
leaf in no list of objects (``datadog.logs.added``) belongs to its section. What no tool
renders is shown generically, its changed fields with times made readable.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import tzinfo
from typing import Any

from ancha.checks.world_diff import Change, Step, path_text
from ancha.world.kernel.rendered import Field, FieldChange, ObjectChange, Rendered, parse_time, readable_time

Renderer = Callable[[ObjectChange], "Rendered | None"]
TIME_WORDS = ("at", "ts", "time", "date", "created", "modified", "updated", "changed", "start", "end")
"""A field whose name ends in one of these and whose value reads as a time is shown as a date."""
GENERIC_BOOKKEEPING = ("updated", "modified", "_links", "count", "cursor", "last_", "etag", "version")
"""Names of fields the world keeps up to date by itself (``*_count``, ``updated_at``)."""


@dataclass
class WorldObject:
    """One object of the world that changed, and how its tool shows it."""

    tool: str
    steps: tuple[Step, ...]
    rendered: Rendered
    kind: str
    changes: list[Change] = field(default_factory=list)
    """Its leaves as the diff gives them (the raw JSON view)."""
    also_changed: bool = False
    """The agent changed it and no check mentions it."""

    @property
    def where(self) -> str:
        """Its path inside its tool (``messages.C1[ts=1.2]``)."""
        return path_text(self.steps[1:])

    @property
    def anchor(self) -> str:
        return "obj-" + "".join(ch if ch.isalnum() else "-" for ch in path_text(self.steps))[:120]


@dataclass
class ToolChanges:
    """A tool's part of the diff: its objects, those worth reading first."""

    tool: str
    objects: list[WorldObject] = field(default_factory=list)

    @property
    def shown(self) -> list[WorldObject]:
        return [o for o in self.objects if not o.rendered.bookkeeping]

    @property
    def bookkeeping(self) -> list[WorldObject]:
        return [o for o in self.objects if o.rendered.bookkeeping]


def world_objects(changes: list[Change], seed: Mapping[str, Any], end: Mapping[str, Any],
                  renderers: Mapping[str, Renderer | None], zone: tzinfo) -> list[ToolChanges]:
    """``changes`` per tool and per object, each rendered by its tool (``renderers``, by name)."""
    grouper = _Grouper(seed, end, renderers, zone)
    for change in changes:
        grouper.place(change)
    return grouper.result()


class _Grouper:
    def __init__(self, seed: Mapping[str, Any], end: Mapping[str, Any], renderers: Mapping[str, Renderer | None],
                 zone: tzinfo) -> None:
        self.seed, self.end, self.renderers, self.zone = seed, end, renderers, zone
        self.under: dict[tuple[Step, ...], list[Change]] = {}
        self.placed: dict[tuple[Step, ...], list[Change]] = {}
        self.pending: list[tuple[Change, list[tuple[Step, ...]]]] = []
        self.keyed: dict[tuple[int, str], dict[str, Mapping[str, Any]]] = {}
        """Each keyed list's items by key, built once: a world of thousands of messages is
        not scanned again for every object (``_find``)."""

    def place(self, change: Change) -> None:
        steps = change.steps
        candidates = [steps[:i + 1] for i in range(len(steps) - 1, 0, -1) if steps[i].keyed]
        section = steps[:2] if len(steps) >= 2 else steps
        if section not in candidates:
            candidates.append(section)
        for candidate in candidates:
            self.under.setdefault(candidate, []).append(change)
        self.pending.append((change, candidates))

    def result(self) -> list[ToolChanges]:
        rendered: dict[tuple[Step, ...], tuple[Rendered | None, ObjectChange]] = {}
        chosen: dict[tuple[Step, ...], list[Change]] = {}
        for change, candidates in self.pending:
            target = None
            for candidate in candidates:
                if candidate not in rendered:
                    obj = self.object_change(candidate)
                    rendered[candidate] = (self.render(candidate[0].name, obj), obj)
                if rendered[candidate][0] is not None:
                    target = candidate
                    break
            if target is None:
                target = candidates[0]
                obj = rendered[target][1]
                rendered[target] = (generic(obj), obj)
            chosen.setdefault(target, []).append(change)
        tools: dict[str, ToolChanges] = {}
        for steps, leaves in chosen.items():
            shown, obj = rendered[steps]
            assert shown is not None
            tool = steps[0].name
            tools.setdefault(tool, ToolChanges(tool)).objects.append(WorldObject(tool, steps, shown, obj.kind, leaves))
        return list(tools.values())

    def render(self, tool: str, obj: ObjectChange) -> Rendered | None:
        renderer = self.renderers.get(tool)
        return renderer(obj) if renderer is not None else None

    def object_change(self, steps: tuple[Step, ...]) -> ObjectChange:
        before, before_parents = _find(self.seed, steps, self.keyed)
        after, after_parents = _find(self.end, steps, self.keyed)
        kind = "added" if before is None else "removed" if after is None else "changed"
        leaves = tuple(FieldChange(path_text(c.steps[len(steps):]).lstrip("."), c.kind, _load(c.before),
                                   _load(c.after)) for c in self.under.get(steps, ()))
        last = steps[-1]
        collection = ".".join(s.name for s in steps[1:] if s.key is None)
        snapshot = self.end.get(steps[0].name)
        return ObjectChange(collection, f"{last.key}={last.name}" if last.keyed else "", kind, before, after, leaves,
                            tuple(after_parents or before_parents),
                            snapshot if isinstance(snapshot, Mapping) else None, self.zone)


def _find(world: Any, steps: tuple[Step, ...],
          keyed: dict[tuple[int, str], dict[str, Mapping[str, Any]]] | None = None,
          ) -> tuple[Any, list[Mapping[str, Any]]]:
    """The value at ``steps`` and the keyed objects holding it, outermost first. ``keyed``
    keeps the lists it indexed (by ``id``, as the worlds do not change while it is used)."""
    node: Any = world
    parents: list[Mapping[str, Any]] = []
    for i, step in enumerate(steps):
        if step.key is None:
            node = node.get(step.name) if isinstance(node, Mapping) else None
        elif step.key == "#":
            index = int(step.name)
            node = node[index] if isinstance(node, list) and index < len(node) else None
        else:
            node = _keyed_item(node, step, keyed) if isinstance(node, list) else None
            if isinstance(node, Mapping) and i < len(steps) - 1:
                parents.append(node)
        if node is None:
            return None, parents
    return node, parents


def _keyed_item(items: list[Any], step: Step,
                keyed: dict[tuple[int, str], dict[str, Mapping[str, Any]]] | None) -> Mapping[str, Any] | None:
    """The first item of ``items`` whose ``step.key`` is ``step.name``."""
    assert step.key is not None
    if keyed is None:
        return next((item for item in items if isinstance(item, Mapping) and str(item.get(step.key)) == step.name),
                    None)
    index = keyed.get((id(items), step.key))
    if index is None:
        index = keyed[(id(items), step.key)] = {}
        for item in items:
            if isinstance(item, Mapping):
                index.setdefault(str(item.get(step.key)), item)
    return index.get(step.name)


def _load(text: str | None) -> Any:
    """A diff value back as JSON (a value cut at ``VALUE_CHARS`` stays text)."""
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text


def generic(obj: ObjectChange) -> Rendered:
    """An object no tool renders: its changed fields, times readable; bookkeeping when every
    field that changed is one the world keeps by itself."""
    title = (obj.collection or "section") + (f" [{obj.ident}]" if obj.ident else "")
    shown = tuple(Field(f.path or "(whole)", _value(f.path, f.after, obj.zone) if f.kind != "removed" else "removed",
                        _value(f.path, f.before, obj.zone) if f.kind == "changed" else None)
                  for f in obj.fields[:20])
    bookkeeping = obj.kind == "changed" and all(_bookkeeping(f.path) for f in obj.fields)
    return Rendered("object", title, shown, bookkeeping=bookkeeping)


def _bookkeeping(path: str) -> bool:
    leaf = path.rsplit(".", 1)[-1].lower()
    return not path or any(word in leaf for word in GENERIC_BOOKKEEPING) or leaf == "added"


def _value(path: str, value: Any, zone: tzinfo) -> str:
    leaf = path.rsplit(".", 1)[-1].lower()
    if leaf.endswith(TIME_WORDS) and parse_time(value) is not None:
        return readable_time(value, zone)
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 300 else text[:300] + "…"
