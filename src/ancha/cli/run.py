"""``ancha run``: run every scene's trials and gate on their pass rates."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import click

from ancha.cli.push import upload_run
from ancha.cli.run_options import run_options
from ancha.config.loading import ConfigOverrides, load_config
from ancha.results.junit import write_junit
from ancha.results.run_folder import RunFolder
from ancha.results.step_summary import append_step_summary
from ancha.results.upload import UploadError, agentos_target, ci_source
from ancha.runner.preflight import check_templates_against_scenes
from ancha.runner.ray_trials import import_ray
from ancha.runner.run import run_scenes
from ancha.scene.loading import load_scenes
from ancha.world.registry import catalog, config_catalog


@click.command()
@run_options
@click.option("--no-progress", is_flag=True, help="No progress bar (it is off anyway when not on a terminal).")
@click.option("--junit", "junit_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write JUnit XML here: one testcase per scene x trial, for CI test reporters.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write the run's summary.json here.")
@click.option("--ray", "ray_address", is_flag=False, flag_value="", default=None, metavar="[ADDRESS]",
              help="Run the trials as tasks on a Ray cluster at ADDRESS (HOST:PORT, ray://HOST:PORT, auto); "
                   "alone: ray.address of ancha.yaml, else a local Ray. Needs pip install 'ancha[ray]'.")
@click.option("--retry-invalid", is_flag=True,
              help="Run each invalid trial (agent never started, world or worker lost) once more.")
@click.option("--strict-coverage", is_flag=True,
              help="Mark a trial invalid (not failed) when its agent called an operation the replica does not "
                   "implement (a coverage gap, answered 501).")
@click.option("--seed", type=click.IntRange(0, 2**63 - 1), default=None,
              help="The run's seed: with each scene and trial number it decides the world (ids, tokens, people's "
                   "delays). Default: drawn at random; either way kept in summary.json for ancha replay.")
@click.option("--upload", is_flag=True,
              help="Then send the run to AgentOS (AGENTOS_URL, AGENTOS_API_KEY), as `ancha push` does; "
                   "the exit code stays the run's unless the upload fails (3).")
def run(config_path: Path | None, agent_command: str | None, trials: int | None, parallel: int | None,
        min_pass_rate: float | None, pass_env: tuple[str, ...], inherit_env: bool, no_progress: bool,
        junit_path: Path | None, json_path: Path | None, ray_address: str | None,
        retry_invalid: bool, strict_coverage: bool, seed: int | None, upload: bool) -> None:
    """Run each scene's trials against fresh worlds; exit 1 when a scene misses min_pass_rate.

    With GITHUB_STEP_SUMMARY set (GitHub Actions), the summary is appended to it as Markdown."""
    overrides = ConfigOverrides(agent_command=agent_command, trials=trials, parallel=parallel,
                                min_pass_rate=min_pass_rate, pass_env=list(pass_env), inherit_env=inherit_env,
                                ray=ray_address, strict_coverage=strict_coverage)
    config = load_config(config_path, Path.cwd(), overrides, catalog=config_catalog())
    if upload:
        try:  # before the run: a missing URL or key should not cost the whole run
            agentos_target()
        except UploadError as exc:
            raise click.UsageError(f"--upload: {exc}") from None
    if config.ray is not None:
        import_ray()  # before anything is written: Ray is an optional extra (exit 3 with how to install it)
    scenes = load_scenes(list(config.scenes), config.root, catalog())
    check_templates_against_scenes(config, scenes)
    result = asyncio.run(run_scenes(config, scenes, inherit_env=inherit_env, progress=not no_progress,
                                    retry_invalid=retry_invalid, seed=seed))
    write_ci_reports(result.run_dir, junit_path, json_path)
    if upload:  # on the driver, Ray or not: the run folder is here
        version = config.agent.version if config.agent is not None else None
        try:
            upload_run(result.run_dir, None, None, ci_source(os.environ, Path.cwd(), version))
        except click.ClickException as exc:
            click.echo(f"ancha: {exc.message}", err=True)
            sys.exit(3)
    sys.exit(result.exit_code)


def write_ci_reports(run_dir: Path, junit_path: Path | None, json_path: Path | None) -> None:
    """The reports CI reads, from the run folder: JUnit XML, a copy of summary.json, and the
    Markdown job summary when GitHub Actions asks for one."""
    folder = RunFolder(run_dir)
    summary = folder.read_summary() or {}
    try:
        if junit_path is not None:
            write_junit(run_dir, junit_path)
        if json_path is not None:
            json_path.parent.mkdir(parents=True, exist_ok=True)
            json_path.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
        append_step_summary(summary, run_dir)
    except OSError as exc:
        # The run's own results are on disk already; say which report failed and keep the run's exit code.
        click.echo(f"ancha: could not write a CI report: {exc} (the run's results are in {run_dir}; "
                   "check that the path's folder is writable)", err=True)
