"""The container engine a container agent runs on: a Docker-compatible CLI (docker or podman) that answers.

A CLI on PATH is not enough: a ``docker`` client with no daemon behind it cannot run
anything, so each candidate is asked for its server version, and the first that answers
is used. ``ANCHA_CONTAINER_ENGINE`` (a name or a path) picks one. Podman gets the flags this
kind of host needs: ``--runtime runc`` when runc is installed, and explicit ``nofile`` and
``nproc`` limits, which some hosts' defaults make podman refuse.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field

from ancha.errors import RunFailed

CANDIDATES = ("podman", "docker")
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
    if kind == "podman":
        runc = shutil.which("runc", path=path)
        if runc is not None:
            flags += ["--runtime", runc]
            notes.append(f"runtime {runc}")
        flags += PODMAN_ULIMITS
        notes.append("ulimits nofile=1024:1024 nproc=4096:4096")
    return EngineProbe(shown, program, Engine(kind, program, version, tuple(flags)), notes=notes)


def find_engine(environ: Mapping[str, str] | None = None) -> Engine:
    """The engine trials run on, or ``RunFailed`` (exit 3) with what to install: never a fallback."""
    probes = probe_engines(environ)
    for probe in probes:
        if probe.engine is not None:
            return probe.engine
    said = "; ".join(f"{p.name}: {p.problem}" for p in probes)
    raise RunFailed(
        f"error[CONTAINER_ENGINE]: agent.execution mode container needs a container engine, and none answers "
        f"({said})\nhint: install Docker or Podman and put its CLI on PATH (`ancha execution` shows what is "
        "found); container trials never fall back to a host process")
