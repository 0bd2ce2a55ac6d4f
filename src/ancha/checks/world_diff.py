"""A trial's world from seed to end: what changed, and above all what the agent changed
that was there before.

The end is the trial's ``world.json``. The seed is rebuilt, not stored: a trial's world is
deterministic in its scene and trial number (one RNG per trial), so building the
environment again from the scene gives the world as the agent first saw it, ids and all,
as long as the scene file still has the hash the run recorded.

The console shows these changes (``ancha.console.world_diff``); the collateral-change check
(``collateral.py``) reads them per object.
"""

from __future__ import annotations

import json
import re
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from ancha.scene.errors import SceneInvalid
from ancha.scene.loading import load_scene
from ancha.scene.model import Scene
from ancha.world.environment import Environment
from ancha.world.kernel.tool import RecordRef
from ancha.world.registry import catalog

IDENTITY_KEYS = ("id", "ts", "number", "key", "name", "login", "sha", "path", "email")
"""How list items are matched between seed and end: the first key every item has, unique."""
MAX_CHANGES = 2000
WORLD_URL = re.compile(rb"https?://[^/\s\"]+/envs/env_[A-Za-z0-9_]+")
"""The server address and environment id in a tool's own URLs (``self``, ``url``): they differ
between any two builds of one world, so both sides are read with them replaced."""
WORLD_URL_MARK = b"{world}"
VALUE_CHARS = 400


class SeedUnavailable(Exception):
    """Why the seed could not be rebuilt (the scene file moved or changed since the run)."""


class Step(NamedTuple):
    """One step of a change's path: a dict key (``key`` None), a list item found by its
    identity (``key`` is the identity key, ``name`` its value) or by its position (``key`` ``#``)."""

    name: str
    key: str | None = None

    @property
    def keyed(self) -> bool:
        """A list item found by its identity: an object of the world (a message, a user)."""
        return self.key is not None and self.key != "#"

    def text(self, first: bool) -> str:
        if self.key is None:
            return self.name if first else "." + self.name
        return f"[{self.name}]" if self.key == "#" else f"[{self.key}={self.name}]"


@dataclass(frozen=True, slots=True)
class Change:
    path: str
    kind: str
    """``added`` (new since the seed), ``changed`` or ``removed`` (something that was there)."""
    before: str | None
    after: str | None
    steps: tuple[Step, ...] = ()
    """``path`` as its steps."""

    @property
    def touched_seed(self) -> bool:
        return self.kind in ("changed", "removed")


@dataclass(frozen=True, slots=True)
class Seed:
    """A trial's world as the agent first saw it, and the refs of the scene in it."""

    world: dict[str, Any]
    refs: dict[str, RecordRef]


def seed_world(scene_path: str, source_hash: str, trial: int) -> dict[str, Any]:
    """The trial's world before anything happened, rebuilt from its scene file."""
    path = Path(scene_path)
    try:
        scene = load_scene(path, catalog())
    except (OSError, SceneInvalid) as exc:
        raise SeedUnavailable(f"the scene file {scene_path} could not be loaded: {exc}") from exc
    if source_hash and scene.source_hash != source_hash:
        raise SeedUnavailable(f"the scene file {scene_path} changed since this run, so its seed cannot be rebuilt")
    return scene_seed(scene, trial).world


def scene_seed(scene: Scene, trial: int, agent: dict[str, Any] | None = None, seed: int | None = None) -> Seed:
    """Trial ``trial`` of ``scene`` as it starts (``agent``: the agent settings the world was
    built with, which decide the tools' URLs; ``seed``: the run's), with its refs."""
    env = Environment("env_seed_" + secrets.token_hex(4), scene, trial, agent, seed=seed)
    try:
        return Seed(read_world(b"".join(env.snapshot_json())), dict(env.refs))
    finally:
        env.close()


def read_world(raw: bytes) -> dict[str, Any]:
    """A world's JSON with its URLs made comparable (``WORLD_URL``)."""
    data = json.loads(WORLD_URL.sub(WORLD_URL_MARK, raw))
    return data if isinstance(data, dict) else {}


def diff_worlds(seed: Any, end: Any, limit: int = MAX_CHANGES) -> tuple[list[Change], int]:
    """Changes from ``seed`` to ``end`` (at most ``limit``) and how many there were."""
    changes: list[Change] = []
    total = _Differ(changes, limit).diff(seed, end, ())
    return changes, total


def path_text(steps: tuple[Step, ...]) -> str:
    """``slack.messages.C1[ts=1.2]``: steps as the diff writes paths."""
    return "".join(step.text(i == 0) for i, step in enumerate(steps))


class _Differ:
    def __init__(self, out: list[Change], limit: int) -> None:
        self.out = out
        self.limit = limit

    def diff(self, before: Any, after: Any, steps: tuple[Step, ...]) -> int:
        if before == after:
            return 0
        if isinstance(before, dict) and isinstance(after, dict):
            count = 0
            # In the worlds' own order (a set's order would change with the hash seed).
            for key in [*before, *(key for key in after if key not in before)]:
                sub = (*steps, Step(str(key)))
                if key not in after:
                    count += self.add("removed", sub, _show(before[key]), None)
                elif key not in before:
                    count += self.add("added", sub, None, _show(after[key]))
                else:
                    count += self.diff(before[key], after[key], sub)
            return count
        if isinstance(before, list) and isinstance(after, list):
            key = _identity(before, after)
            if key is not None:
                return self.diff_keyed(before, after, key, steps)
            if len(before) == len(after):
                return sum(self.diff(b, a, (*steps, Step(str(i), "#")))
                           for i, (b, a) in enumerate(zip(before, after, strict=True)))
        return self.add("changed", steps, _show(before), _show(after))

    def diff_keyed(self, before: list[Any], after: list[Any], key: str, steps: tuple[Step, ...]) -> int:
        old = {item[key]: item for item in before}
        new = {item[key]: item for item in after}
        count = 0
        for ident, item in old.items():
            where = (*steps, Step(str(ident), key))
            if ident not in new:
                count += self.add("removed", where, _show(item), None)
            else:
                count += self.diff(item, new[ident], where)
        for ident, item in new.items():
            if ident not in old:
                count += self.add("added", (*steps, Step(str(ident), key)), None, _show(item))
        return count

    def add(self, kind: str, steps: tuple[Step, ...], before: str | None, after: str | None) -> int:
        if len(self.out) < self.limit:
            self.out.append(Change(path_text(steps), kind, before, after, steps))
        return 1


def _identity(before: list[Any], after: list[Any]) -> str | None:
    if not (before or after) or not all(isinstance(i, dict) for i in before + after):
        return None
    for key in IDENTITY_KEYS:
        sides = ([i.get(key) for i in before], [i.get(key) for i in after])
        if all(isinstance(v, str | int) and not isinstance(v, bool) for side in sides for v in side) \
                and all(len(set(side)) == len(side) for side in sides):
            return key
    return None


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return text if len(text) <= VALUE_CHARS else text[:VALUE_CHARS] + f"… ({len(text)} characters)"
