"""``ancha ui``: the console over this project's runs."""

from __future__ import annotations

import webbrowser
from pathlib import Path

import click
import uvicorn

from ancha.console.app import console_app
from ancha.console.links import DEFAULT_PORT, PREFIX
from ancha.results.runs_folder import RUNS_DIR, RunsFolder
from ancha.server.app import create_app


@click.command()
@click.option("--runs-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Where runs are kept (default: .ancha/runs in this folder or the nearest parent).")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=DEFAULT_PORT, show_default=True, type=click.IntRange(0, 65535))
@click.option("--open/--no-open", "open_browser", default=True, show_default=True,
              help="Open the console in your browser.")
def ui(runs_dir: Path | None, host: str, port: int, open_browser: bool) -> None:
    """Serve the console: runs, trials (timeline, checks and their evidence, agent log,
    world diff) and trials running now, live.

    Trials of an `ancha run` going on at the same time show live, with the key that run's
    server keeps for this machine's CLI (or ANCHA_SERVER_KEY)."""
    nearest = RunsFolder.nearest()
    runs = runs_dir or (nearest.path if nearest else Path.cwd() / RUNS_DIR)
    if host not in ("127.0.0.1", "localhost", "::1"):
        raise click.UsageError(f"--host {host} would show your runs to other machines: the console serves "
                               "loopback only (use an SSH tunnel to reach it from elsewhere)")
    app = create_app(mounts={PREFIX: console_app(runs.resolve())})
    url = f"http://{host}:{port}{PREFIX}/"
    click.echo(f"ancha console on {url}  (runs: {runs}; Ctrl-C stops it)")
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    if open_browser:
        webbrowser.open(url)
    server.run()
