"""The bundled offboarding example (examples/scenes/offboarding) through ``ancha run``: the
example agent passes; an agent that deletes the departed user instead of deactivating it
fails the ``deactivated`` check."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[4] / "examples"


def _run(tmp_path: Path, agent: str) -> dict[str, object]:
    shutil.copytree(EXAMPLES / "agents", tmp_path / "agents")
    shutil.copytree(EXAMPLES / "scenes" / "offboarding", tmp_path / "scenes" / "offboarding")
    (tmp_path / "ancha.yaml").write_text(f"agent:\n  command: {agent}\nscenes: [scenes/**/scene.yaml]\n"
                                         "trials: 1\nmin_pass_rate: 1\n")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run([str(Path(sys.executable).parent / "ancha"), "run", "--no-progress"], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=300)
    checks = next((tmp_path / ".ancha" / "runs" / "latest").glob("offboarding/*/checks.json"))
    return {"code": done.returncode, "checks": json.loads(checks.read_text())}


@pytest.mark.skipif(not (EXAMPLES / "scenes" / "offboarding").is_dir(), reason="no bundled offboarding example")
def test_offboarding__example_agent_passes(tmp_path: Path) -> None:
    result = _run(tmp_path, "python agents/acme_bot.py")
    assert result["code"] == 0, result


@pytest.mark.skipif(not (EXAMPLES / "scenes" / "offboarding").is_dir(), reason="no bundled offboarding example")
def test_offboarding__deleting_the_user_fails_deactivated(tmp_path: Path) -> None:
    result = _run(tmp_path, "env OFFBOARD_DELETE=1 python agents/acme_bot.py")
    assert result["code"] == 1
    text = json.dumps(result["checks"])
    assert "deactivated" in text and "no such user" in text
