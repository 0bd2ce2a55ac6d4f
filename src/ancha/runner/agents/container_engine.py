"""The container engine a container agent runs on: a Docker-compatible CLI (docker or podman) that answers.

A CLI on PATH is not enough: a ``docker`` client with no daemon behind it cannot run
anything, so each candidate is asked for its server version, and the first that answers
is used. ``ANCHA_CONTAINER_ENGINE`` (a name or a path) picks one. Podman gets the flags this
kind of host needs: ``--runtime runc`` when runc is installed, and explicit ``nofile`` and
``nproc`` limits, which some hosts' defaults make podman refuse.

The probe also says where the engine runs its containers, which decides how the agent's
network is isolated (``container_network``): rootless or not, and for Docker whether its
daemon shares this machine's kernel (Docker Engine on Linux) or runs in a VM or elsewhere
(Docker Desktop, a remote ``DOCKER_HOST``, rootless dockerd).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field

from ancha.errors import RunFailed

CANDIDATES = ("docker", "podman")
"""Docker first, the engine the reference names; podman when Docker cannot run the agent here."""
ENGINE_VARIABLE = "ANCHA_CONTAINER_ENGINE"
PROBE_TIMEOUT_S = 20.0
PODMAN_ULIMITS = ("--ulimit", "nofile=1024:1024", "--ulimit", "nproc=4096:4096")


@dataclass(frozen=True, slots=True)
class Engine:
    """An engine that answered: ``program`` is its CLI, ``run_flags`` go on every ``create``/``run``."""

    name: str
    program: str
    version: str
    run_flags: tuple[str, ...] = ()
    rootless: bool = False
    """Podman run by a user other than root: its containers live in that user's namespace."""
    remote: str | None = None
    """Why the engine's containers are not processes of this machine (Docker Desktop, a remote
    or rootless daemon), or None when they are."""
    limits_problem: str | None = None
    """Why the engine cannot hold a container to cpus, memoryMb and pids here, or None."""

    def command(self, *args: str) -> list[str]:
        return [self.program, *args]


@dataclass(frozen=True, slots=True)
class EngineProbe:
    """What one candidate CLI said: ``engine`` when it answered, else ``problem``."""

    name: str
    program: str | None
    engine: Engine | None = None
    problem: str | None = None
    notes: list[str] = field(default_factory=list)


def probe_engines(environ: Mapping[str, str] | None = None) -> list[EngineProbe]:
    """Every candidate engine, in the order one is chosen (``ANCHA_CONTAINER_ENGINE`` alone when set)."""
    environ = os.environ if environ is None else environ
    path = environ.get("PATH", "")
    chosen = (environ.get(ENGINE_VARIABLE) or "").strip()
    names = (chosen,) if chosen else CANDIDATES
    return [_probe(name, path, environ) for name in names]


def _probe(name: str, path: str, environ: Mapping[str, str]) -> EngineProbe:
    program = shutil.which(name, path=path)
    shown = os.path.basename(name)
    if program is None:
        return EngineProbe(shown, None, problem=f"{name} is not on PATH")
    kind = "podman" if "podman" in os.path.basename(program) else "docker"
    try:
        answer = subprocess.run([program, "version", "--format", "{{.Server.Version}}"], capture_output=True,
                                text=True, timeout=PROBE_TIMEOUT_S, stdin=subprocess.DEVNULL, env=dict(environ))
    except (OSError, subprocess.TimeoutExpired) as exc:
        return EngineProbe(shown, program, problem=f"`{name} version` did not answer: {exc}")
    version = answer.stdout.strip()
    if answer.returncode != 0 or not version:
        said = (answer.stderr.strip() or f"exit {answer.returncode}").splitlines()[-1]
        return EngineProbe(shown, program, problem=f"its engine does not answer: {said}")
    flags: list[str] = []
    notes: list[str] = []
    rootless = False
    remote: str | None = None
    limits: str | None = None
    if kind == "podman":
        runc = shutil.which("runc", path=path)
        if runc is not None:
            flags += ["--runtime", runc]
            notes.append(f"runtime {runc}")
        flags += PODMAN_ULIMITS
        notes.append("ulimits nofile=1024:1024 nproc=4096:4096")
        rootless = hasattr(os, "geteuid") and os.geteuid() != 0
        if rootless:
            notes.append("rootless")
            limits = _rootless_limits_problem(program, environ)
    else:
        remote = _docker_elsewhere(program, environ)
    engine = Engine(kind, program, version, tuple(flags), rootless=rootless, remote=remote, limits_problem=limits)
    return EngineProbe(shown, program, engine, notes=notes)


def _rootless_limits_problem(program: str, environ: Mapping[str, str]) -> str | None:
    """Rootless podman applies cpus, memoryMb and pids only on cgroup v2 with those controllers
    delegated to the user; elsewhere it ignores them with a warning, so the run must not start."""
    try:
        answer = subprocess.run([program, "info", "--format", "{{.Host.CgroupsVersion}} {{json .Host.CgroupControllers}}"],
                                capture_output=True, text=True, timeout=PROBE_TIMEOUT_S, stdin=subprocess.DEVNULL,
                                env=dict(environ))
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"`podman info` did not answer: {exc}"
    version, _, controllers = answer.stdout.strip().partition(" ")
    if version != "v2":
        return (f"rootless podman cannot hold a container to cpus, memoryMb and pids on cgroup {version or 'v1'} "
                "(it ignores them)")
    missing = [c for c in ("cpu", "memory", "pids") if f'"{c}"' not in controllers]
    if missing:
        return (f"rootless podman cannot hold a container to cpus, memoryMb and pids: the cgroup controllers "
                f"{', '.join(missing)} are not delegated to this user")
    return None


def _docker_elsewhere(program: str, environ: Mapping[str, str]) -> str | None:
    """Why a Docker daemon's containers are not processes of this machine, or None."""
    host = environ.get("DOCKER_HOST", "")
    if host and not host.startswith("unix://"):
        return f"DOCKER_HOST is {host}: the engine runs on another machine"
    try:
        answer = subprocess.run([program, "info", "--format", "{{.OperatingSystem}}|{{json .SecurityOptions}}"],
                                capture_output=True, text=True, timeout=PROBE_TIMEOUT_S, stdin=subprocess.DEVNULL,
                                env=dict(environ))
    except (OSError, subprocess.TimeoutExpired):
        return None  # it answered `version`; `run` finds out the rest
    system, _, security = answer.stdout.strip().partition("|")
    if "Docker Desktop" in system:
        return "Docker Desktop runs its containers in a virtual machine"
    if "rootless" in security:
        return "a rootless dockerd runs its containers in a user namespace of its own"
    if not os.path.exists("/proc/self/ns/net"):
        return "the engine's containers run in a virtual machine (this is not Linux)"
    return None


def find_engine(environ: Mapping[str, str] | None = None) -> Engine:
    """The first engine that answers, or ``RunFailed`` (exit 3) with what to install: never a fallback."""
    probes = probe_engines(environ)
    for probe in probes:
        if probe.engine is not None:
            return probe.engine
    raise no_engine_answers(probes)


def no_engine_answers(probes: list[EngineProbe]) -> RunFailed:
    said = "; ".join(f"{p.name}: {p.problem}" for p in probes)
    return RunFailed(
        f"error[CONTAINER_ENGINE]: agent.execution mode container needs a container engine, and none answers "
        f"({said})\nhint: install Docker or Podman and put its CLI on PATH (`ancha execution` shows what is "
        "found); container trials never fall back to a host process")
