"""What the console task tests share: servers on loopback ports, workspaces, a run to upload."""

from __future__ import annotations

import json
import secrets
import shutil
from dataclasses import dataclass
from pathlib import Path

import httpx
from tests.agentos.servers import ServerThread, free_port  # noqa: F401  (the tests import them from here)

CHROMIUM = "/usr/bin/chromium"
EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
SCENE = "export-question"
"""The bundled example whose world the tasks use: a customer's question in #support."""


@dataclass
class Workspace:
    """One fresh workspace: its keys by role, on the session's AgentOS."""

    name: str
    url: str
    keys: dict[str, str]

    def api(self, role: str = "ci") -> httpx.Client:
        return httpx.Client(base_url=self.url, headers={"authorization": f"Bearer {self.keys[role]}"}, timeout=30)

    def use_ancha_server(self, url: str, key: str | None) -> None:
        with self.api("admin") as admin:
            answer = admin.put("/api/workspace/ancha-server", json={"url": url, "key": key})
            assert answer.status_code == 200, answer.text


def run_folder(root: Path) -> Path:
    """A finished run of the bundled export-question scene, as `ancha run` writes it (one
    passed trial), its summary pointing at a copy of the scene file."""
    run_id = f"20261203T120000Z-{secrets.token_hex(3)}"
    source = root / "scenes" / SCENE / "scene.yaml"
    source.parent.mkdir(parents=True)
    shutil.copy(EXAMPLES / "scenes" / SCENE / "scene.yaml", source)
    trial = root / run_id / SCENE / "1"
    trial.mkdir(parents=True)
    (trial / "checks.json").write_text(json.dumps({"scene": SCENE, "trial": 1, "verdict": "passed", "reason": None,
                                                   "results": []}))
    (trial / "trace.jsonl").write_text("")
    (trial / "world.json").write_text("{}")
    entry = {"scene": SCENE, "path": str(source), "source_hash": "ab" * 32, "trials": 1, "ran": 1, "passed": 1,
             "failed": 0, "invalid": 0, "pass_rate": 1.0, "min_pass_rate": 1.0, "gate_met": True,
             "trial_results": [{"trial": 1, "verdict": "passed", "status": "done", "reason": None}]}
    (root / run_id / "summary.json").write_text(json.dumps({
        "run_id": run_id, "started_at": "2026-12-03T12:00:00Z", "duration_s": 1.0, "interrupted": False,
        "exit_code": 0, "seed": 7, "server": "embedded", "config": {}, "scenes": [entry]}))
    return root / run_id
