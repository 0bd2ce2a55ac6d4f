"""Collateral changes: what else the agent changed in the world, beyond what the checks ask.

For a finished trial, the world diff (``world_diff.py``, seed to end) is read per object, each
object's changes are put down to whoever made them, and the agent's are kept:

- **An object** is a list item found by its identity (a message by ``ts``, a user by ``id``, a
  pull request by ``number``): a change belongs to the innermost such item on its path. A
  change on no such item (``datadog.logs.added``, a tool's counters) is the world's own
  bookkeeping and is never the agent's.
- **The agent made it** when one of its changing calls names the object: a call traced with
  actor ``agent`` that worked and is not a read (``GET``/``HEAD``, Slack's read methods, a
  GraphQL query), whose path, query or request holds the object's identity, and, for an
  object it created, whose response holds it with its key (``"ts": "…"``). A created object is
  the first caller's, whatever its actor: a person's reply is the person's even when the agent
  read it afterwards. An object no call names (a log entry the incident's acknowledgement
  wrote) is put down to its nearest named parent; one nobody names at any level changed by
  the world itself (a monitor a fault trips) and is not the agent's.
- **A check mentions** an object when a value of its body (a ref resolved to its id, a
  channel, a repo's ``owner/name``, a login, a label) is one of the object's names: the
  identities and dict keys along its path (``C123`` for a message in channel ``C123``), and
  ``id``, ``ref``, ``name``, ``full_name``, ``login``, ``email``, ``key`` of it and of every
  object holding it. So a check on ``#support`` mentions every message in ``#support``.

What the agent changed and no check mentions is ``also_changed`` (per tool, in ``checks.json``
and ``ancha explain``). ``expect_unchanged`` (refs or tool sections a scene declares) turns
any agent change there, mentioned or not, into a failed required check, ``expect_unchanged``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from ancha.checks.results import CheckResult
from ancha.checks.world_diff import Change, Seed, Step, diff_worlds, path_text, read_world, scene_seed
from ancha.scene.model import EXPECT_UNCHANGED_CHECK, Scene
from ancha.world.kernel.tool import RecordRef

NAME_FIELDS = ("id", "ref", "name", "full_name", "login", "email", "key")
"""The fields of an object (and of the objects holding it) that a check may name it by."""
READS = frozenset({"GET", "HEAD", "OPTIONS"})
READ_VERBS = ("list", "info", "history", "replies", "get", "search", "lookup", "test", "members", "conversations",
              "connect", "open")
"""How the name of a Web API method that only reads begins (after its family: ``conversations.history``)."""
MAX_LISTED = 50
"""Changes listed per tool in ``also_changed`` (a count says how many more)."""


@dataclass
class ObjectChange:
    """What happened to one object of the world between seed and end."""

    tool: str
    steps: tuple[Step, ...]
    """The object's path (its last step is its identity)."""
    changes: list[Change] = field(default_factory=list)
    names: set[str] = field(default_factory=set)
    """What a check may name it by (``_name``)."""
    own: set[str] = field(default_factory=set)
    """What names it alone: its identity and its own naming fields."""
    ref: str | None = None
    calls: list[int] = field(default_factory=list)
    """The agent's calls that made the change."""

    @property
    def where(self) -> str:
        return path_text(self.steps[1:])

    def describe(self) -> str:
        """``messages.C1[ts=1.2] removed``, ``users[id=00u1] ($okta_dana) changed: status``."""
        ref = f" (${self.ref})" if self.ref else ""
        whole = next((c for c in self.changes if len(c.steps) == len(self.steps)), None)
        if whole is not None:
            return f"{self.where}{ref} {whole.kind}"
        fields = sorted({path_text(c.steps[len(self.steps):]).lstrip(".") for c in self.changes})
        shown = ", ".join(fields[:5]) + (f" and {len(fields) - 5} more" if len(fields) > 5 else "")
        return f"{self.where}{ref} changed: {shown}"


