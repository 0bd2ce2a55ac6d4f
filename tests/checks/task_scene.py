"""A small scene file for the task-file and playground tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SCENE_YAML = """\
name: exports
task: Answer Laura in the thread of her question.
world:
  slack:
    users:
      - { ref: slack_laura, name: laura }
    channels:
      - { ref: slack_support, name: support, members: [$slack_bot, $slack_laura] }
    messages:
      - { ref: slack_question, channel: $slack_support, from: $slack_laura, text: "CSV exports stopped working" }
checks:
  - id: scene_only
    trace: { called: "GET /api/nothing.ever" }
"""

TASK: list[dict[str, Any]] = [
    {"id": "answered", "state": {"slack.message": {"channel": "$slack_support", "from": "$slack_bot",
                                                   "in_thread_of": "$slack_question"}}},
    {"id": "posted", "trace": {"called": "* /api/chat.postMessage"}},
]


def write(folder: Path, task: Any = None, text: str | None = None) -> tuple[Path, Path]:
    """The scene file and a task file (``task`` as JSON, or ``text`` as written) in ``folder``."""
    scene = folder / "scene.yaml"
    scene.write_text(SCENE_YAML)
    task_file = folder / "task.json"
    task_file.write_text(text if text is not None else json.dumps(TASK if task is None else task, indent=1))
    return scene, task_file
