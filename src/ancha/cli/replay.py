"""``ancha replay RUN[/SCENE[/TRIAL]]``: a trial's world again, under the agent as it is now, or its calls."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import click

from ancha.config.loading import ConfigOverrides, load_config
from ancha.results.runs_folder import RunsFolder
from ancha.runner.branches import check_scene, find_trials, scene_named
from ancha.runner.run import Branch, run_scenes
from ancha.runner.trial import CallsReplay
from ancha.scene.loading import load_scenes
from ancha.scene.model import Scene
from ancha.world.registry import catalog, config_catalog


@click.command()
@click.argument("trial_spec", metavar="RUN[/SCENE[/TRIAL]]")
@click.option("--agent", "agent_command", help="Run this agent command instead of ancha.yaml's agent.command.")
@click.option("--calls", "calls", is_flag=True,
              help="No agent: make the trial's recorded calls again, at the instants they arrived. The world and "
                   "the grade come out as they did (a regression test of the grader).")
@click.option("--scene-changed-ok", is_flag=True,
              help="Replay even though the scene file changed since the trial ran (same seed and trial number).")
@click.option("-c", "--config", "config_path", type=click.Path(dir_okay=False, path_type=Path),
              help="ancha.yaml to use (default: the nearest one).")
@click.option("--no-progress", is_flag=True, help="No progress bar.")
def replay(trial_spec: str, agent_command: str | None, calls: bool, scene_changed_ok: bool,
           config_path: Path | None, no_progress: bool) -> None:
    """Rebuild a trial's world (its seed and trial number: the same ids, people, delays and faults)
    and run the agent in it again, as a new run linked to the original. RUN alone, or RUN/SCENE,
    replays each of its trials. Exit codes as ancha run."""
    config = load_config(config_path, Path.cwd(), ConfigOverrides(agent_command=agent_command, trials=1),
                         catalog=config_catalog())
    addresses = find_trials(trial_spec, RunsFolder.of_project(config.root) if (config.root / ".ancha").exists()
                            else RunsFolder.nearest())
    project = load_scenes(list(config.scenes), config.root, catalog())
    scenes: dict[str, Scene] = {}
    numbers: dict[tuple[str, int], int] = {}
    trials: dict[str, list[int]] = {}
    seeds: set[Any] = set()
    for address in addresses:
        scene = scenes.get(address.scene) or scene_named(project, address.scene, address)
        if address.scene not in scenes:
            check_scene(scene, address, scene_changed_ok or False)
            scenes[address.scene] = scene
        line = address.folder.read_world_line() or {}
        numbers[(scene.name, address.trial)] = int(line.get("trial") or address.trial)
        trials.setdefault(scene.name, []).append(address.trial)
        seeds.add(line.get("seed"))
    first = addresses[0]
    if len(addresses) == 1:
        origin = first.origin("replay", calls=calls)
    else:
        origin = {"kind": "replay", "run": first.run.run_id, **({"scene": first.scene} if "/" in
                                                                 trial_spec.strip("/") else {}), "calls": calls}
    branch = Branch(origin, numbers, calls=CallsReplay(first.run) if calls else None, trials=trials)
    if len(seeds) > 1:
        raise click.UsageError(f"the trials of {trial_spec} were drawn with different seeds; replay them one by one")
    seed = next(iter(seeds))  # the run's seed, as each trial's replay.json has it
    result = asyncio.run(run_scenes(config, list(scenes.values()), progress=not no_progress, seed=seed,
                                    branch=branch))
    sys.exit(result.exit_code)
