"""``ancha diff RUN_A RUN_B``: per scene and check, what regressed, improved or is flaky
from one run to the next; exit 1 when anything regressed, so a CI job fails."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ancha.cli.explain import find_run
from ancha.results.run_diff import diff_runs, render_diff
from ancha.results.runs_folder import LATEST

EXIT_REGRESSED = 1


@click.command()
@click.argument("run_a")
@click.argument("run_b", default=LATEST, required=False)
@click.option("--runs-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Where runs are kept (default: .ancha/runs in this folder or the nearest parent).")
def diff(run_a: str, run_b: str, runs_dir: Path | None) -> None:
    """Compare RUN_B (default: latest) with RUN_A, check by check; each is a run id, `latest` or
    a run folder. Exits 1 when a check that passed in every trial of RUN_A did not in RUN_B."""
    result = diff_runs(find_run(run_a, runs_dir), find_run(run_b, runs_dir))
    click.echo(render_diff(result))
    sys.exit(EXIT_REGRESSED if result.regressed else 0)
