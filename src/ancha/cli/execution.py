"""``ancha execution``: the container engine and network isolation container agents would get here."""

from __future__ import annotations

import os
import sys

import click
from rich.console import Console

from ancha.cli.doctor import print_diagnosis
from ancha.runner.agents.container_engine import probe_engines
from ancha.runner.agents.container_network import isolation_problem
from ancha.runner.doctor import Diagnosis, engine_checks


@click.command()
def execution() -> None:
    """Show the container engine (docker or podman) that `agent.execution.mode: container` uses.

    Each engine CLI found is listed with whether its engine answers and can isolate the agent's
    network here; the first that can is used, Docker before podman (ANCHA_CONTAINER_ENGINE picks
    one). Exit 0 when container agents can run here, 3 when not."""
    console = Console(highlight=False, soft_wrap=True)
    diagnosis = Diagnosis(engine_checks(os.environ))
    print_diagnosis(console, diagnosis)
    for probe in probe_engines(os.environ):
        where = probe.program or "not found"
        state = f"answers ({probe.engine.name} {probe.engine.version})" if probe.engine else str(probe.problem)
        problem = isolation_problem(os.environ.get("PATH"), probe.engine) if probe.engine else None
        if problem is not None:
            state += f", but cannot run agents here: {problem}"
        console.print(f"      {probe.name}: {where}: {state}", markup=False)
    sys.exit(diagnosis.exit_code)
