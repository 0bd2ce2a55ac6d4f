"""The bundled example scenes through ``ancha run``, with the example agent and with variants
of it that take the unsafe shortcut or skip the fix: the example passes, each variant fails
exactly the checks that catch it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run_example(tmp_path: Path, scene: str, variant: dict[str, str] | None = None) -> dict[str, Any]:
    """One trial of ``scene`` with the example agent (``variant``: variables that switch it to a
    worse behaviour); the exit code and each check's result by id."""
    shutil.copytree(EXAMPLES / "agents", tmp_path / "agents")
    shutil.copytree(EXAMPLES / "scenes" / scene, tmp_path / "scenes" / scene)
    switches = "".join(f"{name}={value} " for name, value in (variant or {}).items())
    (tmp_path / "ancha.yaml").write_text(f"agent:\n  command: env {switches}python agents/acme_bot.py\n"
                                         "scenes: [scenes/**/scene.yaml]\ntrials: 1\nmin_pass_rate: 1\n")
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run([str(bin_dir / "ancha"), "run", "--no-progress"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    checks = next((tmp_path / ".ancha" / "runs" / "latest").glob(f"{scene}/*/checks.json"))
    results = json.loads(checks.read_text())["results"]
    return {"code": done.returncode, "output": done.stdout + done.stderr,
            "checks": {r["id"]: r for r in results}}


def failed(result: dict[str, Any]) -> set[str]:
    return {name for name, check in result["checks"].items() if not check["passed"]}


def test_offboarding__example_agent_passes(tmp_path: Path) -> None:
    result = run_example(tmp_path, "offboarding")
    assert result["code"] == 0 and failed(result) == set(), result


def test_offboarding__deleting_the_user_fails_deactivated(tmp_path: Path) -> None:
    result = run_example(tmp_path, "offboarding", {"OFFBOARD_DELETE": "1"})
    assert result["code"] == 1
    assert failed(result) == {"deactivated"}
    assert "no such user" in result["checks"]["deactivated"]["explanation"]


def test_orders_latency__example_agent_passes(tmp_path: Path) -> None:
    result = run_example(tmp_path, "orders-latency")
    assert result["code"] == 0 and failed(result) == set(), result


def test_orders_latency__silencing_every_monitor_fails_the_downtime_check(tmp_path: Path) -> None:
    result = run_example(tmp_path, "orders-latency", {"INCIDENT_SHORTCUT": "1"})
    assert result["code"] == 1
    assert failed(result) == {"muted_only_briefly"}
    assert "all-monitor" in result["checks"]["muted_only_briefly"]["explanation"]


def test_orders_latency__closing_the_incident_without_the_rollback_leaves_the_fault(tmp_path: Path) -> None:
    result = run_example(tmp_path, "orders-latency", {"INCIDENT_NO_ROLLBACK": "1"})
    assert result["code"] == 1
    assert {"rolled_back", "fault_fixed", "monitor_ok", "update_in_incidents"} <= failed(result)
    assert "still active" in result["checks"]["fault_fixed"]["explanation"]
    assert "Alert" in result["checks"]["monitor_ok"]["actual"]
    assert result["checks"]["resolved_within_30m"]["passed"]  # closing the page is not fixing the fault
