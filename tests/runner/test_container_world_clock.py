"""A container agent's clock follows the world's too: the host's libfaketime and the trial's
clock folder are mounted read-only, and the agent's ``time.time()`` reads the world's time
before and after a jump (on Docker Engine and on podman)."""

from __future__ import annotations

import asyncio
import io
import json
import os
import sys
from pathlib import Path

import pytest
from container_image import ENGINES, agent_image, usable_engine
from rich.console import Console
from test_agent_world_clock import PYTHON_AGENT, SCENE, START, START_S, _at

from ancha.config.loading import load_config
from ancha.runner.agents.world_clock import find_library
from ancha.runner.run import run_scenes
from ancha.scene.loading import load_scenes
from ancha.world.registry import catalog, config_catalog

pytestmark = pytest.mark.skipif(
    find_library() is None and not os.environ.get("CI"),
    reason="libfaketime is not installed (apt-get install faketime)",
)


@pytest.fixture(scope="module", params=ENGINES)
def engine(request: pytest.FixtureRequest) -> str:
    """Each engine in turn; in CI one that does not answer fails the test instead of skipping it."""
    return usable_engine(request.param)


@pytest.fixture(scope="module")
def image(engine: str) -> str:
    return agent_image(engine)


def test_container_agent__time_time_reads_the_worlds_clock_before_and_after_a_jump(
    tmp_path: Path, engine: str, image: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANCHA_CONTAINER_ENGINE", engine)
    (tmp_path / "scenes" / "hello").mkdir(parents=True)
    (tmp_path / "scenes" / "hello" / "scene.yaml").write_text(SCENE.format(start=START, limit="1h", rules=""))
    (tmp_path / "agent.py").write_text(PYTHON_AGENT)
    (tmp_path / "ancha.yaml").write_text(
        f"agent:\n  command: python3 agent.py\n  execution:\n    mode: container\n    image: {image}\n"
        "    files: [agent.py]\ntrials: 1\n"
    )
    config = load_config(None, tmp_path, catalog=config_catalog())
    scenes = load_scenes(list(config.scenes), config.root, catalog())
    result = asyncio.run(run_scenes(config, scenes, console=Console(file=io.StringIO()), progress=False))
    trial = result.run_dir / "hello" / "1"
    checks = json.loads((trial / "checks.json").read_text())
    assert (trial / "state" / "clock.json").exists(), (trial / "agent.log").read_text()
    seen = json.loads((trial / "state" / "clock.json").read_text())
    print(f"{engine} container agent:", json.dumps(seen), file=sys.stderr)
    assert abs(seen["before"] - START_S) < 60, (
        "the agent's clock starts at the scene's clock.start, not today"
    )
    assert seen["events"] == [] and seen["after"] - seen["before"] >= 360
    assert abs(seen["after"] - _at(seen["world_now"])) < 1
    assert seen["services"] == 1, "TLS to the replica verifies at the world's time"
    assert checks["verdict"] == "passed", checks
