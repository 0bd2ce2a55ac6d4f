"""The live environments of one server, and the scenes they were built from."""

from __future__ import annotations

import re
import secrets
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from ancha.scene.loading import parse_scene_text
from ancha.scene.model import Scene
from ancha.world.environment import Environment
from ancha.world.registry import catalog


class SceneNotCached(KeyError):
    pass


class Registry:
    """Environments by id, plus parsed scenes by content hash so that trials after
    the first skip parsing and validating the scene again."""

    def __init__(self, scene_cache_size: int = 64) -> None:
        self.envs: dict[str, Environment] = {}
        self._scenes: OrderedDict[str, Scene] = OrderedDict()
        self._cache_size = scene_cache_size
        self._lock = threading.Lock()
        """The scene cache is also written from outside the server's thread (``share``)."""

    def scene(self, body: dict[str, Any]) -> Scene:
        """The scene a ``POST /envs`` body names: inline (``scene``) or by hash (``scene_hash``).

        Inline, ``scene`` is either the text of a scene file (YAML), or that file parsed into
        JSON as written (durations such as ``2h``, refs such as ``$slack_ana``); both are read as
        the file would be, and a problem is told as for the file (``SceneInvalid``). A resolved
        scene, as ``ancha run`` sends it (``Scene`` as JSON, with its ``source_hash``), is taken as it is."""
        if "scene" in body:
            scene = _inline_scene(body["scene"])
            self._keep(scene.source_hash or secrets.token_hex(8), scene)
            return scene
        key = str(body.get("scene_hash", ""))
        with self._lock:
            if key not in self._scenes:
                raise SceneNotCached(key)
            self._scenes.move_to_end(key)
            return self._scenes[key]

    @staticmethod
    def read_scene(value: Any) -> Scene:
        """An inline scene read as ``scene`` is, but kept nowhere (a fork's changed scene)."""
        return _inline_scene(value)

    def share(self, scene: Scene) -> None:
        """Cache a scene loaded in this process, so that ``POST /envs`` can name it by hash:
        the embedded server's runner hands scenes over this way instead of sending them as
        JSON, and every trial of a scene then shares the one loaded copy (and its seeded
        history) with the runner."""
        if not scene.source_hash:
            raise ValueError("only a scene with a source_hash can be shared by hash")
        self._keep(scene.source_hash, scene)

    def _keep(self, key: str, scene: Scene) -> None:
        with self._lock:
            self._scenes[key] = scene
            self._scenes.move_to_end(key)
            while len(self._scenes) > self._cache_size:
                self._scenes.popitem(last=False)

    def create(self, scene: Scene, trial: int, agent: dict[str, Any] | None, *, seed: int | None = None,
               env_id: str | None = None, replay: bool = False) -> Environment:
        """A new world; ``seed`` (the run's; without one, tokens are random) with the scene and
        trial decides it; ``env_id`` names it (a replay takes its original's id: the world
        writes it into its URLs)."""
        env_id = env_id or "env_" + secrets.token_hex(6)
        env = Environment(env_id, scene, trial, agent, seed=seed, replay=replay)
        self.envs[env_id] = env
        return env

    def restore(self, data: bytes, scene: Scene, agent: dict[str, Any] | None, env_id: str | None = None, *,
                patched: Scene | None = None) -> Environment:
        """A world from a checkpoint this server holds: ``scene`` is the one it was made from,
        which lends its shared parts; ``patched``, the world's scene from here on (``ancha fork --set``)."""
        from ancha.world.checkpoint import restore

        env_id = env_id or "env_" + secrets.token_hex(6)
        env = restore(data, scene, env_id, agent, patched=patched)
        self.envs[env_id] = env
        return env

    def get(self, env_id: str) -> Environment | None:
        return self.envs.get(env_id)

    def delete(self, env_id: str) -> bool:
        env = self.envs.pop(env_id, None)
        if env is None:
            return False
        env.finish("deleted", "the environment was torn down")
        env.close()
        return True


INLINE_NAME = "scene.yaml"
"""How a problem of an inline scene names the file it would be."""


def _inline_scene(value: Any) -> Scene:
    if isinstance(value, str):
        if "\n" not in value.strip() and value.strip().endswith((".yaml", ".yml")):
            raise ValueError(f"'scene' is the text of a scene file, not a path ({value.strip()!r}): "
                             "read the file and send its text")
        return parse_scene_text(value, INLINE_NAME, Path.cwd(), catalog())
    if not isinstance(value, dict):
        raise ValueError("'scene' must be the text of a scene file, or a scene file's content as a JSON object, "
                         f"got {type(value).__name__}")
    if "source_hash" in value:  # resolved already (ancha run's own)
        return Scene.model_validate(value)
    if not _has_ref(value):  # the resolved form without its hash (scripts and tests send it): as before
        try:
            return Scene.model_validate(value)
        except ValidationError:
            pass  # not resolved: read it as a scene file, whose problems are the ones to tell
    return parse_scene_text(yaml.safe_dump(value, sort_keys=False, allow_unicode=True), INLINE_NAME, Path.cwd(),
                            catalog())


_REF = re.compile(r"^\$[A-Za-z_][A-Za-z0-9_]*$")


def _has_ref(value: Any, depth: int = 0) -> bool:
    """Whether ``value`` holds a ref as a scene file writes one (``$slack_ana``): then it is a file
    as written, which a resolved scene never is."""
    if depth > 64:
        return False
    if isinstance(value, str):
        return bool(_REF.match(value))
    if isinstance(value, dict):
        return any(_has_ref(v, depth + 1) for v in value.values())
    if isinstance(value, list):
        return any(_has_ref(v, depth + 1) for v in value)
    return False
