"""An empty scene file is a problem (exit 2), never a scene with no checks that passes."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.runner.test_run_cli import ancha
from tests.scene.scene_files import problems_of


@pytest.mark.parametrize("text", ["", "\n", "# only a comment\n", "---\n", "{}\n"])
def test_empty_scene__is_a_problem(tmp_path: Path, text: str) -> None:
    problems = problems_of(tmp_path, text)
    assert [p.message for p in problems] == ["the scene file is empty: a scene needs at least one check"]
    assert problems[0].file and problems[0].file.endswith("scene.yaml")


def test_run__empty_scene_exits_2(tmp_path: Path) -> None:
    (tmp_path / "scenes" / "empty").mkdir(parents=True)
    (tmp_path / "scenes" / "empty" / "scene.yaml").write_text("")
    (tmp_path / "ancha.yaml").write_text("agent:\n  command: \"true\"\ntrials: 1\n")
    result = ancha("run", cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "the scene file is empty" in result.stdout + result.stderr
