"""A task too long to reach the agent is caught at validation (exit 2), and one at the cap
reaches a command agent whole."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.runner.test_run_cli import ancha
from tests.scene.scene_files import problems_of, scene_of

from ancha.scene.model import MAX_TASK_BYTES

AGENT = "import os, pathlib; pathlib.Path('task_length').write_text(str(len(os.environ['ANCHA_TASK'])))\n"


def test_task_over_the_cap__is_a_problem(tmp_path: Path) -> None:
    problems = problems_of(tmp_path, f"name: long\ntask: {'x' * (MAX_TASK_BYTES + 1)}\n")
    assert [p.path for p in problems] == ["task"]
    assert "at most 65,536" in problems[0].message and "world" in (problems[0].hint or "")


def test_task_cap__counts_utf8_bytes(tmp_path: Path) -> None:
    problems = problems_of(tmp_path, f"name: long\ntask: {'é' * (MAX_TASK_BYTES // 2 + 1)}\n")
    assert [p.path for p in problems] == ["task"]
    assert len(scene_of(tmp_path, f"name: long\ntask: {'é' * (MAX_TASK_BYTES // 2)}\n").task) == MAX_TASK_BYTES // 2


def test_run__a_task_over_the_cap_exits_2(tmp_path: Path) -> None:
    (tmp_path / "scenes" / "long").mkdir(parents=True)
    (tmp_path / "scenes" / "long" / "scene.yaml").write_text(
        f"name: long\ntask: {'x' * 200_000}\nchecks: [{{ id: c, trace: {{ called: GET /x }} }}]\n")
    (tmp_path / "ancha.yaml").write_text("agent:\n  command: \"true\"\ntrials: 1\n")
    result = ancha("run", cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "task" in result.stderr and "at most 65,536" in result.stderr


def test_run__a_task_at_the_cap_reaches_the_agent(tmp_path: Path) -> None:
    (tmp_path / "scenes" / "long").mkdir(parents=True)
    (tmp_path / "scenes" / "long" / "scene.yaml").write_text(
        f"name: long\ntask: {'x' * MAX_TASK_BYTES}\nchecks: [{{ id: c, trace: {{ called: GET /x }} }}]\n")
    (tmp_path / "agent.py").write_text(AGENT)
    (tmp_path / "ancha.yaml").write_text(f"agent:\n  command: {sys.executable} agent.py\ntrials: 1\n")
    result = ancha("run", cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr  # the check fails; the trial ran
    assert (tmp_path / "task_length").read_text() == str(MAX_TASK_BYTES)
    summary = json.loads((tmp_path / ".ancha" / "runs" / "latest" / "summary.json").read_text())
    assert [(s["ran"], s["invalid"]) for s in summary["scenes"]] == [(1, 0)]
