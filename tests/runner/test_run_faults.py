"""One bad request never takes down the run: whatever the server answers (a 500, a dropped
connection, a malformed answer, a cleanup DELETE that fails), every trial gets its result
and the run its summary."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from rich.console import Console
from test_run_cli import POSTING_AGENT, project

import ancha.runner.run as run_module
from ancha.config.loading import load_config
from ancha.runner.control import ControlClient, ServerError
from ancha.scene.loading import load_scenes
from ancha.world.registry import catalog, config_catalog

# Trial number -> what goes wrong for that trial only; trial 1 runs on a healthy server.
FAULTS = {
    2: "status_drops",      # the connection drops while the runner watches the trial
    3: "grade_500",         # grading answers 500
    4: "grade_malformed",   # grading answers 200 with a body that is not what the runner reads
    5: "delete_raises",     # the cleanup DELETE raises, after an earlier failure
}


class FaultyControl(ControlClient):
    """The real client on the real server, with one fault injected per trial (``FAULTS``)."""

    def __init__(self, base_url: str, key: str | None = None, share: Any = None, transport: Any = None) -> None:
        super().__init__(base_url, key, share, transport)
        self.fault_of: dict[str, str] = {}

    async def create_env(self, scene: Any, trial: int, agent: dict[str, Any], **world: Any) -> dict[str, Any]:
        context = await super().create_env(scene, trial, agent, **world)
        if trial in FAULTS:
            self.fault_of[context["env_id"]] = FAULTS[trial]
        return context

    async def status(self, env_id: str) -> dict[str, Any]:
        if self.fault_of.get(env_id) in ("status_drops", "delete_raises"):
            raise httpx.RemoteProtocolError("Server disconnected without sending a response.")
        return await super().status(env_id)

    async def grade(self, env_id: str, teardown: bool = True, trace: bool = True, state: bool = True) -> dict[str, Any]:
        fault = self.fault_of.get(env_id)
        if fault == "grade_500":
            raise ServerError("the trial could not be graded: 500 Internal Server Error")
        if fault == "grade_malformed":
            return {"results": "not a list"}
        return await super().grade(env_id, teardown, trace, state)

    async def delete(self, env_id: str) -> None:
        if self.fault_of.get(env_id) == "delete_raises":
            raise ServerError(f"the Ancha server did not answer DELETE /envs/{env_id}")
        await super().delete(env_id)


def test_run__a_fault_in_one_trial_leaves_every_result_and_the_summary(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    agent = POSTING_AGENT + "import time\ntime.sleep(0.3)\n"  # long enough for the runner to watch it
    project(tmp_path, agent, trials=len(FAULTS) + 1)
    monkeypatch.setattr("ancha.runner.trial_executor.ControlClient", FaultyControl)  # how local trials connect
    config = load_config(None, tmp_path, catalog=config_catalog())
    scenes = load_scenes(list(config.scenes), config.root, catalog())

    result = asyncio.run(run_module.run_scenes(config, scenes, console=Console(file=sys.stderr), progress=False))

    summary = json.loads((result.run_dir / "summary.json").read_text())
    trials = {t["trial"]: t for t in summary["scenes"][0]["trial_results"]}
    assert sorted(trials) == [1, 2, 3, 4, 5]
    assert trials[1]["verdict"] == "passed"
    for trial in FAULTS:
        assert trials[trial]["verdict"] == "invalid", trials[trial]
        assert trials[trial]["reason"], trials[trial]
        checks = json.loads((result.run_dir / "hello" / str(trial) / "checks.json").read_text())
        assert checks["verdict"] == "invalid" and checks["reason"] == trials[trial]["reason"]
    assert "disconnected" in trials[2]["reason"]
    assert "500" in trials[3]["reason"]
    assert result.exit_code == 0  # the one judged trial passed; invalid trials are left out of the rate
