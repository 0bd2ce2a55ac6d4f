"""A state check on a tool the scene's world does not have (a login needs no ref, so the scene
loads) fails with the reason, rather than the tool's grading meeting no replica."""

from __future__ import annotations

from pathlib import Path

import pytest

from ancha.checks.evaluate import evaluate_checks
from ancha.scene.loading import load_scene
from ancha.world.environment import Environment
from ancha.world.registry import catalog

CHECKS = {"okta": "okta.user: dana@acme.com\n      status: ACTIVE"}


@pytest.mark.parametrize("tool", sorted(CHECKS))
def test_state_check__on_a_tool_the_world_lacks__fails_saying_so(tmp_path: Path, tool: str) -> None:
    path = tmp_path / "scene.yaml"
    path.write_text(f"""name: lacks-{tool}
task: nothing
world:
  slack:
    channels: [{{name: general}}]
checks:
  - id: c
    state:
      {CHECKS[tool]}
""")
    scene = load_scene(path, catalog())
    env = Environment("e1", scene, 1)
    try:
        (result,) = evaluate_checks(env, scene.checks)
    finally:
        env.close()
    assert result.passed is False
    assert f"the world has no {tool}" in result.actual
