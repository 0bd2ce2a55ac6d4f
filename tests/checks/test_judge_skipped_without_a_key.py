"""Without OPENROUTER_API_KEY a judge check is skipped, and ``ancha run`` and ``ancha check``
say so in the same words (the reference: "Without a key, the check is skipped. A skipped
check never passes")."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from rich.console import Console

from ancha.checks.judge import NO_KEY

SCENE = (
    "name: hello\ntask: Say hello in #general.\nclock: { limit: 10m }\nworld:\n  slack:\n"
    "    users: [{ ref: slack_ana, name: ana }]\n"
    "    channels: [{ ref: slack_general, name: general, members: [$slack_ana, $slack_bot] }]\n"
    'checks:\n  - id: posted\n    trace: { called: "GET /api/auth.test" }\n'
    '  - id: helpful_reply\n    judge: "The reply greets Ana by name."\n'
    "pass: [posted]\n"
)


def _run(tmp_path: Path) -> dict[str, Any]:
    import ancha.runner.run as run_module
    from ancha.config.loading import load_config
    from ancha.scene.loading import load_scenes
    from ancha.world.registry import catalog, config_catalog

    (tmp_path / "scenes" / "hello").mkdir(parents=True)
    (tmp_path / "scenes" / "hello" / "scene.yaml").write_text(SCENE)
    (tmp_path / "agent.py").write_text("print('nothing to do')\n")
    (tmp_path / "ancha.yaml").write_text(f"agent:\n  command: {sys.executable} agent.py\ntrials: 1\n")
    config = load_config(None, tmp_path, catalog=config_catalog())
    scenes = load_scenes(list(config.scenes), config.root, catalog())
    result = asyncio.run(
        run_module.run_scenes(config, scenes, console=Console(file=sys.stderr), progress=False)
    )
    checks = json.loads((result.run_dir / "hello" / "1" / "checks.json").read_text())
    return {r["id"]: r for r in checks["results"]}["helpful_reply"]


def _check(tmp_path: Path, make_env: Callable[..., dict[str, Any]], server: str) -> dict[str, Any]:
    from ancha.cli.check import check
    from ancha.scene import load_scene
    from ancha.world.registry import catalog

    folder = tmp_path / "live"
    folder.mkdir()
    (folder / "scene.yaml").write_text(SCENE)
    context = make_env(load_scene(folder / "scene.yaml", catalog()).model_dump(mode="json", by_alias=True))
    answer = CliRunner().invoke(
        check,
        ["--env", context["env_id"], "--server", server, "--json"],
        env={"ANCHA_SERVER_KEY": None, "OPENROUTER_API_KEY": None},
    )
    assert answer.exit_code == 1, answer.output  # posted (required) failed: nothing called auth.test
    return {r["id"]: r for r in json.loads(answer.output)}["helpful_reply"]


def test_judge_without_a_key__run_and_check_say_the_same(
    tmp_path: Path,
    make_env: Callable[..., dict[str, Any]],
    ancha_server: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENROUTER_API_KEY", raising=False)
    ran = _run(tmp_path)
    checked = _check(tmp_path, make_env, ancha_server)
    for result in (ran, checked):
        assert result["status"] == "skipped" and result["passed"] is False
        assert result["explanation"] == NO_KEY
        assert result["explanation"].startswith(
            "OPENROUTER_API_KEY is not set, so this judge check was skipped"
        )
    assert ran == checked
