"""``ancha run``: every scene x trial, ``parallel`` at a time, then the gate."""

from __future__ import annotations

import asyncio
import dataclasses
import secrets
import signal
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ancha.config.model import AnchaConfig
from ancha.errors import AnchaUserError, RunFailed
from ancha.results.run_folder import RunFolder
from ancha.results.runs_folder import RunsFolder
from ancha.runner.agents.container import ContainerExecution, container_refusal
from ancha.runner.agents.container_leftovers import clean_after_dead_runs, forget_container_run
from ancha.runner.agents.world_clock import MISSING, find_library, wants_world_clock
from ancha.runner.gateway import ModelGateway
from ancha.runner.report import SceneSummary, print_summary
from ancha.runner.trial import CallsReplay, Fork, TrialOutcome, TrialRunner
from ancha.runner.trial_executor import TrialExecutor, open_trials, run_with_retry
from ancha.scene.model import Scene
from ancha.world.registry import registry

EXIT_PASSED, EXIT_GATE_FAILED, EXIT_NOT_CARRIED_OUT, EXIT_INTERRUPTED = 0, 1, 3, 130


@dataclass
class Branch:
    """A run that branches off an earlier trial (``ancha replay``, ``ancha fork``)."""

    origin: dict[str, Any]
    """``summary.json``'s ``origin``: ``{kind, run, scene, trial, ...}``."""
    trial_numbers: dict[tuple[str, int], int] = dataclasses.field(default_factory=dict)
    """(scene, trial of this run) -> the original's trial number, which its world is drawn with."""
    fork: Fork | None = None
    calls: CallsReplay | None = None
    trials: dict[str, list[int]] | None = None
    """Scene -> the trial numbers to run (a replay of trial 3 is trial 3 of its run); None: 1 to ``trials``."""


@dataclass
class RunResult:
    run_id: str
    run_dir: Path
    scenes: list[SceneSummary]
    interrupted: bool
    exit_code: int


def refuse_unbuilt_agents(config: AnchaConfig) -> None:
    """Container agents and some transports are valid config, not yet runnable: say so, never ignore."""
    for refusal in agent_refusals(config).values():
        raise refusal


def agent_refusals(config: AnchaConfig) -> dict[str, AnchaUserError]:
    """Why ``ancha run`` would not start this agent, keyed by the field at fault (``agent``,
    ``agent.url``, ``agent.execution``, ``agent.<tool>_transport``), in the order run checks
    them; run stops at the first, ``ancha doctor`` reports each."""
    agent = config.agent
    if agent is None or not (agent.command or agent.url):
        return {"agent": AnchaUserError("error[CONFIG_INVALID]: agent: no agent to run\n"
                                        "hint: agent: set agent.command (e.g. `python agent.py`) in ancha.yaml, "
                                        "or pass --agent 'python agent.py'")}
    refusals: dict[str, AnchaUserError] = {}
    container = container_refusal(config)
    if container is not None:
        refusals["agent.execution"] = container
    for field, value in agent.model_dump().items():
        if not field.endswith("_transport"):
            continue
        spec = registry().tools.get(field.removesuffix("_transport"))
        supported = spec.transports if spec is not None else ("feed",)
        if value == "http" and spec is not None and spec.webhook is not None:
            if not agent.url:  # the vendor POSTs to a URL: only an endpoint agent has one
                refusals[f"agent.{field}"] = RunFailed(
                    f"error[AGENT_UNSUPPORTED]: agent.{field} http needs an endpoint agent: "
                    f"{spec.name} POSTs its events to agent.url\nhint: set agent.url (and agent.start) "
                    f"to run the agent as an HTTP server, or use {field}: feed")
        elif value not in supported:
            refusals[f"agent.{field}"] = RunFailed(f"error[AGENT_UNSUPPORTED]: agent.{field} {value} is not "
                                                   f"supported yet\nhint: use {field}: {supported[0]}")
    return refusals