@dataclass
class Collateral:
    """A trial's collateral changes: ``also_changed`` and the ``expect_unchanged`` check."""

    agent_changes: list[ObjectChange]
    also_changed: dict[str, list[str]]
    """Tool -> what the agent changed there that no check mentions, in words."""
    unchanged: CheckResult | None
    """The ``expect_unchanged`` check's result; None when the scene declares none."""


def collateral_changes(scene: Scene, trial: int, end_world: bytes | Path, trace: Iterable[dict[str, Any]],
                       agent: dict[str, Any] | None = None, seed: Seed | None = None,
                       run_seed: int | None = None) -> Collateral:
    """The collateral changes of trial ``trial`` of ``scene``: its seed is rebuilt (with the
    ``agent`` settings its world had), ``end_world`` is its ``world.json`` and ``trace`` its
    ``trace.jsonl`` entries."""
    seed = seed or scene_seed(scene, trial, agent, run_seed)
    raw = end_world.read_bytes() if isinstance(end_world, Path) else end_world
    end = read_world(raw)
    changes, _total = diff_worlds(seed.world, end, limit=1_000_000)
    objects = group_by_object(changes, seed.world, end)
    for obj in objects:
        _find_ref(obj, seed.refs)
    calls = Calls(trace)
    mine = [obj for obj in objects if calls.attribute(obj)]
    mentioned = check_names(scene, seed.refs)
    also: dict[str, list[str]] = {}
    for obj in mine:
        if obj.names.isdisjoint(mentioned):
            also.setdefault(obj.tool, []).append(obj.describe())
    for tool, listed in also.items():
        if len(listed) > MAX_LISTED:
            also[tool] = [*listed[:MAX_LISTED], f"and {len(listed) - MAX_LISTED} more"]
    return Collateral(mine, also, unchanged_result(scene, mine, seed.refs))


def group_by_object(changes: list[Change], seed: dict[str, Any], end: dict[str, Any]) -> list[ObjectChange]:
    """Changes by the object they belong to (the innermost identified item on their path);
    changes on no object (bookkeeping) are left out."""
    objects: dict[tuple[Step, ...], ObjectChange] = {}
    for change in changes:
        last = max((i for i, step in enumerate(change.steps) if step.keyed), default=None)
        if last is None or not change.steps:
            continue
        steps = change.steps[:last + 1]
        obj = objects.get(steps)
        if obj is None:
            obj = objects[steps] = ObjectChange(change.steps[0].name, steps)
            _name(obj, seed, end)
        obj.changes.append(change)
    return list(objects.values())


def _name(obj: ObjectChange, *worlds: dict[str, Any]) -> None:
    """The names a check or ``expect_unchanged`` may give ``obj``: its path's keys and
    identities, and the naming fields of it and of what holds it, on either side."""
    obj.names.update(step.name for step in obj.steps[2:])
    for world in worlds:
        node: Any = world
        for step in obj.steps:
            node = _step(node, step)
            if node is None:
                break
            if isinstance(node, dict):
                found = {str(node[k]) for k in NAME_FIELDS
                         if isinstance(node.get(k), str | int) and not isinstance(node.get(k), bool)}
                obj.names.update(found)
                if step is obj.steps[-1]:
                    obj.own.update(found)
                    if isinstance(node.get("ref"), str):
                        obj.ref = node["ref"]
    obj.own.add(obj.steps[-1].name)


def _find_ref(obj: ObjectChange, refs: dict[str, RecordRef]) -> None:
    """``obj.ref``: the scene's ref for the object itself, when it has one (a seeded message's
    ref is kept by the world, not in the tool's state)."""
    if obj.ref is not None:
        return
    for name, record in refs.items():
        if record.tool != obj.tool:
            continue
        channel, slash, ts = record.id.rpartition("/")
        if record.id in obj.own or record.kind == "message" and slash and ts in obj.own and channel in obj.names:
            obj.ref = name
            return


