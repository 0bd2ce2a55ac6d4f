"""Scene files: the validated model, loading with every problem reported at once, refs."""

from __future__ import annotations

from ancha.scene.errors import SceneInvalid
from ancha.scene.loading import load_scene, load_scenes
from ancha.scene.model import Scene

__all__ = ["Scene", "SceneInvalid", "load_scene", "load_scenes"]
