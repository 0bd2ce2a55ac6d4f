"""`ancha report`: a run becomes a completed AgentOS evaluation, and gates a release."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest


def write_run(root: Path, verdicts: dict[int, bool]) -> Path:
    run_dir = root / ".ancha" / "runs" / "20261129T000000Z-abcdef"
    for trial, passed in verdicts.items():
        folder = run_dir / "hello" / str(trial)
        folder.mkdir(parents=True)
        results = [{"id": "greeted", "required": True, "passed": passed, "status": "passed" if passed else "failed",
                    "expected": "", "actual": "", "explanation": "", "evidence": []},
                   {"id": "tone", "required": False, "passed": False, "status": "skipped",
                    "expected": "", "actual": "", "explanation": "", "evidence": []}]
        (folder / "checks.json").write_text(json.dumps(
            {"scene": "hello", "trial": trial, "verdict": "passed" if passed else "failed", "status": "done",
             "reason": None, "results": results}))
    (run_dir / "summary.json").write_text("{}")
    (root / ".ancha" / "runs" / "latest").symlink_to(run_dir.name)
    return run_dir


@pytest.fixture
def workflow(client) -> Iterator[str]:  # type: ignore[no-untyped-def]
    name = "ancha-report-" + os.urandom(3).hex()
    client.create_workflow(name, nodes=[{"id": "s", "type": "set", "values": {"x": "1"}}], gate={"min_pass_rate": 0.9})
    yield name


def test_report__run_becomes_an_evaluation_that_gates_release(tmp_path: Path, agentos_server, api_key: str,  # type: ignore[no-untyped-def]
                                                                client, workflow: str) -> None:
    write_run(tmp_path, {1: True, 2: False})
    env = {**os.environ, "AGENTOS_API_KEY": api_key, "AGENTOS_BASE_URL": agentos_server.url}
    done = subprocess.run([sys.executable, "-m", "ancha.cli", "report", "--workflow", workflow], cwd=tmp_path,
                          capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "2 trials, check pass rate 50.0%" in done.stdout
    evaluation = client.evaluations(workflow)[0]
    assert evaluation["status"] == "completed" and evaluation["check_pass_rate"] == 0.5
    from agentos_sdk import ReleaseBlockedError

    with pytest.raises(ReleaseBlockedError) as blocked:
        client.release(workflow)
    assert str(blocked.value) == "eval gate: check pass-rate 50.0% is below the required 90.0% — deployment blocked"


def test_report__unknown_workflow_is_a_clear_error(tmp_path: Path, agentos_server, api_key: str) -> None:  # type: ignore[no-untyped-def]
    write_run(tmp_path, {1: True})
    env = {**os.environ, "AGENTOS_API_KEY": api_key, "AGENTOS_URL": agentos_server.url}
    done = subprocess.run([sys.executable, "-m", "ancha.cli", "report", "--workflow", "no-such-workflow"],
                          cwd=tmp_path, capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 1
    assert "AgentOS refused the evaluation" in done.stderr and "no-such-workflow" in done.stderr