def new_run_id() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(3)


async def run_scenes(config: AnchaConfig, scenes: list[Scene], *, inherit_env: bool = False,
                     console: Console | None = None, progress: bool = True, retry_invalid: bool = False,
                     model_upstreams: Mapping[str, str] | None = None, seed: int | None = None,
                     branch: Branch | None = None) -> RunResult:
    """``model_upstreams``: where the model gateway reaches a domain instead of ``https://DOMAIN``
    (tests point it at local stand-ins; not a setting). ``seed``: the run's seed (``--seed``;
    drawn at random when not given, and kept in ``summary.json``): with a scene and a trial
    number it decides the world. ``branch``: a replay or fork (``ancha replay``, ``ancha fork``):
    its origin, trial numbers and checkpoint."""
    if console is None:
        console = Console()
        if not console.is_terminal:  # CI logs: wide enough that scene names are never cut
            console = Console(width=140)
    refuse_unbuilt_agents(config)
    if wants_world_clock(config) and find_library() is None:  # once per run: the trials go on, on the wall clock
        console.print(f"ancha: {MISSING}", markup=False, highlight=False)
    clean_after_dead_runs()  # what runs killed mid-trial left: their containers, namespaces, cgroups
    containers = None
    if config.agent is not None and config.agent.execution.mode == "container":  # engine, image, files: or stop
        containers = ContainerExecution.prepare(config, [s.path for s in scenes])
    root = config.root
    run_id = new_run_id()
    runs = RunsFolder.of_project(root)
    run_dir = runs.path / run_id
    started_at = datetime.now(UTC)
    t0 = time.perf_counter()

    summaries = [SceneSummary(s.name, s.path, config.trials, config.min_pass_rate, source_hash=s.source_hash or "")
                 for s in scenes]
    if branch is not None and branch.trials:
        for scene_summary in summaries:
            scene_summary.trials = len(branch.trials.get(scene_summary.scene) or ()) or scene_summary.trials
    hosts = config.agent.execution.model_hosts if config.agent else []
    gateway = ModelGateway(hosts, upstreams=model_upstreams).start() if hosts else None
    seed = secrets.randbits(63) if seed is None else seed
    options: dict[str, Any] = {"seed": seed}
    if branch is not None:
        options.update(fork=branch.fork, calls=branch.calls)
    try:  # a server or cluster that cannot be reached stops the run before its folder is made
        executor = await open_trials(config, run_dir, scenes, inherit_env=inherit_env or config.inherit_env,
                                     gateway=gateway, containers=containers, **options)
    except BaseException:
        if gateway is not None:
            gateway.stop()
        raise
    runs.new_run(run_id)
    interrupted = False
    if branch is not None:  # the world's trial number where the folder's differs (trial 3, replayed as 1)
        runner = getattr(executor, "_runner", None)
        if runner is not None:
            runner.trial_numbers.update(branch.trial_numbers)
    try:
        interrupted = await _run_all(executor, run_dir, scenes, summaries, console, progress, retry_invalid,
                                     branch.trials if branch is not None else None)
    finally:
        if gateway is not None:
            gateway.stop()
        await executor.close()
        if containers is not None:  # every container of the run is gone
            forget_container_run()

    exit_code = _exit_code(summaries, interrupted)
    summary = {
        "run_id": run_id,
        "started_at": started_at.isoformat().replace("+00:00", "Z"),
        "duration_s": round(time.perf_counter() - t0, 3),
        "interrupted": interrupted,
        "exit_code": exit_code,
        "seed": seed,
        **({"origin": branch.origin} if branch is not None else {}),
        "server": executor.server_label,
        "config": _config_record(config),
        "scenes": [s.to_dict() for s in summaries],
    }
    RunFolder(run_dir).write_summary(summary)
    print_summary(console, summaries, interrupted, str(run_dir))
    return RunResult(run_id, run_dir, summaries, interrupted, exit_code)


