"""``ancha doctor``: check the config, scenes, server, agent, container and judge key, without running trials."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape

from ancha.cli.run_options import run_options
from ancha.config.loading import ConfigOverrides
from ancha.runner.agents.container_leftovers import clean_leftovers
from ancha.runner.doctor import Diagnosis, diagnose

_STYLES = {"ok": "green", "FAIL": "bold red", "skip": "dim", "warn": "yellow"}


@click.command()
@run_options
@click.option("--clean", is_flag=True,
              help="First remove what runs killed mid-trial left behind (their containers, volumes, network "
                   "namespaces and agent cgroups); a live run's are left alone.")
def doctor(config_path: Path | None, agent_command: str | None, trials: int | None, parallel: int | None,
           min_pass_rate: float | None, pass_env: tuple[str, ...], inherit_env: bool, clean: bool) -> None:
    """Check what `ancha run` with the same options needs, one line per check, with a fix for each failure.

    Exit 0 when all is ready, 2 on config or scene problems (as ancha run), 3 when the
    server, agent, container engine or judge key is not ready."""
    if clean:
        removed = clean_leftovers()
        for line in removed:
            click.echo(f"removed  {line}")
        click.echo(f"clean    {len(removed)} leftovers of runs that are gone removed" if removed
                   else "clean    nothing left behind by runs that are gone")
    overrides = ConfigOverrides(agent_command=agent_command, trials=trials, parallel=parallel,
                                min_pass_rate=min_pass_rate, pass_env=list(pass_env), inherit_env=inherit_env)
    diagnosis = diagnose(config_path, Path.cwd(), overrides)
    print_diagnosis(Console(highlight=False, soft_wrap=True), diagnosis)
    for report in diagnosis.reports:  # word for word what ancha run prints for them
        click.echo(report.render(), err=True)
    sys.exit(diagnosis.exit_code)


def print_diagnosis(console: Console, diagnosis: Diagnosis) -> None:
    """``status  name  detail — fix``, the columns aligned."""
    width = max((len(c.name) for c in diagnosis.checks), default=0)
    for check in diagnosis.checks:
        status = f"[{_STYLES[check.status]}]{check.status:<4}[/]"
        fix = f" — {check.fix}" if check.status in ("FAIL", "warn") and check.fix else ""
        console.print(f"{status}  {check.name:<{width}}  {escape(check.detail + fix)}")
