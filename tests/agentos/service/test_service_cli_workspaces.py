"""`agentos keys create --role` and `agentos workspaces set`: an operator's commands for a team's workspace."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from sqlalchemy import select

from agentos.db import Database
from agentos.models import ApiKey, Workspace

AGENTOS = [sys.executable, "-m", "agentos.cli"]


def _agentos(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "AGENTOS_DATABASE_URL"} | {"AGENTOS_HOME": str(home)}
    return subprocess.run([*AGENTOS, *args], env=env, capture_output=True, text=True, timeout=60)


def test_a_key_gets_its_role_and_a_workspace_its_quota_and_ancha_server(tmp_path: Path) -> None:
    made = _agentos(tmp_path, "keys", "create", "--workspace", "acme", "--role", "ci", "--name", "github actions")
    assert made.returncode == 0, made.stderr
    changed = _agentos(tmp_path, "workspaces", "set", "acme", "--quota-bytes", "5000000",
                       "--ancha-server", "http://127.0.0.1:7800/", "--ancha-server-key", "k")
    assert changed.returncode == 0, changed.stderr
    assert "quota 5,000,000 bytes; Ancha server http://127.0.0.1:7800" in changed.stdout
    db = Database(f"sqlite:///{tmp_path / 'agentos.db'}", run_migrations=False)
    try:
        with db.read() as session:
            key = session.scalar(select(ApiKey))
            workspace = session.scalar(select(Workspace))
            assert key is not None and workspace is not None
            assert (key.role, key.name, key.prefix) == ("ci", "github actions", made.stdout.strip()[:13])
            assert (workspace.quota_bytes, workspace.ancha_server_url, workspace.ancha_server_key) == \
                (5_000_000, "http://127.0.0.1:7800", "k")
    finally:
        db.dispose()


def test_an_unknown_workspace_or_role_is_a_clear_error(tmp_path: Path) -> None:
    missing = _agentos(tmp_path, "workspaces", "set", "nobody", "--quota-bytes", "1")
    assert missing.returncode == 1 and "no workspace 'nobody'" in missing.stderr
    bad_role = _agentos(tmp_path, "keys", "create", "--workspace", "acme", "--role", "owner")
    assert bad_role.returncode == 2 and "'owner' is not one of 'viewer', 'ci', 'admin'" in bad_role.stderr
