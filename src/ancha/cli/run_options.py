"""The options `ancha run` and `ancha doctor` share, so doctor checks exactly what run would run."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])

_OPTIONS = (
    click.option("--config", "config_path", type=click.Path(path_type=Path), help="ancha.yaml to use."),
    click.option("--agent", "agent_command", help="Agent command; overrides agent.command."),
    click.option("-n", "trials", type=int, help="Trials per scene; overrides trials."),
    click.option("--parallel", type=int, help="Trials running at once; overrides parallel."),
    click.option("--min-pass-rate", type=float, help="Fraction of each scene's trials that must pass."),
    click.option("--pass-env", multiple=True, help="Pass this variable from your shell to the agent (repeatable)."),
    click.option("--inherit-env", is_flag=True, help="Pass your whole shell environment to the agent."),
)


def run_options(command: F) -> F:
    """``--config``, ``--agent``, ``-n``, ``--parallel``, ``--min-pass-rate``, ``--pass-env``
    and ``--inherit-env``, in that order in ``--help``."""
    for option in reversed(_OPTIONS):
        command = option(command)
    return command
