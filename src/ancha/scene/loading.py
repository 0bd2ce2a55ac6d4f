"""Loading scene files: validate everything, resolve refs and times, report every problem once."""

from __future__ import annotations

import glob
import hashlib
import os
import re
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from ancha.config.errors import sort_problems
from ancha.config.validation import INVALID
from ancha.config.yaml_source import read_yaml
from ancha.durations import parse_duration
from ancha.errors import Problem
from ancha.scene.checks import build_checks, required_ids
from ancha.scene.errors import SceneInvalid
from ancha.scene.file_model import scene_file_model
from ancha.scene.folder import MAX_SCENE_BYTES, SceneFileRefused, read_regular_file
from ancha.scene.model import DEFAULT_CLOCK_START, MAX_TASK_BYTES, SCENE_NAME_PATTERN, ClockSpec, Scene
from ancha.scene.people import build_people
from ancha.scene.predicates import Resolver
from ancha.scene.refs import RefTable
from ancha.scene.rules import build_world_rules
from ancha.scene.sections import Catalog, SectionContext
from ancha.scene.sources import Source, parse_time
from ancha.scene.unchanged import build_expect_unchanged
from ancha.scene.walker import SceneWalker


def load_scene(path: Path, catalog: Catalog) -> Scene:
    """One scene file, validated and resolved against the tools of ``catalog``
    (``ancha.world.registry.catalog()``); every problem is raised at once as ``SceneInvalid``."""
    scene, problems, files = _read(path, str(path), catalog)
    if problems or scene is None:
        raise SceneInvalid(_in_file_order(problems), files)
    return scene


def load_scenes(globs: list[str], root: Path, catalog: Catalog) -> list[Scene]:
    """Every scene file matching ``globs`` (``**`` allowed, relative to ``root``), sorted, each once.

    A glob matching nothing is a problem, as are two scenes with one name; problems of all
    scenes are raised together.
    """
    root = root.resolve()
    problems: list[Problem] = []
    paths: list[Path] = []
    for i, pattern in enumerate(globs):
        found = sorted(Path(p).resolve() for p in glob.glob(os.path.join(root, pattern), recursive=True)
                       if Path(p).is_file())
        if not found:
            hint = f"scenes globs are relative to {root}"
            if not _any_scene_file(root):  # a first run in a folder with no scene at all
                hint += "; to start here, `ancha init` writes ancha.yaml, a scene and an agent that passes it"
            problems.append(Problem(f"scenes[{i}]", f"no file matches {pattern}", hint))
        paths.extend(p for p in found if p not in paths)
    scenes: list[Scene] = []
    files: dict[str, Path] = {}
    by_name: dict[str, Scene] = {}
    for path in sorted(paths):
        display = os.path.relpath(path, root) if path.is_relative_to(root) else str(path)
        scene, found_problems, found_files = _read(path, display, catalog)
        problems.extend(_in_file_order(found_problems))
        files.update(found_files)
        if scene is None:
            continue
        other = by_name.get(scene.name)
        if other is not None:
            problems.append(Problem("name", f"scene name {scene.name} is also used by {other.path}",
                                    "give each scene a unique name", _name_line(path), display))
            files[display] = path
            continue
        by_name[scene.name] = scene
        scenes.append(scene)
    if problems:
        raise SceneInvalid(problems, files)
    return scenes


def _any_scene_file(root: Path, limit: int = 5000) -> bool:
    """Whether ``root`` holds a scene file (``scene.yaml``) below it, looking at ``limit``
    entries at most (hidden folders and ``node_modules`` skipped); True when it gave up."""
    folders, seen = [root], 0
    while folders:
        try:
            entries = list(os.scandir(folders.pop()))
        except OSError:
            continue
        for entry in entries:
            seen += 1
            if seen > limit or entry.name in ("scene.yaml", "scene.yml"):
                return True
            if entry.is_dir(follow_symlinks=False) and not entry.name.startswith(".") \
                    and entry.name != "node_modules":
                folders.append(Path(entry.path))
    return False


def _in_file_order(problems: list[Problem]) -> list[Problem]:
    """By file (the scene first, then files it reads), then by line."""
    files = list(dict.fromkeys(p.file for p in problems))
    return sorted(sort_problems(problems), key=lambda p: files.index(p.file))


def _name_line(path: Path) -> int | None:
    for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), start=1):
        if line.startswith("name:"):
            return number
    return None


def _read(path: Path, display: str, catalog: Catalog) -> tuple[Scene | None, list[Problem], dict[str, Path]]:
    absolute = path.resolve()
    files = {display: absolute}
    try:
        data = read_regular_file(absolute, MAX_SCENE_BYTES)
        text = data.decode("utf-8")
    except SceneFileRefused as exc:
        message = "no such file" if exc.missing else exc.message
        return None, [Problem("", message, "check the scenes globs in ancha.yaml", None, display)], files
    except UnicodeDecodeError as exc:
        return None, [Problem("", f"cannot read it: {exc}", "save the scene file as UTF-8", None, display)], files
    return _parse(text, data, absolute, display, files, catalog)


