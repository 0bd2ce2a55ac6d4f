"""``ancha doctor``: whether ``ancha run`` could run here, one check at a time.

Config and scenes go through exactly the loading and validation ``ancha run`` does, so
their problems read the same and exit 2. The rest checks what run would need next: the
server, the install's own data, the agent's program, the container engine and image, the judge's key; such a
failure exits 3, as a run that could not be carried out does. Every failure has a fix.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ancha.checks.judge import DEFAULT_JUDGE_MODEL, KEY_VAR
from ancha.config.errors import ConfigInvalid
from ancha.config.loading import ConfigOverrides, load_config
from ancha.config.model import AnchaConfig, ExecutionConfig
from ancha.config.templates import find_placeholders
from ancha.errors import AnchaUserError, Problem, RunFailed
from ancha.runner.agents.container_engine import probe_engines
from ancha.runner.agents.container_network import choose_engine, isolation_summary, network_hint
from ancha.runner.agents.environment import base_environment
from ancha.runner.agents.program import find_agent_program
from ancha.runner.agents.workspace_files import WorkspaceFilesInvalid, ancha_paths, select_files
from ancha.runner.agents.world_clock import MISSING, find_library, wants_world_clock
from ancha.runner.control import check_server
from ancha.runner.preflight import check_templates_against_scenes
from ancha.runner.product_data import REINSTALL, check_product_data
from ancha.runner.run import agent_refusals
from ancha.runner.trial import agent_cwd
from ancha.scene.errors import SceneInvalid
from ancha.scene.loading import load_scenes
from ancha.scene.model import Scene
from ancha.server.embedded import EmbeddedServer
from ancha.server.keys import KEY_VAR as SERVER_KEY_VAR
from ancha.server.keys import new_key, server_key
from ancha.world.registry import catalog, config_catalog

EXIT_READY, EXIT_INVALID, EXIT_NOT_READY = 0, 2, 3
"""0: run could start; 2: config or scene problems (as run); 3: run could not be carried out here."""
IMAGE_INSPECT_TIMEOUT_S = 30.0

Status = Literal["ok", "FAIL", "skip", "warn"]
"""``warn``: run goes on, in a lesser way (agents on the wall clock); the exit code stays 0."""


@dataclass(frozen=True, slots=True)
class Check:
    """One line of the diagnosis. A failure's ``invalid`` says run would refuse the input
    itself (exit 2) rather than be unable to run it here (exit 3)."""

    name: str
    status: Status
    detail: str
    fix: str | None = None
    invalid: bool = False


def _ok(name: str, detail: str) -> Check:
    return Check(name, "ok", detail)


def _skip(name: str, detail: str) -> Check:
    return Check(name, "skip", detail)


def _fail(name: str, detail: str, fix: str | None, *, invalid: bool = False) -> Check:
    return Check(name, "FAIL", detail, fix, invalid)


@dataclass(slots=True)
class Diagnosis:
    """The checks in order, and the config and scene errors exactly as ``ancha run`` prints them."""

    checks: list[Check] = field(default_factory=list)
    reports: list[AnchaUserError] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        failed = [c for c in self.checks if c.status == "FAIL"]
        if any(c.invalid for c in failed):
            return EXIT_INVALID
        return EXIT_NOT_READY if failed else EXIT_READY


def diagnose(config_path: Path | None, cwd: Path, overrides: ConfigOverrides,
             environ: Mapping[str, str] | None = None) -> Diagnosis:
    """Every check ``ancha run`` with the same options would meet, each on its own line.
    A config that does not load stops the diagnosis: the rest depends on it."""
    environ = os.environ if environ is None else environ
    diagnosis = Diagnosis()
    try:
        config = load_config(config_path, cwd, overrides, catalog=config_catalog())
    except ConfigInvalid as exc:
        first = exc.problems[0]
        shown = _shown(exc.file, cwd) if exc.file and not first.path.startswith("-") else "options"
        if first.line and not first.path:  # the file as a whole, such as its YAML syntax
            shown = f"{shown}:{first.line}"
        diagnosis.checks.append(_fail("config", f"{shown}: {_located(first)}{_more(len(exc.problems))}",
                                      first.hint or _last_fix(exc), invalid=True))
        diagnosis.reports.append(exc)
        return diagnosis
    scenes = _check_scenes(config, diagnosis)
    shown = _shown(config.source, cwd) if config.source else "no ancha.yaml, the defaults"
    trials = _count(config.trials, "trial")
    counts = f"{_count(len(scenes), 'scene')}, {trials} each" if scenes is not None else f"{trials} per scene"
    diagnosis.checks.insert(0, _ok("config", f"{shown}: {counts}"))
    diagnosis.checks.append(check_server_reachable(config, environ))
    diagnosis.checks.append(check_data())
    diagnosis.checks.extend(check_agent(config, environ, diagnosis))
    diagnosis.checks.extend(check_container(config, environ))
    diagnosis.checks.append(check_agent_clock(config, environ))
    diagnosis.checks.append(check_judge_key(config, scenes, environ))
    return diagnosis


def _check_scenes(config: AnchaConfig, diagnosis: Diagnosis) -> list[Scene] | None:
    """The scenes as run loads them, or None (with a line per failing scene file) when they do not load."""
    try:
        scenes = load_scenes(list(config.scenes), config.root, catalog())
        check_templates_against_scenes(config, scenes)
    except SceneInvalid as exc:
        diagnosis.reports.append(exc)
        diagnosis.checks.extend(_scene_failures(exc))
        return None
    except ConfigInvalid as exc:  # a template naming a tool a scene lacks
        diagnosis.reports.append(exc)
        first = exc.problems[0]
        diagnosis.checks.append(_fail("scenes", f"{_located(first)}{_more(len(exc.problems))}",
                                      first.hint or _last_fix(exc), invalid=True))
        return None
    names = ", ".join(s.name for s in scenes[:5]) + (", ..." if len(scenes) > 5 else "")
    diagnosis.checks.append(_ok("scenes", f"{_count(len(scenes), 'scene')}: {names}"))
    return scenes


def _scene_failures(error: SceneInvalid) -> list[Check]:
    """One line per scene file with problems (its first problem), and one per glob that matches nothing."""
    by_file: dict[str | None, list[Problem]] = {}
    for problem in error.problems:
        by_file.setdefault(problem.file, []).append(problem)
    checks = []
    for file, problems in by_file.items():
        first = problems[0]
        where = f"{file}:{first.line}: " if file and first.line else f"{file}: " if file else ""
        checks.append(_fail("scene" if file else "scenes", f"{where}{_located(first)}{_more(len(problems))}",
                            first.hint or _last_fix(error), invalid=True))
    return checks


def check_server_reachable(config: AnchaConfig, environ: Mapping[str, str]) -> Check:
    """``server.url`` answers the control API (with ANCHA_SERVER_KEY if set), as run checks
    first; without it, an embedded server starts here and answers."""
    if config.server.url:
        url = str(config.server.url)
        key = server_key(url, environ)
        try:
            asyncio.run(check_server(url, key))
        except RunFailed as exc:
            return _fail("server", *_split(exc))
        how = f" with {SERVER_KEY_VAR}" if environ.get(SERVER_KEY_VAR) else " with its kept key" if key else ""
        return _ok("server", f"{url} answered GET /envs" + how)
    try:
        with EmbeddedServer(key=new_key()) as server:
            asyncio.run(check_server(server.url, server.key))
    except (RuntimeError, OSError, RunFailed) as exc:
        return _fail("server", f"the embedded server did not start: {exc}",
                     "free a loopback port, or start `ancha serve` elsewhere and set server.url")
    return _ok("server", "embedded: started on a loopback port and answered GET /envs")


def check_data() -> Check:
    """The install's own data: every packaged vendor file reads and each tool's own check of it
    passes (GitHub's GraphQL schema builds)."""
    found = check_product_data()
    if found.problem is not None:
        return _fail("data", found.problem, REINSTALL)
    return _ok("data", f"{found.files} vendor data files intact" + "".join(f"; {clause}" for clause in found.found))


def check_agent(config: AnchaConfig, environ: Mapping[str, str], diagnosis: Diagnosis) -> list[Check]:
    """The agent run would start: its program for a command agent, run's refusal of what it cannot run yet."""
    refusals = agent_refusals(config)
    agent = config.agent
    if "agent" in refusals or agent is None:  # no agent at all: run refuses it as bad config (exit 2)
        diagnosis.reports.append(refusals["agent"])
        return [_fail("agent", *_split(refusals["agent"]), invalid=True)]
    checks = [_fail("agent", *_split(refusals[name]))
              for name in refusals if name != "agent.execution"]
    if agent.url and not agent.start:  # a server the user runs: nothing to start
        return checks or [_ok("agent", f"an endpoint agent you run yourself, at {agent.url}")]
    command = agent.command or agent.start
    assert command is not None
    if agent.execution.mode == "container":  # its program is in the image, not on this machine
        return [_ok("agent", f"{command}: runs in the image {agent.execution.image}"), *checks]
    cwd = agent_cwd(config)
    if not cwd.is_dir():
        return [_fail("agent", f"agent.cwd {cwd} is not a directory",
                      f"create it, or fix agent.cwd (relative to {config.root})"), *checks]
    program = find_agent_program(command, cwd, _agent_path(config, environ))
    if program.problem:
        checks.insert(0, _fail("agent", f"{command}: {program.problem}", program.fix))
    elif program.found:
        checks.insert(0, _ok("agent", f"{command}: {program.word} is {program.found}"))
    else:
        checks.insert(0, _ok("agent", f"{command}: {program.word} is {program.note}"))
    return checks


def check_agent_clock(config: AnchaConfig, environ: Mapping[str, str]) -> Check:
    """Whether the agent's clock will read the world's: libfaketime is where run looks for it."""
    agent = config.agent
    if agent is None:
        return _skip("clock", "no agent")
    if agent.clock == "wall":
        return _skip("clock", "agent.clock: wall: the agent reads the machine's clock")
    if agent.slack_transport == "socket":
        return _skip("clock", "slack_transport: socket: the agent reads the machine's clock (a jump would drop "
                              "its Socket Mode connection)")
    if not wants_world_clock(config):
        return _skip("clock", "an endpoint agent you run yourself keeps its own clock")
    library = find_library(environ)
    if library is None:
        detail, fix = MISSING.split(": install ", 1)
        return Check("clock", "warn", detail, "install " + fix)
    return _ok("clock", f"the agent's clock follows the world's (libfaketime: {library})")


def _agent_path(config: AnchaConfig, environ: Mapping[str, str]) -> str | None:
    """The PATH the agent's shell gets: the user's, unless agent.env sets one without templates."""
    agent = config.agent
    assert agent is not None
    own = agent.env.get("PATH")
    if own is not None and not find_placeholders(own):
        return own
    return base_environment(agent.pass_env, config.inherit_env, environ).get("PATH")


def check_container(config: AnchaConfig, environ: Mapping[str, str]) -> list[Check]:
    """For ``agent.execution.mode: container``: the engine, the image in it, the network
    isolation, the model hosts, and run's refusal of what containers cannot do."""
    execution = config.agent.execution if config.agent is not None else ExecutionConfig()
    if execution.mode != "container":
        return [_skip("container", f"agent.execution mode {execution.mode}: the agent runs as a local process")]
    checks = engine_checks(environ)
    chosen = choose_engine(probe_engines(environ), environ.get("PATH"))[0]
    engine = chosen.engine if chosen is not None else None
    if engine is None:
        checks.append(_skip("image", f"{execution.image}: not looked up without an engine"))
    else:
        checks.append(_image_check(engine.name, engine.program, execution.image or "", execution.preparation))
    checks.append(_files_check(config))
    hosts = ", ".join(execution.model_hosts)
    checks.append(_ok("modelHosts", f"{hosts}: over HTTPS through Ancha's model gateway, nothing else")
                  if hosts else _skip("modelHosts", "none: the agent reaches no model provider"))
    refusal = agent_refusals(config).get("agent.execution")
    if refusal is not None:
        checks.append(_fail("container", *_split(refusal)))
    return checks


def _files_check(config: AnchaConfig) -> Check:
    """What ``agent.execution.files`` gives the agent at /workspace, as run selects it."""
    assert config.agent is not None
    root = config.root.resolve()
    try:
        files = select_files(root, config.agent.execution.files, ancha_paths(root, config.source, [], config.scenes))
    except WorkspaceFilesInvalid as exc:
        return _fail("files", *_split(exc), invalid=True)
    size = sum(f.stat().st_size for f in files)
    return _ok("files", f"{_count(len(files), 'file')} ({size / 1024:,.0f} KiB) at /workspace, read-only")


def engine_checks(environ: Mapping[str, str]) -> list[Check]:
    """The engine container trials would use (the first that answers and can isolate the
    agent's network here) and that isolation, as ``ancha execution`` reports them."""
    probes = probe_engines(environ)
    used, problem = choose_engine(probes, environ.get("PATH"))
    checks: list[Check] = []
    if used is None or used.engine is None:
        said = "; ".join(f"{p.name}: {p.problem}" for p in probes)
        checks.append(_fail("engine", f"no container engine answers ({said})",
                            "install Docker (or Podman) and put its CLI on PATH; trials never fall back to a host "
                            "process"))
        checks.append(_skip("network", "not checked without an engine"))
        return checks
    engine = used.engine
    notes = f" ({'; '.join(used.notes)})" if used.notes else ""
    checks.append(_ok("engine", f"{engine.name} {engine.version} is {engine.program}{notes}"))
    if engine.limits_problem is not None:
        checks.append(_fail("limits", engine.limits_problem, network_hint(engine)))
    elif problem is not None:
        checks.append(_fail("network", problem, network_hint(engine)))
    else:
        checks.append(_ok("network", isolation_summary(engine)))
    return checks


def _image_check(engine: str, program: str, image: str, preparation: str | None = None) -> Check:
    try:
        answer = subprocess.run([program, "image", "inspect", "--format", "{{.Id}}", image], capture_output=True,
                                text=True, timeout=IMAGE_INSPECT_TIMEOUT_S, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return _fail("image", f"`{engine} image inspect {image}` did not finish: {exc}",
                     f"check that the {engine} engine runs (`{engine} info`)")
    if answer.returncode == 0:
        image_id = answer.stdout.strip().splitlines()[0] if answer.stdout.strip() else ""
        return _ok("image", f"{image} is in the local {engine}" + (f" ({image_id[:19]})" if image_id else "")
                   + ("; preparation: project rebuilds it when its build inputs change"
                      if preparation == "project" else ""))
    said = (answer.stderr.strip() or answer.stdout.strip() or f"exit {answer.returncode}").splitlines()[0]
    if preparation == "project":
        return _ok("image", f"{image} is not in the local {engine} yet: preparation: project builds it "
                            "before the first trial")
    if "no such image" in said.lower() or "image not known" in said.lower():
        return _fail("image", f"{image} is not in the local {engine}",
                     f"build it (`{engine} build -t {image} .`) or pull it (`{engine} pull {image}`); "
                     "trials never pull images")
    return _fail("image", f"`{engine} image inspect {image}` failed: {said}",
                 f"start the {engine} engine and check `{engine} info`")


def check_judge_key(config: AnchaConfig, scenes: list[Scene] | None, environ: Mapping[str, str]) -> Check:
    """Judge checks are graded by the runner with the user's key: without it each is skipped
    (``checks.judge``), and a skipped check never passes."""
    if scenes is None:
        return _skip("judge", "not looked at: the scenes did not load")
    judged = {s.name: n for s in scenes if (n := sum(1 for c in s.checks if c.judge is not None))}
    if not judged:
        return _skip("judge", "no judge checks")
    checks = _count(sum(judged.values()), "judge check")
    where = f"{checks} in {', '.join(judged)}"
    if (environ.get(KEY_VAR) or "").strip():
        return _ok("judge", f"{KEY_VAR} is set; {where}, model {config.judge.model or DEFAULT_JUDGE_MODEL}")
    return _fail("judge", f"{KEY_VAR} is not set, so the {where} would be skipped, and a skipped check never passes",
                 f"export {KEY_VAR}=<your OpenRouter key> in the shell you run ancha from")


def _split(error: AnchaUserError) -> tuple[str, str | None]:
    """``error[CODE]: message`` / ``hint: fix`` as run prints it, as a line's detail and fix."""
    lines = error.render().splitlines()
    message = lines[0].split("]: ", 1)[1] if lines[0].startswith("error[") else lines[0]
    hints = [line.strip().removeprefix("hint: ") for line in lines[1:]]
    return message, " ".join(hints) or None


def _last_fix(error: AnchaUserError) -> str:
    """The report's closing line, such as ``fix the config file: /path/ancha.yaml``."""
    return error.render().splitlines()[-1].strip().removeprefix("hint: ")


def _located(problem: Problem) -> str:
    return f"{problem.path}: {problem.message}" if problem.path else problem.message


def _more(count: int) -> str:
    return f" (and {_count(count - 1, 'more problem')})" if count > 1 else ""


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _shown(path: Path | None, cwd: Path) -> str:
    if path is None:
        return ""
    try:
        return str(path.resolve().relative_to(cwd.resolve()))
    except ValueError:
        return str(path)
