"""``ancha playground``: a live world of a scene, graded with a task file's checks."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import click

from ancha.checks.task import load_task
from ancha.config.loading import ConfigOverrides, load_config
from ancha.runner.playground import context_lines, open_playground
from ancha.scene.loading import load_scene
from ancha.world.registry import catalog, config_catalog


@click.command()
@click.argument("task", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--scene", "scene_path", required=True, type=click.Path(path_type=Path, dir_okay=False),
              help="The scene file whose world to open.")
@click.option("--config", "config_path", type=click.Path(path_type=Path),
              help="ancha.yaml to use (its server.url, when set, holds the world).")
def playground(task: Path, scene_path: Path, config_path: Path | None) -> None:
    """Open a live world of SCENE for a person or an agent to act in; grade it with TASK.

    TASK is a JSON list of state and trace checks (at most 20). The world's context (tool
    URLs and tokens) is printed; `ancha check --env ENV_ID --task TASK` grades it. Ctrl-C
    tears it down."""
    config = load_config(config_path, Path.cwd(), ConfigOverrides(), catalog=config_catalog())
    scene = load_scene(scene_path, catalog())
    load_task(task, scene)  # refuse a bad task before a world is built

    def show(context: dict[str, Any]) -> None:
        for line in context_lines(context, task):
            click.echo(line)

    asyncio.run(open_playground(config, scene, show))
    click.echo("playground closed: the environment was torn down")
