"""``ancha fork --set PATH=VALUE`` and ``--patch FILE.yaml``: a scene changed from the fork on.

The change is made to the scene file as written (YAML), which is then read as any scene
file is, so a change is checked like the file itself. Only what can change mid-trial may:
people (a reply delay, an away window, a fact, a decision), faults (an effect, ``resolved_when``)
and ``agent.*`` (the agent's command and environment, applied to ancha.yaml's agent).
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import yaml
from ruamel.yaml import YAML

from ancha.config.yaml_source import read_yaml
from ancha.errors import AnchaUserError
from ancha.scene.loading import parse_scene_text
from ancha.scene.model import Scene
from ancha.world.registry import catalog

CHANGEABLE = ("people", "world_rules.faults")


class PatchRefused(AnchaUserError):
    pass


def parse_set(text: str) -> tuple[list[str], Any]:
    """``people.ben.replies_after=5m`` -> (["people", "ben", "replies_after"], "5m"); the value is YAML."""
    path, eq, raw = text.partition("=")
    if not eq or not path.strip():
        raise PatchRefused(f"error[PATCH_INVALID]: --set {text!r}: write PATH=VALUE\n"
                           "hint: e.g. --set people.ben.replies_after=5m")
    try:
        value = yaml.safe_load(raw) if raw.strip() else ""
    except yaml.YAMLError as exc:
        raise PatchRefused(f"error[PATCH_INVALID]: --set {text!r}: the value is not YAML: {exc}") from exc
    return [p for p in path.strip().split(".") if p], value


def _step(node: Any, key: str, where: str) -> Any:
    if isinstance(node, list):
        for item in node:  # a list item by its ref (faults) or by its index
            if isinstance(item, dict) and item.get("ref") == key:
                return item
        if key.isdigit() and int(key) < len(node):
            return node[int(key)]
        raise PatchRefused(f"error[PATCH_INVALID]: {where}: no item {key!r} (name a fault by its ref, or an index)")
    if isinstance(node, dict):
        if key not in node:
            node[key] = {}
        return node[key]
    raise PatchRefused(f"error[PATCH_INVALID]: {where}: {key!r} is inside a value, not a section")


def set_path(data: dict[str, Any], path: list[str], value: Any) -> None:
    dotted = ".".join(path)
    if not any(dotted == c or dotted.startswith(c + ".") for c in CHANGEABLE):
        raise PatchRefused(f"error[PATCH_INVALID]: --set {dotted}: a fork can change people and faults only "
                           "(people.NAME..., world_rules.faults.REF...); the rest of the world is as it was\n"
                           "hint: agent.* changes the agent (e.g. --set agent.command='python agent_v2.py')")
    node: Any = data
    for i, key in enumerate(path[:-1]):
        node = _step(node, key, ".".join(path[:i + 1]))
    last = path[-1]
    if isinstance(node, list):
        if not last.isdigit() or int(last) >= len(node):
            raise PatchRefused(f"error[PATCH_INVALID]: {dotted}: no item {last}")
        node[int(last)] = value
    elif isinstance(node, dict):
        node[last] = value
    else:
        raise PatchRefused(f"error[PATCH_INVALID]: {dotted}: cannot set inside a value")


def merge(base: Any, patch: Any, where: str = "") -> Any:
    """``patch`` over ``base``: mappings merge key by key, anything else replaces."""
    if isinstance(base, dict) and isinstance(patch, dict):
        out = dict(base)
        for key, value in patch.items():
            out[key] = merge(base.get(key), value, f"{where}.{key}" if where else str(key))
        return out
    return patch


def patched_scene(scene: Scene, sets: list[tuple[list[str], Any]], patch_file: Path | None) -> Scene | None:
    """The scene with the changes made, read as its file would be; None when there are none."""
    if not sets and patch_file is None:
        return None
    source = Path(scene.path)
    tree, problems = read_yaml(source.read_text(), str(source))  # as the scene loader reads it (YAML 1.2)
    if problems:
        raise PatchRefused(f"error[PATCH_INVALID]: {source}: {problems[0].message}")
    data = tree
    if patch_file is not None:
        try:
            patch = yaml.safe_load(patch_file.read_text())
        except (OSError, yaml.YAMLError) as exc:
            raise PatchRefused(f"error[PATCH_INVALID]: {patch_file}: {exc}") from exc
        if not isinstance(patch, dict):
            raise PatchRefused(f"error[PATCH_INVALID]: {patch_file}: a patch is a mapping, as a scene file")
        outside = [key for key in patch if key not in ("people", "world_rules")]
        if outside or set(patch.get("world_rules") or {}) - {"faults"}:
            raise PatchRefused(f"error[PATCH_INVALID]: {patch_file}: a fork can change people and faults only, "
                               f"not {', '.join(outside) or 'other world_rules'}")
        faults = (patch.get("world_rules") or {}).get("faults")
        if faults is not None:  # faults are patched by ref, each merged over its original
            by_ref = {f.get("ref"): f for f in (data.get("world_rules") or {}).get("faults") or []}
            for fault in faults:
                ref = fault.get("ref") if isinstance(fault, dict) else None
                if ref not in by_ref:
                    raise PatchRefused(f"error[PATCH_INVALID]: {patch_file}: no fault with ref {ref!r} in the scene")
                by_ref[ref].update(merge(by_ref[ref], fault))
            patch = {k: v for k, v in patch.items() if k != "world_rules"}
        data = merge(data, patch)
    for path, value in sets:
        set_path(data, path, value)
    out = io.StringIO()
    YAML(typ="rt").dump(data, out)  # the reader's own scalars (folded text, timestamps) written back as read
    text = out.getvalue()
    return parse_scene_text(text, source.name, source.parent, catalog())
