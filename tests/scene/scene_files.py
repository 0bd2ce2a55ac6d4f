"""Writing small scene folders for the scene tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from ancha.errors import Problem
from ancha.scene import Scene, SceneInvalid, load_scene

SLACK = """\
world:
  slack:
    users:
      - { ref: slack_laura, name: laura }
      - { ref: slack_ben, name: ben }
    channels:
      - { ref: slack_support, name: support, members: [$slack_laura, $slack_bot] }
      - { ref: slack_general, name: general }
    messages:
      - { ref: slack_question, channel: $slack_support, from: $slack_laura, text: Where are exports?, at: -3d }
"""


def write_scene(folder: Path, text: str, name: str = "demo") -> Path:
    path = folder / name / "scene.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def scene_of(folder: Path, text: str) -> Scene:
    return load_scene(write_scene(folder, text))


def problems_of(folder: Path, text: str) -> list[Problem]:
    with pytest.raises(SceneInvalid) as info:
        load_scene(write_scene(folder, text))
    return info.value.problems


def messages(problems: list[Problem]) -> list[str]:
    return [f"{p.path}: {p.message}" for p in problems]