async def _run_all(executor: TrialExecutor, run_dir: Path, scenes: list[Scene], summaries: list[SceneSummary],
                   console: Console, show_progress: bool, retry_invalid: bool,
                   numbers: dict[str, list[int]] | None = None) -> bool:
    jobs = [(i, scene, trial) for i, scene in enumerate(scenes)
            for trial in ((numbers or {}).get(scene.name) or range(1, summaries[i].trials + 1))]
    limiter = asyncio.Semaphore(executor.trials_at_once)
    bar = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                   console=Console(stderr=True), disable=not show_progress, transient=True)
    task_id = bar.add_task("trials", total=len(jobs))

    async def one(index: int, scene: Scene, trial: int) -> None:
        async with limiter:
            bar.update(task_id, description=f"{scene.name} #{trial}")
            outcome = await run_with_retry(executor, run_dir, scene, trial, retry_invalid)
            summaries[index].outcomes.append(outcome)
            bar.advance(task_id)

    loop = asyncio.get_running_loop()
    main = asyncio.ensure_future(asyncio.gather(*(one(*job) for job in jobs)))
    interrupted = False

    def on_interrupt() -> None:
        nonlocal interrupted
        interrupted = True
        main.cancel()

    try:
        loop.add_signal_handler(signal.SIGINT, on_interrupt)
        loop.add_signal_handler(signal.SIGTERM, on_interrupt)
    except (NotImplementedError, RuntimeError):  # not in the main thread: no signal handling
        pass
    with bar:
        try:
            await main
        except asyncio.CancelledError:
            if not interrupted:
                raise
        finally:
            for sig in (signal.SIGINT, signal.SIGTERM):
                try:
                    loop.remove_signal_handler(sig)
                except (NotImplementedError, RuntimeError):
                    pass
    return interrupted


async def run_trial(runner: TrialRunner, scene: Scene, trial: int) -> TrialOutcome:
    """One trial, whatever the server or the agent does: an error that escapes the trial (a
    dropped connection, a 500, an answer the runner cannot read) makes it invalid, with the
    reason in its ``checks.json`` and ``agent.log``, and the other trials and the summary go on."""
    try:
        return await runner.run(scene, trial)
    except Exception as exc:  # the last line of defence of the run
        reason = f"the trial could not be run: {type(exc).__name__}: {exc}"
        folder = RunFolder(runner.run_dir).trial(scene.name, trial).create()
        folder.log(f"ancha: {reason}")
        folder.write_checks(scene.name, trial, "invalid", None, reason, [])
        return TrialOutcome(scene.name, trial, "invalid", reason)


def _exit_code(summaries: list[SceneSummary], interrupted: bool) -> int:
    if interrupted:
        return EXIT_INTERRUPTED
    outcomes = [o for s in summaries for o in s.outcomes]
    if outcomes and all(o.verdict == "invalid" and o.never_started for o in outcomes):
        return EXIT_NOT_CARRIED_OUT
    return EXIT_PASSED if all(s.gate_met for s in summaries) else EXIT_GATE_FAILED


def _config_record(config: AnchaConfig) -> dict[str, Any]:
    """The run's configuration, minus anything secret: agent.env values may hold tokens."""
    agent = config.agent
    return {
        "agent": None if agent is None else {
            "command": agent.command, "cwd": agent.cwd, "env": sorted(agent.env), "pass_env": list(agent.pass_env),
            "input": agent.input, "execution": {"mode": agent.execution.mode, "image": agent.execution.image,
                                                 "env": list(agent.execution.env)},
            **({"version": agent.version} if agent.version else {}),
        },
        "scenes": list(config.scenes),
        "trials": config.trials,
        "parallel": config.trials_at_once,
        "min_pass_rate": config.min_pass_rate,
        "server": None if config.server.url is None else str(config.server.url),
    }
