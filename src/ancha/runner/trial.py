"""One trial: build the world, run the agent in it, grade it, write its results."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from ancha.checks.collateral import grade_collateral
from ancha.checks.judge import (
    JudgeUnavailable,
    context_secrets,
    evaluate_judge_checks,
    trace_entries_from_jsonl,
    world_views,
)
from ancha.checks.results import CheckResult, trial_verdict
from ancha.config.model import AnchaConfig
from ancha.config.templates import render
from ancha.results import coverage_gaps
from ancha.results.run_folder import RunFolder, TrialFolder
from ancha.runner.agents.command import NOT_STARTED_CODES, AgentNotStarted, CommandAgent, LogSink
from ancha.runner.agents.container import ContainerAgent, ContainerExecution
from ancha.runner.agents.container_network import Endpoint, rewrite_url
from ancha.runner.agents.endpoint import EndpointAgent, free_port
from ancha.runner.agents.environment import (
    ancha_variables,
    base_environment,
    event_variables,
    template_values,
    trust_variables,
    without_withheld,
)
from ancha.runner.agents.real_hostnames import host_variables
from ancha.runner.agents.state_journal import StateJournal, restore_state
from ancha.runner.agents.world_clock import clock_variables, find_library, timestamp_file, wants_world_clock
from ancha.runner.control import ControlClient, ServerError
from ancha.runner.gateway import GatewayTrial, ModelGateway
from ancha.scene.model import Scene

STATUS_POLL_S = 0.05
FINISHED_BY_GRADING = "the agent finished"
"""The world's ending when it was still running at grading (``ControlAPI.grade``): the agent had exited."""
AgentMaker = Callable[[str, Path, dict[str, str], LogSink], "CommandAgent | ContainerAgent"]
"""How an agent process is made: ``CommandAgent`` on the host, ``ContainerTrial.agent`` in a container."""


@dataclass
class TrialOutcome:
    scene: str
    trial: int
    verdict: str
    """``passed``, ``failed`` or ``invalid``."""
    reason: str | None = None
    status: str | None = None
    never_started: bool = False
    retried: str | None = None
    """With ``--retry-invalid``: why the first attempt of this trial was invalid (this is its retry)."""
    ended: str | None = None
    """How the trial ended, in words: the agent exited, the done URL, the clock limit, or an agent
    that waited with nothing left to wake it."""
    timings: dict[str, float] = field(default_factory=dict)
    agent_log: dict[str, Any] | None = None
    """What was dropped of agent.log past ``agent.log_limit``; None when it is whole."""
    state: dict[str, Any] | None = None
    """What of a container agent's ``/state`` was left out past its cap; None when it is whole."""
    cost: dict[str, Any] | None = None
    """The trial's model calls through the model gateway (``GatewayTrial.cost()``); None without one."""
    also_changed: dict[str, list[str]] = field(default_factory=dict)
    """Tool -> what the agent changed there that no check mentions (``checks.collateral``)."""
    coverage_gaps: list[dict[str, Any]] = field(default_factory=list)
    """Operations the replica does not implement that were called, each with its calls (``results.coverage_gaps``)."""


@dataclass
class Fork:
    """Where a forked run's trials start: a checkpoint, and the trial it came from."""

    data: bytes
    """The checkpoint's (signed) bytes, brought to the run's server and kept in each trial's folder."""
    forked_at: str
    """The simulated instant it stands at (``ANCHA_FORKED_AT``)."""
    state_journal: Path | None = None
    """The original trial's journal of the agent's state folder (``state-journal``), if it has one."""
    seq: int = 0
    """The trace entry it stands after: each trial's ``state/`` is the journal's version as of then."""
    world_line: dict[str, Any] = field(default_factory=dict)
    """``origin`` and more for each trial's ``replay.json``."""
    original: Scene | None = None
    """The scene the checkpoint was made from, when the trials go on under a changed one (``--set``)."""
    checkpoint: str | None = None
    """The run's server's id for it, once brought there."""


@dataclass(frozen=True)
class CallsReplay:
    """``ancha replay --calls``: no agent; the original trial's calls are made again."""

    run: RunFolder
    """The original run: each trial's folder there (its ``calls.jsonl``, ``replay.json``,
    ``checks.json``) is the one of the same scene and trial number."""

    def folder(self, scene: str, trial: int) -> TrialFolder:
        return self.run.trial(scene, trial)


