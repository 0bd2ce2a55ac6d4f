"""``ancha fork RUN/SCENE/TRIAL --at DURATION|SEQ``: N trials from a moment of a trial's world."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import click
from rich.console import Console

from ancha.config.loading import ConfigOverrides, load_config
from ancha.results.runs_folder import RunsFolder
from ancha.runner.branches import check_scene, checkpoint_at, cut, find_trial, fork_of, scene_named
from ancha.runner.run import Branch, run_scenes
from ancha.runner.scene_patch import parse_set, patched_scene
from ancha.scene.loading import load_scenes
from ancha.world.registry import catalog, config_catalog


@click.command()
@click.argument("trial_spec", metavar="RUN/SCENE/TRIAL")
@click.option("--at", "at", required=True, metavar="DURATION|SEQ",
              help="Where to fork: after trace entry SEQ (as the console's timeline numbers them), or a duration "
                   "of simulated time from the start (10m, 1h30m).")
@click.option("--agent", "agent_command", help="Run this agent command instead of ancha.yaml's agent.command.")
@click.option("-n", "--trials", type=click.IntRange(1, 10_000), default=None,
              help="Trials to start from the fork (default: ancha.yaml's trials).")
@click.option("--set", "sets", multiple=True, metavar="PATH=VALUE",
              help="Change the scene from the fork on (repeatable): people.NAME.replies_after=5m, "
                   "world_rules.faults.REF.resolved_when=..., or agent.command=... / agent.env.NAME=...")
@click.option("--patch", "patch_file", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="A YAML file of changes to the scene's people and faults, as the scene file writes them.")
@click.option("-c", "--config", "config_path", type=click.Path(dir_okay=False, path_type=Path),
              help="ancha.yaml to use (default: the nearest one).")
@click.option("--no-progress", is_flag=True, help="No progress bar.")
def fork(trial_spec: str, at: str, agent_command: str | None, trials: int | None, sets: tuple[str, ...],
         patch_file: Path | None, config_path: Path | None, no_progress: bool) -> None:
    """Rebuild a trial's world up to --at by making its recorded calls again, checkpoint it (every
    tool, the people, the clock, what is due), and start N trials of the agent from there: each
    sees the history so far (its feed, ANCHA_FORKED_AT, its state folder as it was). Checks grade
    the whole timeline. Exit codes as ancha run."""
    parsed = [parse_set(text) for text in sets]
    agent_sets = {".".join(p[1:]): v for p, v in parsed if p and p[0] == "agent"}
    scene_sets = [(p, v) for p, v in parsed if not p or p[0] != "agent"]
    command = agent_command or (str(agent_sets.pop("command")) if "command" in agent_sets else None)
    config = load_config(config_path, Path.cwd(), ConfigOverrides(agent_command=command, trials=trials),
                         catalog=config_catalog())
    if config.agent is not None:
        for name, value in agent_sets.items():
            if name.startswith("env."):
                config.agent.env[name.removeprefix("env.")] = str(value)
            else:
                raise click.UsageError(f"--set agent.{name}: a fork changes agent.command and agent.env.NAME only")
    address = find_trial(trial_spec, RunsFolder.of_project(config.root) if (config.root / ".ancha").exists()
                         else RunsFolder.nearest())
    scene = scene_named(load_scenes(list(config.scenes), config.root, catalog()), address.scene, address)
    check_scene(scene, address, False)
    point = cut(address.folder, scene, at)
    changed = patched_scene(scene, scene_sets, patch_file)  # a bad change is refused before any rebuild
    made, data, took = asyncio.run(checkpoint_at(config, scene, address, point))
    console = Console(stderr=True)
    calls = f"{len(point.calls)} call{'' if len(point.calls) == 1 else 's'}"
    console.print(f"ancha: forked {address.label} at {made['at']} (after trace entry {point.seq}, "
                  f"{calls} made again in {took:.2f}s; checkpoint {len(data):,} bytes "
                  f"in {float(made.get('made_s') or 0) * 1000:.1f} ms)", markup=False, highlight=False)
    changes = [*sets, *([f"--patch {patch_file.name}"] if patch_file is not None else [])]
    branch = Branch({}, {}, fork=fork_of(made, data, address, at, point, scene if changed else None, changes))
    assert branch.fork is not None
    branch.origin = dict(branch.fork.world_line["origin"])
    line = address.folder.read_world_line() or {}
    world_trial = int(line.get("trial") or address.trial)
    run_scene = changed or scene
    branch.trial_numbers = {(run_scene.name, n): world_trial for n in range(1, config.trials + 1)}
    result = asyncio.run(run_scenes(config, [run_scene], progress=not no_progress, seed=line.get("seed"),
                                    branch=branch))
    sys.exit(result.exit_code)
