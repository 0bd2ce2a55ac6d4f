"""Where a run's trials execute: on this machine (``LocalTrials``) or on a Ray cluster
(``ray_trials.RayTrials``). Either way a trial ends as a ``TrialOutcome`` and a filled
``SCENE/TRIAL/`` folder in the run folder on this machine, so the progress bar, the
summary and every reader of the run folder cannot tell them apart."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, Protocol

from ancha.config.model import AnchaConfig
from ancha.results.run_folder import RunFolder
from ancha.runner.control import ControlClient, connect
from ancha.runner.trial import TrialOutcome, TrialRunner
from ancha.scene.model import Scene
from ancha.server.embedded import EmbeddedServer


class TrialExecutor(Protocol):
    server_label: str
    """``summary.json``'s ``server``: ``embedded``, the ``server.url``, or ``ray:ADDRESS``."""
    trials_at_once: int

    async def run(self, scene: Scene, trial: int) -> TrialOutcome:
        """One trial; never raises for what the trial, its agent or its worker did (invalid instead)."""
        ...

    async def close(self) -> None: ...


class LocalTrials:
    """Trials on this machine: one server (embedded, or ``server.url``), agents as local processes."""

    def __init__(self, server: EmbeddedServer | None, control: ControlClient, runner: TrialRunner,
                 label: str, trials_at_once: int) -> None:
        self._server = server
        self._control = control
        self._runner = runner
        self.server_label = label
        self.trials_at_once = trials_at_once

    @classmethod
    async def open(cls, config: AnchaConfig, run_dir: Path, inherit_env: bool, **runner_options: Any) -> LocalTrials:
        """``runner_options``: more of ``TrialRunner``'s keywords (how agents run: containers, the model gateway)."""
        server, control = await connect(config, ControlClient)
        label = "embedded" if server is not None else str(config.server.url)
        runner = TrialRunner(control, config, run_dir, inherit_env=inherit_env, **runner_options)
        return cls(server, control, runner, label, config.trials_at_once)

    async def run(self, scene: Scene, trial: int) -> TrialOutcome:
        from ancha.runner.run import run_trial  # run.py opens executors: import at call time

        return await run_trial(self._runner, scene, trial)

    async def close(self) -> None:
        await self._control.close()
        if self._server is not None:
            self._server.stop()


async def open_trials(config: AnchaConfig, run_dir: Path, scenes: list[Scene], *, inherit_env: bool,
                      **runner_options: Any) -> TrialExecutor:
    """The executor ``config`` asks for: Ray when ``ray`` is set (``--ray``), else this machine.
    ``runner_options`` go to the local ``TrialRunner``; a Ray worker makes its own."""
    branching = runner_options.get("fork") is not None or runner_options.get("calls") is not None
    if config.ray is not None and not branching:  # a fork's checkpoint and recorded calls are this machine's
        from ancha.runner.ray_trials import RayTrials  # Ray is an optional extra: imported only here

        return await RayTrials.open(config, run_dir, scenes, inherit_env=inherit_env, seed=runner_options.get("seed"))
    return await LocalTrials.open(config, run_dir, inherit_env, **runner_options)


async def run_with_retry(executor: TrialExecutor, run_dir: Path, scene: Scene, trial: int,
                         retry_invalid: bool) -> TrialOutcome:
    """A trial, and with ``--retry-invalid`` once more when it comes back invalid (not when it
    hit a coverage gap). The retry starts from an empty trial folder; its outcome keeps the
    first attempt's reason."""
    outcome = await executor.run(scene, trial)
    # Not a trial invalid for --strict-coverage: retrying until the agent avoids the gap would
    # keep only the trials that did, and hide how often it does not.
    if not retry_invalid or outcome.verdict != "invalid" or outcome.coverage_gaps:
        return outcome
    first = outcome.reason or "invalid"
    shutil.rmtree(RunFolder(run_dir).trial(scene.name, trial).path, ignore_errors=True)
    outcome = await executor.run(scene, trial)
    outcome.retried = first
    return outcome