def parse_scene_text(text: str, display: str, folder: Path, catalog: Catalog) -> Scene:
    """A scene given as the text of a scene file (``POST /envs`` with ``scene`` as YAML), read as
    that file would be, as if it were ``display`` in ``folder`` (where its relative paths, such
    as ``files_dir``, are looked up); every problem is raised at once as ``SceneInvalid``."""
    data = text.encode("utf-8")
    if len(data) > MAX_SCENE_BYTES:
        raise SceneInvalid([Problem("", f"the scene is {len(data):,} bytes; a scene file is at most "
                                    f"{MAX_SCENE_BYTES:,}", "split it, or put long material in files", None,
                                    display)], {})
    absolute = (folder / display).resolve()
    scene, problems, files = _parse(text, data, absolute, display, {display: absolute}, catalog)
    if problems or scene is None:
        raise SceneInvalid(_in_file_order(problems), files)
    return scene


def _parse(text: str, data: bytes, absolute: Path, display: str, files: dict[str, Path],
           catalog: Catalog) -> tuple[Scene | None, list[Problem], dict[str, Path]]:
    tree, problems = read_yaml(text, display)
    if problems:
        return None, problems, files
    if tree is None or tree == {}:
        return None, [Problem("", "the scene file is empty: a scene needs at least one check",
                              "write a task and checks (ancha init writes an example scene)", None, display)], files
    model = scene_file_model(catalog)
    walker = SceneWalker(model, display)
    clean = walker.section(tree, model, "", 1)
    source = Source(display, walker.line_of, walker.problems)
    if clean is INVALID:
        return None, source.problems, files
    scene = _resolve(clean, source, set(walker.lines), absolute, data, display, files, catalog)
    return scene, source.problems, files


def _resolve(clean: dict[str, Any], source: Source, present: set[str], path: Path, data: bytes,
             display: str, files: dict[str, Path], catalog: Catalog) -> Scene | None:
    clock = _clock(clean.get("clock", {}), source)
    refs = RefTable()
    digest = hashlib.sha256(data)
    world: dict[str, Any] = {}
    seeds: dict[str, BaseModel] = {}
    for tool, section in catalog.worlds.items():
        seed_data = clean.get("world", {}).get(tool)
        if seed_data is None:
            continue
        context = SectionContext(tool, source, refs, clock.start, path.parent, os.path.dirname(display), files,
                                 digest)
        seed = section.build(seed_data, context)
        if seed is not None:
            world[tool] = section.seed_json(seed)
            seeds[tool] = seed
    written = clean.get("world", {})
    accounts = {tool: section.accounts_kind for tool, section in catalog.worlds.items() if written.get(tool) is not None}
    people = build_people(clean.get("people", {}), source, refs, accounts, catalog.planned_tools)
    resolver = Resolver(source, present, refs, people, catalog)
    rules = build_world_rules(clean.get("world_rules", {}), resolver)
    checks, ids = build_checks(clean.get("checks", []), resolver)
    required = required_ids(clean.get("pass_"), ids, source)
    unchanged = build_expect_unchanged(clean.get("expect_unchanged") or [], source, refs, catalog, list(world), ids)
    if source.problems:
        return None
    task = clean.get("task", "")
    if len(task.encode("utf-8")) > MAX_TASK_BYTES:
        source.add("task", f"the task is {len(task.encode('utf-8')):,} bytes; a task is at most "
                   f"{MAX_TASK_BYTES:,} (64 KiB)", "put long material in the world (a file in files_dir, a "
                   "message, a log) and tell the agent where to find it")
        return None
    name = clean.get("name") or path.parent.name
    if not re.match(SCENE_NAME_PATTERN, name):
        source.add("name", f"the scene's folder name {name!r} is not a scene name",
                   "add name: with letters, digits, '.', '_' and '-', such as name: refund-request")
        return None
    try:
        scene = Scene.model_validate({
            "name": name, "description": clean.get("description", ""),
            "task": clean.get("task", ""), "clock": clock, "world": world, "people": people.people,
            "world_rules": rules, "checks": checks, "pass": required, "expect_unchanged": unchanged,
            "path": str(path), "source_hash": digest.hexdigest()})
    except ValidationError as exc:  # a bug if reached: the walker should have caught it
        source.add("", f"invalid scene: {exc.errors()[0]['msg']}")
        return None
    scene.keep_seeds(seeds)
    return scene


START_YEARS = (1970, 2200)
"""``clock.start`` falls in these years: seed times are offsets from it, at most 3650d away."""


def _clock(data: dict[str, Any], source: Source) -> ClockSpec:
    start: datetime = DEFAULT_CLOCK_START
    if data.get("start") is not None:
        try:
            start = parse_time(data["start"], DEFAULT_CLOCK_START)
        except (ValueError, OverflowError):
            source.add("clock.start", f"expected an ISO time such as 2026-01-05T09:00:00Z, got {data['start']!r}")
        else:
            if not START_YEARS[0] <= start.year <= START_YEARS[1]:
                source.add("clock.start", f"expected a time from {START_YEARS[0]} to {START_YEARS[1]}, "
                           f"got {start.isoformat()}", "for example 2026-01-05T09:00:00Z")
                start = DEFAULT_CLOCK_START
    limit = parse_duration(data["limit"]) if "limit" in data else 3600.0
    return ClockSpec(start=start, limit=limit, speed=data.get("speed", 1.0))