class TrialRunner:
    def __init__(self, control: ControlClient, config: AnchaConfig, run_dir: Path, inherit_env: bool = False,
                 gateway: ModelGateway | None = None, containers: ContainerExecution | None = None,
                 seed: int | None = None, fork: Fork | None = None, calls: CallsReplay | None = None) -> None:
        self.seed = seed
        self.calls = calls
        """Set for ``ancha replay --calls``: the recorded calls stand in for the agent."""
        self._fork_lock = asyncio.Lock()
        """The run's seed: with the scene and the trial it decides each world (``replay.json``)."""
        self.fork = fork
        """Set for ``ancha fork``: every trial starts from this checkpoint."""
        self._journals: dict[str, StateJournal] = {}
        """Each running agent's state-folder journal, by env id (what ``ancha fork`` restores)."""
        self.trial_numbers: dict[tuple[str, int], int] = {}
        """The world's trial number where it differs from the folder's (a replay of trial 3 is trial 1 of its run)."""
        self.control = control
        self.config = config
        self.run_dir = run_dir
        self.inherit_env = inherit_env
        self.containers = containers
        """Set for ``agent.execution.mode: container``: each agent process runs in a container."""
        self.gateway = gateway
        """The run's model gateway (``agent.execution.modelHosts``), or None."""
        self.model_trials: dict[str, GatewayTrial] = {}
        """Each running trial's place on the model gateway, by env id."""
        self.exits: dict[str, int] = {}
        """Each trial's agent exit code, by env id, when the agent ended it by exiting."""
        self.clock_library = world_clock_library(config)
        """The libfaketime agents run under, so that their clock reads the world's (None: the wall clock)."""
        gateway_endpoint = Endpoint.of_url(gateway.url) if gateway is not None else None
        if containers is not None and gateway_endpoint is not None:  # agents inside reach the gateway too
            containers.endpoints.append(gateway_endpoint)

    async def run(self, scene: Scene, trial: int) -> TrialOutcome:
        folder = RunFolder(self.run_dir).trial(scene.name, trial).create()
        trial_dir = folder.path
        timings: dict[str, float] = {}
        started = time.perf_counter()
        agent = self.config.agent
        # The trial's place on the model gateway comes first: real hostnames send its model hosts there.
        model_trial = self.gateway.open_trial(folder, agent.budget_usd if agent else None) if self.gateway else None
        world_trial = self.trial_numbers.get((scene.name, trial), trial)
        try:
            context = await self._create_env(scene, trial, world_trial, self._agent_spec(model_trial))
        except ServerError as exc:
            if model_trial is not None and self.gateway is not None:
                self.gateway.close_trial(model_trial)
            folder.log(f"ancha: {exc}", append=False)
            outcome = TrialOutcome(scene.name, trial, "invalid", str(exc), never_started=True)
            self._write_checks(trial_dir, outcome, [])
            return outcome
        timings["world_s"] = time.perf_counter() - started
        env_id = context["env_id"]
        if self.fork is not None:  # the world it started from, and what the agent remembered then
            self._start_fork(folder)
        folder.write_live(self.control.base_url, env_id)
        graded = False
        try:
            if self.calls is not None:
                outcome = await self._make_calls(scene, trial, context)
            else:
                outcome = await self._run_agent(scene, trial, context, trial_dir, timings, model_trial)
            try:
                await self._grade(scene, context, trial_dir, outcome)
                graded = True
            except (ServerError, httpx.HTTPError) as exc:
                # The world could not be graded, through no fault of the agent: invalid, and the run goes on.
                outcome.verdict, outcome.reason = "invalid", f"the trial could not be graded: {exc}"
                folder.log(f"ancha: {outcome.reason}")
                self._write_checks(trial_dir, outcome, [])
        finally:
            folder.clear_live()
            if not graded:  # interrupted or failed before grading: do not leave the world behind
                await asyncio.shield(self._discard(env_id, folder))
        timings["total_s"] = time.perf_counter() - started
        outcome.timings = {**timings, **outcome.timings}
        return outcome

    async def _create_env(self, scene: Scene, folder_trial: int, trial: int, agent: dict[str, Any]) -> dict[str, Any]:
        """The trial's world (``trial``: its world's trial number): new, from the fork's
        checkpoint, or built for the recorded calls of the original's trial ``folder_trial``."""
        if self.calls is not None:
            line = self.calls.folder(scene.name, folder_trial).read_world_line() or {}
            try:
                return await self.control.create_env(scene, trial, agent, seed=self.seed, replay=True,
                                                      env_id=line.get("env_id"))
            except ServerError as exc:  # its id is taken on this server: the world's URLs then differ
                if "exists on this server" not in str(exc):
                    raise
                return await self.control.create_env(scene, trial, agent, seed=self.seed, replay=True)
        if self.fork is None:
            return await self.control.create_env(scene, trial, agent, seed=self.seed)
        fork = self.fork
        async with self._fork_lock:  # brought to this server once, for every trial
            if fork.checkpoint is None:
                fork.checkpoint = await self.control.bring_checkpoint(fork.data)
        original = fork.original or scene
        patched = scene.model_dump(mode="json", by_alias=True) if fork.original is not None else None
        return await self.control.create_env(original, trial, agent, from_checkpoint=fork.checkpoint,
                                             patched_scene=patched)

    async def _make_calls(self, scene: Scene, trial: int, context: dict[str, Any]) -> TrialOutcome:
        """``ancha replay --calls``: the original's calls at their instants, then its ending; what
        the agent did beside the world (its exit, its log) is the original's."""
        assert self.calls is not None
        original = self.calls.folder(scene.name, trial)
        line = original.read_world_line() or {}
        checks = original.read_checks()
        calls = original.read_calls()
        ended = line.get("ended") or {}
        env_id = str(context["env_id"])
        for start in range(0, len(calls), 2000):
            await self.control.make_calls(env_id, calls[start:start + 2000])
        if ended.get("at"):
            await self.control.make_calls(env_id, [], end={"at": ended["at"], "status": ended.get("status"),
                                                            "reason": ended.get("reason")})
        told = str(checks.get("ended") or "")
        if told.startswith("the agent exited (code ") and told.endswith(")"):
            self.exits[env_id] = int(told.removeprefix("the agent exited (code ").removesuffix(")"))
        outcome = TrialOutcome(scene.name, trial, "failed", reason=checks.get("reason"), status=checks.get("status"))
        outcome.agent_log, outcome.state, outcome.cost = checks.get("agent_log"), checks.get("state"), checks.get("cost")
        return outcome

    def _start_fork(self, folder: TrialFolder) -> None:
        assert self.fork is not None
        folder.checkpoint_path.write_bytes(self.fork.data)
        if self.fork.state_journal is not None and self.fork.state_journal.is_dir():
            restore_state(self.fork.state_journal, self.fork.seq, folder.state_dir)

    async def _status(self, env_id: str) -> dict[str, Any]:
        """The world's status; the agent's state folder is journalled against where the world stands."""
        status = await self.control.status(env_id)
        journal = self._journals.get(env_id)
        if journal is not None:
            _observe(journal, status)
        return status

    async def _discard(self, env_id: str, folder: TrialFolder) -> None:
        """Delete a world the trial is done with; a server that cannot must not hide why the trial ended."""
        try:
            await self.control.delete(env_id)
        except (ServerError, httpx.HTTPError) as exc:
            folder.log(f"ancha: the world {env_id} could not be deleted: {exc}")

    def _agent_spec(self, model_trial: GatewayTrial | None = None) -> dict[str, Any]:
        """What the world needs to know of the agent: how it takes input, when it is idle, and
        how each tool's events reach it (every ``<tool>_transport`` setting)."""
        agent = self.config.agent
        assert agent is not None
        transports = {name: value for name, value in agent.model_dump().items() if name.endswith("_transport")}
        clock = "world" if self.clock_library is not None else "wall"  # the world writes its time for the agent
        spec = {"mode": agent.kind or "command", "input": agent.input, "idle": agent.idle, "clock": clock,
                **transports}
        if agent.hostnames == "real":  # a container reaches nothing else; a host agent keeps its internet
            hostnames: dict[str, Any] = {"mode": "real", "others": "refuse" if self.containers is not None else "tunnel"}
            if model_trial is not None:  # the model providers' hostnames lead to the gateway, never out
                hostnames["model"] = {"hosts": model_trial.hosts, "url": model_trial.url}
            spec["hostnames"] = hostnames
        return spec

    async def _run_agent(self, scene: Scene, trial: int, context: dict[str, Any], trial_dir: Path,
                         timings: dict[str, float], model_trial: GatewayTrial | None = None) -> TrialOutcome:
        agent_cfg = self.config.agent
        assert agent_cfg is not None and (agent_cfg.command or agent_cfg.url)
        folder = TrialFolder(trial_dir)
        library = self.clock_library
        clock_file = timestamp_file(context) if library is not None else None
        box = None
        if self.containers is not None:
            box = self.containers.trial(context, folder.state_dir,
                                        clock=(library, Path(clock_file)) if library and clock_file else None)
        make: AgentMaker = CommandAgent if box is None else box.agent
        values = template_values(context if box is None else box.context)
        if box is None:
            env = base_environment(agent_cfg.pass_env, self.inherit_env)
            env.update(ancha_variables(context, str(folder.state_dir.resolve())))
            trust = trust_variables(context, None, env)
            env.update(trust)
            if "SSL_CERT_FILE" in trust:  # agent.hostnames: real: the proxy, the preloads, the bundle everywhere
                env.update(host_variables(context, Path(trust["SSL_CERT_FILE"]), env))
        else:  # nothing of the host's own: the container's variables, with the URLs it reaches
            env = box.environment()
        if self.fork is not None:  # the world goes on from a checkpoint: the agent is told when it stood
            env["ANCHA_FORKED_AT"] = self.fork.forked_at
        if model_trial is not None:  # model calls through the gateway, at the address the agent reaches
            self.model_trials[str(context["env_id"])] = model_trial
            env.update(model_trial.environment(env, None if box is None else rewrite_url(model_trial.url, box.plan)))
        if agent_cfg.kind == "endpoint" and agent_cfg.start:  # its own server on its own port
            values["agent.port"] = env["ANCHA_AGENT_PORT"] = str(free_port())
        # Python agents write agent.log as they go, not in blocks a trial's end can lose (yours wins)
        env.setdefault("PYTHONUNBUFFERED", "1")
        env.update({name: render(value, values) for name, value in agent_cfg.env.items()})
        if box is None and library is not None and clock_file is not None:
            env.update(clock_variables(str(library), clock_file, env.get("LD_PRELOAD")))
        cwd = agent_cwd(self.config)
        env_id = str(context["env_id"])
        journal = self._journals[env_id] = StateJournal(folder.state_dir, folder.state_journal_path)
        begun = time.perf_counter()
        without_withheld(env)  # the server's key, even from agent.env: it would open the agent's own grading
        with folder.open_log(agent_cfg.log_limit) as log:
            try:
                if agent_cfg.kind == "endpoint":
                    code, status, started_any = await self._endpoint(values, cwd, env, log, context)
                elif agent_cfg.input == "per_event":
                    code, status, started_any = await self._per_event(agent_cfg.command or "", cwd, env, log,
                                                                      context, make, trial_dir)
                else:
                    code, status, started_any = await self._once(agent_cfg.command or "", cwd, env, log, context,
                                                                 make)
            finally:
                if model_trial is not None and self.gateway is not None:
                    self.model_trials.pop(str(context["env_id"]), None)
                    self.gateway.close_trial(model_trial)
                await self._last_state(env_id, journal)
            timings["agent_s"] = time.perf_counter() - begun
            outcome = TrialOutcome(scene.name, trial, "failed", status=status)
            if model_trial is not None:
                outcome.cost = model_trial.cost()
                if model_trial.over_budget:  # whether the runner or the agent ended it first
                    outcome.status = status = "over_budget"
            if not started_any:
                outcome.verdict, outcome.never_started = "invalid", True
                outcome.reason = status
            elif status == "timed_out":
                outcome.reason = "the trial outlived clock.limit; the agent was stopped"
            elif status == "over_budget" and model_trial is not None:
                outcome.reason = model_trial.budget_reason()
            elif code in NOT_STARTED_CODES:
                outcome.verdict, outcome.never_started = "invalid", True
                outcome.reason = f"{NOT_STARTED_CODES[code]}: {agent_cfg.command or agent_cfg.start}"
            elif code is not None and code != 0:
                outcome.reason = _exit_reason(code)
            if outcome.reason:
                log.write(f"\nancha: {outcome.reason}\n".encode())
        outcome.agent_log = log.cut
        outcome.state = box.state_cut if box is not None else None
        return outcome

    async def _once(self, command: str, cwd: Path, env: dict[str, str], log: LogSink,
                    context: dict[str, Any], make: AgentMaker = CommandAgent) -> tuple[int | None, str, bool]:
        """input: command — one process for the whole trial."""
        agent = make(command, cwd, env, log)
        try:
            await agent.start()
        except AgentNotStarted as exc:
            log.write(f"ancha: {exc}\n".encode())
            return None, str(exc), False
        try:
            code, status = await self._supervise(agent, context["env_id"])
        finally:
            await agent.stop()
        if status == "done" and code is not None:
            self.exits[str(context["env_id"])] = code
        return code, status, True

    async def _endpoint(self, values: dict[str, str], cwd: Path, env: dict[str, str], log: LogSink,
                        context: dict[str, Any]) -> tuple[int | None, str, bool]:
        """An endpoint agent: its server started (``agent.start``) and ready, or set up
        (``agent.setup_url``); the world then delivers to ``agent.url`` until the trial ends
        (done URL, idle, clock.limit). A managed server that exits first ends the trial."""
        agent_cfg = self.config.agent
        assert agent_cfg is not None and agent_cfg.url
        url_values = {**values, "service": "{{service}}"}  # the world fills it in per event
        loop = asyncio.get_running_loop()
        deadline = loop.time() + agent_cfg.startup_timeout
        agent = EndpointAgent(
            start=agent_cfg.start, ready_url=render(agent_cfg.ready_url, values) if agent_cfg.ready_url else None,
            setup_url=render(agent_cfg.setup_url, values) if agent_cfg.setup_url else None, cwd=cwd, env=env,
            log=log, env_id=str(context["env_id"]), startup_timeout=agent_cfg.startup_timeout)
        try:
            try:
                await agent.start(context)
                await self.control.start_endpoint(context["env_id"], render(agent_cfg.url, url_values),
                                                  max(0.1, deadline - loop.time()))
            except (AgentNotStarted, ServerError) as exc:
                log.write(f"ancha: {exc}\n".encode())
                return None, str(exc), False
            log.write(f"ancha: the agent is ready; events go to {render(agent_cfg.url, url_values)}\n".encode())
            while True:
                if self._over_budget(str(context["env_id"])):
                    return None, "over_budget", True
                status = (await self._status(str(context["env_id"])))["status"]
                if status != "running":
                    return None, status, True
                if agent.exit_code is not None:
                    return agent.exit_code, "exited", True
                await asyncio.sleep(STATUS_POLL_S)
        finally:
            await agent.stop()

    async def _per_event(self, command: str, cwd: Path, env: dict[str, str], log: LogSink,
                         context: dict[str, Any], make: AgentMaker = CommandAgent,
                         trial_dir: Path | None = None) -> tuple[int | None, str, bool]:
        """input: per_event — one process per event addressed to the agent. Between two
        invocations the runner waits on the event feed, which lets the world's clock jump.
        Each event is in a file of the trial's folder that only the agent's user can read
        (``ANCHA_EVENT_FILE``), removed when its run ends, and also in ``ANCHA_EVENT_JSON``
        when it fits there (``event_variables``)."""
        cursor, worst, started_any = "0", None, False
        while True:
            if self._over_budget(str(context["env_id"])):  # spent past agent.budget_usd: no more events
                return worst, "over_budget", started_any
            events, cursor = await self.control.feed(context["events"]["url"], context["events"]["token"], cursor)
            if not events:
                status = (await self._status(str(context["env_id"])))["status"]
                if status != "running":
                    return worst, status, True  # no event needed the agent: nothing failed to start
                continue
            for event in events:
                if self._over_budget(str(context["env_id"])):
                    return worst, "over_budget", started_any
                log.write(f"ancha: event {event.get('id')} {event.get('service')} {event.get('type')}\n".encode())
                summary = str(context["task"]) if event.get("type") == "task" else event_summary(event)
                event_json = json.dumps(event)
                fd, name = tempfile.mkstemp(prefix=".event-", suffix=".json", dir=trial_dir)  # 0600, ours
                try:
                    with os.fdopen(fd, "w", encoding="utf-8") as out:
                        out.write(event_json)
                    handed = event_variables(event_json, Path(name).absolute(), env)  # the agent's cwd is its own
                    per_event = {**env, **handed, "ANCHA_TASK": summary}
                    code, status, started = await self._once(command, cwd, per_event, log, context, make)
                finally:
                    with contextlib.suppress(OSError):
                        os.unlink(name)
                started_any = started_any or started
                if not started:
                    return None, status, False
                if code:
                    worst = code
                if code is None or status != "done":  # the world ended the trial mid-event
                    return worst, status, True

    async def _supervise(self, agent: CommandAgent | ContainerAgent, env_id: str) -> tuple[int | None, str]:
        """Wait for the agent to exit, or for the world to end the trial (done URL, clock.limit)."""
        exited = asyncio.ensure_future(agent.wait())
        while True:
            done, _ = await asyncio.wait({exited}, timeout=STATUS_POLL_S)
            if done:
                # The world's own ending (done URL, idle, clock.limit) is read back when grading.
                return exited.result(), "done"
            if self._over_budget(env_id):
                exited.cancel()
                return None, "over_budget"
            status = (await self._status(env_id))["status"]
            if status != "running":
                exited.cancel()
                return None, status

    async def _last_state(self, env_id: str, journal: StateJournal) -> None:
        """The state folder as the agent left it, journalled at the world's last entry."""
        self._journals.pop(env_id, None)
        try:
            _observe(journal, await self.control.status(env_id))
        except (ServerError, httpx.HTTPError):
            pass  # the world is gone: what was journalled stands
        finally:
            journal.close()

    def _over_budget(self, env_id: str) -> bool:
        """The trial's model calls cost more than ``agent.budget_usd``: the runner stops the agent."""
        model_trial = self.model_trials.get(env_id)
        return model_trial is not None and model_trial.over_budget

    async def _grade(self, scene: Scene, context: dict[str, Any], trial_dir: Path, outcome: TrialOutcome) -> None:
        graded = await self.control.grade(context["env_id"], teardown=False, trace=False, state=False)
        folder = TrialFolder(trial_dir)
        trace_path = folder.trace_path
        saved = await asyncio.gather(self.control.save_trace(context["env_id"], trace_path),
                                     self.control.save_state(context["env_id"], folder.world_path),
                                     self.control.save_calls(context["env_id"], folder.calls_path),
                                     return_exceptions=True)  # all finish before the world can go
        folder.write_world_line(self._world_line(scene, graded["status"]))
        for failure in saved:
            if isinstance(failure, BaseException):
                raise failure
        deleting = asyncio.ensure_future(self._discard(context["env_id"], folder))  # while the results are written
        try:
            self._ending(graded, outcome)
            if outcome.ended:
                folder.log(f"ancha: the trial ended: {outcome.ended}")
            folder.write_records(graded["records"])
            try:
                results = await self._judge(scene, context, trace_path, folder.world_path, graded["results"])
            except JudgeUnavailable as exc:
                outcome.verdict, outcome.reason = "invalid", f"a judge check could not be graded: {exc}"
                by_id = {r.id: r.to_dict() for r in exc.results}
                results = [by_id.get(r["id"], r) for r in graded["results"]]
            results = await self._collateral(scene, outcome, folder, results)
            if outcome.verdict != "invalid":
                verdict = trial_verdict([CheckResult.from_dict(r) for r in results])
                if outcome.reason and outcome.status != "timed_out":
                    verdict = "failed"  # the agent crashed: its checks cannot make it pass
                outcome.verdict = verdict
            if self.config.strict_coverage and outcome.coverage_gaps and outcome.verdict != "invalid":
                # the user cannot know whether the agent or the replica is at fault
                outcome.verdict, outcome.reason = "invalid", coverage_gaps.strict_reason(outcome.coverage_gaps)
                folder.log(f"ancha: {outcome.reason}")
            self._write_checks(trial_dir, outcome, results)
        finally:
            await deleting

    def _world_line(self, scene: Scene, status: dict[str, Any]) -> dict[str, Any]:
        """``replay.json``: what rebuilds this trial's world (``ancha replay``, ``ancha fork``)."""
        line = {"env_id": status.get("id"), "seed": status.get("seed"), "trial": status.get("trial"),
                "scene": scene.name, "source_hash": scene.source_hash,
                "ended": {"at": status["clock"].get("ended_at"), "status": status.get("status"),
                          "reason": status.get("ended_reason")}}
        if self.fork is not None:
            line.update(self.fork.world_line)
        return line

    def _ending(self, graded: dict[str, Any], outcome: TrialOutcome) -> None:
        """How the trial ended, as the world's grade says (unless the runner ended it)."""
        if outcome.status != "over_budget":  # the runner ended it, not the world
            outcome.status = graded["status"]["status"]
        world_reason = graded["status"].get("ended_reason")
        code = self.exits.pop(str(graded["status"].get("id")), None)
        if code is not None and world_reason == FINISHED_BY_GRADING:  # it was still running: the agent exited
            outcome.ended = f"the agent exited (code {code})"
        else:
            outcome.ended = world_reason
        outcome.timings["simulated_s"] = float(graded["status"]["clock"]["elapsed_s"])
        outcome.coverage_gaps = coverage_gaps.operations(graded["status"].get("coverage_gaps"))
        if outcome.status == "timed_out" and not outcome.reason:
            outcome.reason = "the trial outlived clock.limit; the agent was stopped"

    async def _judge(self, scene: Scene, context: dict[str, Any], trace_path: Path, state: Path,
                     results: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Judge checks are graded here, with the user's own key, never on the server."""
        if not any(spec.judge is not None for spec in scene.checks):
            return results
        secrets = context_secrets(context)
        judged = await asyncio.to_thread(
            evaluate_judge_checks, scene.checks, trace_entries_from_jsonl(trace_path.read_text()),
            world_views(json.loads(state.read_bytes())), self.config.judge.model, dict(os.environ),
            required=scene.pass_, secrets=secrets,
        )
        by_id = {r.id: r.to_dict() for r in judged}
        return [by_id.get(r["id"], r) for r in results]

    async def _collateral(self, scene: Scene, outcome: TrialOutcome, folder: TrialFolder,
                          results: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """What else the agent changed (``also_changed``), and the scene's ``expect_unchanged``
        check among the results: worked out here, off the world's files, as judge checks are."""
        line = folder.read_world_line() or {}
        also, unchanged = await asyncio.to_thread(grade_collateral, scene, int(line.get("trial") or outcome.trial),
                                                  folder.world_path, folder.read_trace().values(), self._agent_spec(),
                                                  line.get("seed", self.seed))
        outcome.also_changed = also
        if unchanged is None:
            return results
        if unchanged.status == "error" and outcome.verdict != "invalid":
            outcome.verdict, outcome.reason = "invalid", f"expect_unchanged could not be graded: {unchanged.explanation}"
        return [*results, unchanged.to_dict()]

    @staticmethod
    def _write_checks(trial_dir: Path, outcome: TrialOutcome, results: list[dict[str, Any]]) -> None:
        TrialFolder(trial_dir).write_checks(outcome.scene, outcome.trial, outcome.verdict, outcome.status,
                                            outcome.reason, results, outcome.agent_log, outcome.cost,
                                            outcome.state, ended=outcome.ended,
                                            also_changed=outcome.also_changed or None,
                                            coverage_gaps=coverage_gaps.checks_field(outcome.coverage_gaps)
                                            if outcome.coverage_gaps else None)


def _observe(journal: StateJournal, status: dict[str, Any]) -> None:
    """Journal the agent's state folder as of the world's latest trace entry."""
    clock = status.get("clock") or {}
    try:
        journal.observe(int(status.get("trace_entries") or 0), str(clock.get("now") or ""))
    except OSError:
        pass  # a folder the agent is rewriting: the next look journals it


def world_clock_library(config: AnchaConfig) -> Path | None:
    """The libfaketime to run agents under: for ``agent.clock: world`` (the default) and an agent
    process Ancha starts (a command, or an endpoint's ``agent.start``), where it is installed."""
    return find_library() if wants_world_clock(config) else None


def _exit_reason(code: int) -> str:
    if code < 0:
        try:
            import signal

            return f"the agent was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"the agent was killed by signal {-code}"
    return f"the agent exited with code {code}"


def agent_cwd(config: AnchaConfig) -> Path:
    cwd = Path(config.agent.cwd) if config.agent and config.agent.cwd else Path(".")
    return cwd if cwd.is_absolute() else config.root / cwd



def event_summary(event: dict[str, Any]) -> str:
    """ANCHA_TASK for one event: a single line saying what happened."""
    payload = event.get("payload") or {}
    inner = payload.get("event", payload) if isinstance(payload, dict) else {}
    text = " ".join(str(inner.get("text", "")).split())
    where = inner.get("channel", "")
    who = inner.get("user", "")
    line = f"{event.get('service')} {event.get('type')} from {who} in {where}: {text}"
    return line[:500]
