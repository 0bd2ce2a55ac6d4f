"""``ancha push``: send a finished run to a team's AgentOS, where the hosted console shows it
beside every other run of the workspace (see docs/teams.md)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import click

from ancha.cli.explain import find_run
from ancha.results.runs_folder import LATEST
from ancha.results.upload import RunSource, UploadError, agentos_target, ci_source, push_run


def upload_run(run_dir: Path, url: str | None, api_key: str | None, source: RunSource, quiet: bool = False) -> None:
    """Push ``run_dir`` and say where it is; a failure is a ClickException that says how to resume."""
    try:
        env = dict(os.environ)
        if url:
            env["AGENTOS_URL"] = url
        if api_key:
            env["AGENTOS_API_KEY"] = api_key
        target, key = agentos_target(env)
        started = time.monotonic()
        done = push_run(run_dir, target, key, source)
    except UploadError as exc:
        raise click.ClickException(f"upload of run {run_dir.name} failed: {exc}") from None
    if quiet:
        return
    if done.already_there:
        click.echo(f"run {done.run_id} was uploaded already: {done.url}")
    else:
        click.echo(f"uploaded run {done.run_id} ({done.sent_files} files, {done.sent_bytes:,} bytes in"
                   f" {time.monotonic() - started:.1f} s): {done.url}")


@click.command()
@click.argument("run", default=LATEST, required=False)
@click.option("--url", help="AgentOS server (default: AGENTOS_URL, else AGENTOS_BASE_URL).")
@click.option("--api-key", help="A `ci` or `admin` key of the workspace (default: AGENTOS_API_KEY).")
@click.option("--commit", help="The commit the run tested (default: from the CI's variables, else git).")
@click.option("--branch", help="Its branch (default: from the CI's variables, else git).")
@click.option("--ci-url", help="The CI job's page (default: from the CI's variables).")
def push(run: str, url: str | None, api_key: str | None, commit: str | None, branch: str | None,
         ci_url: str | None) -> None:
    """Upload RUN (default: latest) to AgentOS; pushing again sends only what is missing."""
    run_dir = find_run(run)
    found = ci_source(os.environ, Path.cwd(), _agent_version(run_dir))
    source = RunSource(commit or found.commit, branch or found.branch, found.ci_provider, ci_url or found.ci_url,
                       found.agent_version)
    upload_run(run_dir, url, api_key, source)


def _agent_version(run_dir: Path) -> str | None:
    try:
        summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
        version = ((summary.get("config") or {}).get("agent") or {}).get("version")
    except (OSError, ValueError, AttributeError):
        return None
    return version if isinstance(version, str) else None
