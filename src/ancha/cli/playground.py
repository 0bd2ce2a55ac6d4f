"""``ancha playground``: a live world of a scene, graded with a task file's checks."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from pathlib import Path
from typing import Any

import click

from ancha.checks.task import load_task
from ancha.config.loading import ConfigOverrides, load_config
from ancha.runner.playground import context_lines, environment_lines, open_playground
from ancha.scene.loading import load_scene
from ancha.world.registry import catalog, config_catalog


@click.command()
@click.argument("task", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--scene", "scene_path", required=True, type=click.Path(path_type=Path, dir_okay=False),
              help="The scene file whose world to open.")
@click.option("--config", "config_path", type=click.Path(path_type=Path),
              help="ancha.yaml to use (its server.url, when set, holds the world).")
@click.option("--print-env", is_flag=True,
              help="Also print the variables an agent of this world gets (ANCHA_*, SSL_CERT_FILE and the "
                   "other CA bundle variables) as export lines, for an agent or SDK you start by hand.")
def playground(task: Path, scene_path: Path, config_path: Path | None, print_env: bool) -> None:
    """Open a live world of SCENE for a person or an agent to act in; grade it with TASK.

    TASK is a JSON list of state and trace checks (at most 20). The world's context (tool
    URLs and tokens) is printed; `ancha check --env ENV_ID --task TASK` grades it. Ctrl-C
    tears it down."""
    config = load_config(config_path, Path.cwd(), ConfigOverrides(), catalog=config_catalog())
    scene = load_scene(scene_path, catalog())
    load_task(task, scene)  # refuse a bad task before a world is built

    state_dir = Path(tempfile.mkdtemp(prefix="ancha-playground-state-"))

    def show(context: dict[str, Any]) -> None:
        lines = context_lines(context, task)
        if print_env:  # before the last line (how to stop it)
            lines[-1:-1] = ["# the agent's environment (paste into the shell that starts your agent):",
                            *environment_lines(context, state_dir)]
        for line in lines:
            click.echo(line)

    try:
        asyncio.run(open_playground(config, scene, show))
    finally:
        shutil.rmtree(state_dir, ignore_errors=True)
    click.echo("playground closed: the environment was torn down")
