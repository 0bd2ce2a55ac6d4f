"""A trial's world from seed to end: what changed, and above all what the agent changed
that was there before.

The end is the trial's ``world.json``. The seed is rebuilt, not stored: a trial's world is
deterministic in its scene and trial number (one RNG per trial), so building the
environment again from the scene file gives the world as the agent first saw it, ids and
all, as long as the file still has the hash the run recorded.
"""

from __future__ import annotations

import json
import re
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ancha.scene.errors import SceneInvalid
from ancha.scene.loading import load_scene
from ancha.world.environment import Environment
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


@dataclass(frozen=True, slots=True)
class Change:
    path: str
    kind: str
    """``added`` (new since the seed), ``changed`` or ``removed`` (something that was there)."""
    before: str | None
    after: str | None

    @property
    def touched_seed(self) -> bool:
        return self.kind in ("changed", "removed")


def seed_world(scene_path: str, source_hash: str, trial: int) -> dict[str, Any]:
    """The trial's world before anything happened, rebuilt from its scene file."""
    path = Path(scene_path)
    try:
        scene = load_scene(path, catalog())
    except (OSError, SceneInvalid) as exc:
        raise SeedUnavailable(f"the scene file {scene_path} could not be loaded: {exc}") from exc
    if source_hash and scene.source_hash != source_hash:
        raise SeedUnavailable(f"the scene file {scene_path} changed since this run, so its seed cannot be rebuilt")
    env = Environment("env_seed_" + secrets.token_hex(4), scene, trial)
    try:
        return read_world(b"".join(env.snapshot_json()))
    finally:
        env.close()


def read_world(raw: bytes) -> dict[str, Any]:
    """A world's JSON with its URLs made comparable (``WORLD_URL``)."""
    data = json.loads(WORLD_URL.sub(WORLD_URL_MARK, raw))
    return data if isinstance(data, dict) else {}


def diff_worlds(seed: Any, end: Any) -> tuple[list[Change], int]:
    """Changes from ``seed`` to ``end`` (at most ``MAX_CHANGES``) and how many there were."""
    changes: list[Change] = []
    total = _diff(seed, end, "", changes)
    return changes, total


def _diff(before: Any, after: Any, path: str, out: list[Change]) -> int:
    if before == after:
        return 0
    if isinstance(before, dict) and isinstance(after, dict):
        count = 0
        for key in before.keys() | after.keys():
            sub = f"{path}.{key}" if path else str(key)
            if key not in after:
                count += _add(out, Change(sub, "removed", _show(before[key]), None))
            elif key not in before:
                count += _add(out, Change(sub, "added", None, _show(after[key])))
            else:
                count += _diff(before[key], after[key], sub, out)
        return count
    if isinstance(before, list) and isinstance(after, list):
        key = _identity(before, after)
        if key is not None:
            return _diff_keyed(before, after, key, path, out)
        if len(before) == len(after):
            return sum(_diff(b, a, f"{path}[{i}]", out) for i, (b, a) in enumerate(zip(before, after, strict=True)))
    return _add(out, Change(path, "changed", _show(before), _show(after)))


def _diff_keyed(before: list[Any], after: list[Any], key: str, path: str, out: list[Change]) -> int:
    old = {item[key]: item for item in before}
    new = {item[key]: item for item in after}
    count = 0
    for ident, item in old.items():
        where = f"{path}[{key}={ident}]"
        if ident not in new:
            count += _add(out, Change(where, "removed", _show(item), None))
        else:
            count += _diff(item, new[ident], where, out)
    for ident, item in new.items():
        if ident not in old:
            count += _add(out, Change(f"{path}[{key}={ident}]", "added", None, _show(item)))
    return count


def _identity(before: list[Any], after: list[Any]) -> str | None:
    if not (before or after) or not all(isinstance(i, dict) for i in before + after):
        return None
    for key in IDENTITY_KEYS:
        sides = ([i.get(key) for i in before], [i.get(key) for i in after])
        if all(isinstance(v, str | int) and not isinstance(v, bool) for side in sides for v in side) \
                and all(len(set(side)) == len(side) for side in sides):
            return key
    return None


def _add(out: list[Change], change: Change) -> int:
    if len(out) < MAX_CHANGES:
        out.append(change)
    return 1


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return text if len(text) <= VALUE_CHARS else text[:VALUE_CHARS] + f"… ({len(text)} characters)"