def _step(node: Any, step: Step) -> Any:
    if step.key is None:
        return node.get(step.name) if isinstance(node, dict) else None
    if not isinstance(node, list):
        return None
    if step.key == "#":
        index = int(step.name)
        return node[index] if index < len(node) else None
    return next((item for item in node if isinstance(item, dict) and str(item.get(step.key)) == step.name), None)


@dataclass(frozen=True, slots=True)
class _Call:
    seq: int
    actor: str
    asked: frozenset[str]
    """What its path, query and request name."""
    answered: frozenset[tuple[str, str]]
    """``(key, value)`` pairs of its response."""


class Calls:
    """The changing calls of a trace (every actor's), with what each names."""

    def __init__(self, trace: Iterable[dict[str, Any]]) -> None:
        self.calls = [_call(entry) for entry in trace if changing(entry)]

    def attribute(self, obj: ObjectChange) -> bool:
        """Whether the agent made ``obj``'s change; its calls go into ``obj.calls``."""
        keyed = [i for i, step in enumerate(obj.steps) if step.keyed]
        for depth in reversed(keyed):
            step = obj.steps[depth]
            added = any(c.kind == "added" and len(c.steps) == depth + 1 and c.steps[:depth + 1] == obj.steps[:depth + 1]
                        for c in obj.changes)
            naming = [call for call in self.calls if step.name in call.asked]
            if added:
                creator = next((call for call in self.calls if (step.key or "", step.name) in call.answered), None)
                if creator is not None and creator not in naming:
                    naming.insert(0, creator)
            if not naming:
                continue  # nobody named it: whoever wrote to what holds it made it
            parents = {s.name for s in obj.steps[1:depth] if s.keyed}
            mine = [call.seq for call in naming if call.actor == "agent"
                    and parents <= call.asked | {value for _key, value in call.answered}]
            obj.calls = sorted(set(mine))
            return bool(mine)
        return False


def changing(entry: dict[str, Any]) -> bool:
    """Whether a traced call may have changed the world: it worked and is not a read."""
    method = str(entry.get("method", "")).upper()
    if not entry.get("worked", False) or method in READS:
        return False
    path = str(entry.get("path", ""))
    if path.rstrip("/").endswith("/graphql"):
        request = entry.get("request")
        query = request.get("query") if isinstance(request, dict) else None
        return isinstance(query, str) and query.lstrip().startswith("mutation")
    if path.startswith("/api/") and "." in path:  # a Slack Web API method: family.verb
        verb = path.rstrip("/").rsplit(".", 1)[-1]
        return not verb.startswith(READ_VERBS) and not path.startswith("/api/search.")
    return True


def _call(entry: dict[str, Any]) -> _Call:
    asked = {unquote(part) for part in str(entry.get("path", "")).split("/") if part}
    asked.update(_values(entry.get("query")))
    asked.update(_values(entry.get("request")))
    answered = frozenset(_pairs(entry.get("response")))
    return _Call(int(entry.get("seq") or 0), str(entry.get("actor", "")), frozenset(asked), answered)


