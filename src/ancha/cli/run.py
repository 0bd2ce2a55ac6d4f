"""``ancha run``: run every scene's trials and gate on their pass rates."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import click

from ancha.config.loading import ConfigOverrides, load_config
from ancha.runner.preflight import check_templates_against_scenes
from ancha.runner.run import run_scenes
from ancha.scene.loading import load_scenes
from ancha.world.tools import catalog


@click.command()
@click.option("--config", "config_path", type=click.Path(path_type=Path), help="ancha.yaml to use.")
@click.option("--agent", "agent_command", help="Agent command; overrides agent.command.")
@click.option("-n", "trials", type=int, help="Trials per scene; overrides trials.")
@click.option("--parallel", type=int, help="Trials running at once; overrides parallel.")
@click.option("--min-pass-rate", type=float, help="Fraction of each scene's trials that must pass.")
@click.option("--pass-env", multiple=True, help="Pass this variable from your shell to the agent (repeatable).")
@click.option("--inherit-env", is_flag=True, help="Pass your whole shell environment to the agent.")
@click.option("--no-progress", is_flag=True, help="No progress bar (it is off anyway when not on a terminal).")
def run(config_path: Path | None, agent_command: str | None, trials: int | None, parallel: int | None,
        min_pass_rate: float | None, pass_env: tuple[str, ...], inherit_env: bool, no_progress: bool) -> None:
    """Run each scene's trials against fresh worlds; exit 1 when a scene misses min_pass_rate."""
    overrides = ConfigOverrides(agent_command=agent_command, trials=trials, parallel=parallel,
                                min_pass_rate=min_pass_rate, pass_env=list(pass_env), inherit_env=inherit_env)
    config = load_config(config_path, Path.cwd(), overrides)
    scenes = load_scenes(list(config.scenes), config.root, catalog())
    check_templates_against_scenes(config, scenes)
    result = asyncio.run(run_scenes(config, scenes, inherit_env=inherit_env, progress=not no_progress))
    sys.exit(result.exit_code)
