"""A trial's world diff page: the seed rebuilt from the scene, the diff to ``world.json`` per
tool and object (``world_objects.py``), and what the agent also changed.

"Also changed" is every object the agent changed that no check mentions
(``ancha.checks.collateral``): as the grading wrote it to ``checks.json`` (``also_changed``),
or, for a trial graded before that, worked out here from the scene, the seed and the trace.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, tzinfo
from pathlib import Path
from typing import Any

from ancha.checks.collateral import collateral_changes
from ancha.checks.world_diff import Change, SeedUnavailable, diff_worlds, read_world, scene_seed
from ancha.console.world_objects import ToolChanges, WorldObject, world_objects
from ancha.results.run_folder import TrialFolder
from ancha.scene.errors import SceneInvalid
from ancha.scene.loading import load_scene
from ancha.world.registry import catalog, registry

NO_WORLD = "this trial has no world.json (it never started, or has not been graded yet)"
NO_SCENE = "the run's summary.json does not name this scene's file (the run has not finished, or was stopped)"


@dataclass(frozen=True, slots=True)
class AlsoChanged:
    """One object the agent changed that no check mentions, as the grading describes it."""

    text: str
    anchor: str | None = None
    """The rendered object's anchor on the page, when it is shown there."""
    title: str | None = None


@dataclass
class WorldView:
    changes: list[Change] = field(default_factory=list)
    total: int = 0
    tools: list[ToolChanges] = field(default_factory=list)
    also_changed: dict[str, list[AlsoChanged]] = field(default_factory=dict)
    zone: str = "UTC"
    error: str | None = None
    also_error: str | None = None
    """Why what else the agent changed could not be worked out (the diff is still shown)."""


def trial_world_view(folder: TrialFolder, scene_summary: dict[str, Any] | None) -> WorldView:
    """The world diff of ``folder``'s trial; ``scene_summary`` is the run summary's entry for its scene."""
    try:
        raw = folder.read_world()
    except OSError:
        return WorldView(error=NO_WORLD)
    if scene_summary is None:
        return WorldView(error=NO_SCENE)
    path, source_hash = str(scene_summary.get("path")), str(scene_summary.get("source_hash") or "")
    try:
        scene = load_scene(Path(path), catalog())
        if source_hash and scene.source_hash != source_hash:
            raise SeedUnavailable(f"the scene file {path} changed since this run, so its seed cannot be rebuilt")
        line = folder.read_world_line() or {}  # the world's own trial and seed (a replay's trial 1 is its original's)
        seed = scene_seed(scene, int(line.get("trial") or folder.trial), seed=line.get("seed"))
        end = read_world(raw)
    except (OSError, SceneInvalid) as exc:
        return WorldView(error=f"the scene file {path} could not be loaded: {exc}")
    except (SeedUnavailable, ValueError) as exc:
        return WorldView(error=str(exc))
    zone: tzinfo = scene.clock.start.tzinfo or UTC
    changes, total = diff_worlds(seed.world, end)
    renderers = {name: spec.render for name, spec in registry().tools.items()}
    view = WorldView(changes, total, world_objects(changes, seed.world, end, renderers, zone),
                     zone=str(scene.clock.start.tzname() or "UTC"))
    recorded = folder.read_checks().get("also_changed")
    also: dict[str, list[str]] | None = _listed(recorded)
    if also is None:
        try:
            also = collateral_changes(scene, int(folder.trial), raw, folder.read_trace().values(), seed=seed).also_changed
        except (OSError, ValueError) as exc:
            view.also_error = f"could not be worked out ({exc})"
            also = {}
    view.also_changed = {tool: [_link(text, view.tools, tool) for text in texts] for tool, texts in also.items()
                         if texts}
    return view


def _listed(value: Any) -> dict[str, list[str]] | None:
    if not isinstance(value, dict):
        return None
    return {str(tool): [str(t) for t in texts] for tool, texts in value.items() if isinstance(texts, list)}


def _link(text: str, tools: list[ToolChanges], tool: str) -> AlsoChanged:
    """``text`` (``messages.C1[ts=1.2] added``) with the rendered object it is about: the one
    whose path starts it, the innermost such."""
    objects = next((t.objects for t in tools if t.tool == tool), [])
    found: WorldObject | None = None
    for obj in objects:
        if text.startswith(obj.where) and text[len(obj.where):][:1] in ("", " ", ".", "[") and (found is None or len(obj.where) > len(found.where)):
            found = obj
    if found is None:
        return AlsoChanged(text)
    found.also_changed = True
    return AlsoChanged(text, found.anchor, found.rendered.title)