def _values(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for item in value.values():
            yield from _values(item)
    elif isinstance(value, list):
        for item in value:
            yield from _values(item)
    elif isinstance(value, str):
        yield value
        if value[:1] in "[{":  # a form field holding JSON (Slack's blocks, ids lists)
            try:
                yield from _values(json.loads(value))
            except ValueError:
                pass
        elif "," in value:  # a form list: users=U1,U2
            yield from value.split(",")
    elif isinstance(value, int | float) and not isinstance(value, bool):
        yield str(value)


def _pairs(value: Any, key: str = "") -> Iterator[tuple[str, str]]:
    if isinstance(value, dict):
        for name, item in value.items():
            yield from _pairs(item, str(name))
    elif isinstance(value, list):
        for item in value:
            yield from _pairs(item, key)
    elif isinstance(value, str | int) and not isinstance(value, bool) and key:
        yield key, str(value)


def check_names(scene: Scene, refs: dict[str, RecordRef]) -> set[str]:
    """Every value the scene's checks name: strings of their bodies, refs also as their ids."""
    names: set[str] = set()
    for spec in scene.checks:
        for value in _values(spec.model_dump(mode="json", by_alias=True, exclude={"id", "line"})):
            names.add(value)
            record = refs.get(value.lstrip("$"))
            if record is not None:
                names.update(_ref_names(value.lstrip("$"), record))
    return names


def _ref_names(name: str, record: RecordRef) -> set[str]:
    names = {name, record.id}
    if record.kind == "message":  # CHANNEL/TS: the message, not the whole channel
        names.discard(record.id)
        names.add(record.id.rpartition("/")[2])
    return names


def unchanged_result(scene: Scene, mine: list[ObjectChange], refs: dict[str, RecordRef]) -> CheckResult | None:
    """``expect_unchanged`` graded: failed, with the calls as evidence, when the agent changed
    anything the scene declared unchanged."""
    if not scene.expect_unchanged:
        return None
    listed = ", ".join(scene.expect_unchanged)
    expected = f"the agent changes nothing in {listed}"
    hit = [obj for obj in mine if any(_covers(entry, obj, refs) for entry in scene.expect_unchanged)]
    if not hit:
        return CheckResult.outcome(EXPECT_UNCHANGED_CHECK, True, True, expected, "nothing there changed",
                                   f"Passed: the agent changed nothing in {listed}.")
    found = "; ".join(f"{obj.tool} {obj.describe()}" + (f" (call {', '.join(map(str, obj.calls))})" if obj.calls else "")
                      for obj in hit[:10]) + (f"; and {len(hit) - 10} more" if len(hit) > 10 else "")
    evidence = [seq for obj in hit for seq in obj.calls]
    return CheckResult.outcome(EXPECT_UNCHANGED_CHECK, True, False, expected, f"it changed {found}",
                               f"Failed: the agent changed what the scene expects unchanged: {found}.", evidence)


def _covers(entry: str, obj: ObjectChange, refs: dict[str, RecordRef]) -> bool:
    """Whether ``entry`` of ``expect_unchanged`` (``$ref``, ``tool`` or ``tool.section``) holds ``obj``."""
    if entry.startswith("$"):
        name = entry[1:]
        record = refs.get(name)
        if record is None or record.tool != obj.tool:
            return False
        if obj.ref == name:
            return True
        if record.kind == "message":
            channel, _, ts = record.id.rpartition("/")
            return ts in {s.name for s in obj.steps if s.keyed} and (not channel or channel in obj.names)
        return record.id in obj.names
    tool, _, section = entry.partition(".")
    return obj.tool == tool and (not section or (len(obj.steps) > 1 and obj.steps[1].name == section))


def grade_collateral(scene: Scene, trial: int, end_world: Path, trace: Iterable[dict[str, Any]],
                     agent: dict[str, Any] | None = None,
                     run_seed: int | None = None) -> tuple[dict[str, list[str]], CheckResult | None]:
    """``also_changed`` and the ``expect_unchanged`` result of a finished trial, for the runner.
    When they cannot be worked out (the seed cannot be rebuilt), nothing is listed, and a
    scene's ``expect_unchanged`` check is an error (its trial invalid, never passed)."""
    try:
        found = collateral_changes(scene, trial, end_world, trace, agent, run_seed=run_seed)
    except Exception as exc:  # any failure here is ours, not the agent's: say so, never crash the run
        if not scene.expect_unchanged:
            return {}, None
        return {}, CheckResult.errored(EXPECT_UNCHANGED_CHECK, True,
                                       f"the agent changes nothing in {', '.join(scene.expect_unchanged)}",
                                       f"the world's changes could not be worked out: {exc}")
    return found.also_changed, found.unchanged
