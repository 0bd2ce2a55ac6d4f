"""``ancha check``: evaluate a scene's checks on a live world."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import click
import httpx

from ancha.checks.task import TaskInvalid, read_task, task_rule_problems
from ancha.errors import Problem


@click.command()
@click.option("--env", "env_id", required=True, help="Environment id (ANCHA_ENV_ID of the trial).")
@click.option("--server", "server_url", envvar="ANCHA_SERVER_URL", default="http://127.0.0.1:7600",
              show_default=True, help="The Ancha server holding the environment.")
@click.option("--task", "task_path", type=click.Path(path_type=Path, dir_okay=False),
              help="Grade with this task file's checks (a JSON list, as for ancha playground) "
                   "instead of the scene's.")
@click.option("--json", "as_json", is_flag=True, help="Print every result as JSON.")
def check(env_id: str, server_url: str, task_path: Path | None, as_json: bool) -> None:
    """Evaluate the scene's checks, or a task file's, on a live environment.

    Exit 0 when every required check passed, 1 when one failed, 2 when the task file is invalid."""
    task: Any = None
    if task_path is not None:
        task, lines = read_task(task_path)
        problems = task_rule_problems(task, str(task_path), lines)
        if problems:
            raise TaskInvalid(problems, task_path)
    key = os.environ.get("ANCHA_SERVER_KEY")
    headers = {"authorization": f"Bearer {key}"} if key else {}
    try:
        answer = httpx.post(f"{server_url.rstrip('/')}/envs/{env_id}/checks", headers=headers, timeout=30,
                            **({"json": task} if task_path is not None else {}))
    except httpx.HTTPError as exc:
        raise click.ClickException(f"no Ancha server answers at {server_url}: {exc}") from exc
    if answer.status_code == 400 and task_path is not None:  # refs the scene does not declare, and the like
        raise TaskInvalid([Problem("", answer.json().get("error", answer.text), None, None, str(task_path))],
                          task_path)
    if answer.status_code != 200:
        raise click.ClickException(f"{server_url} answered {answer.status_code}: {answer.text}")
    results = answer.json()["results"]
    if as_json:
        click.echo(json.dumps(results, indent=2))
    else:
        for r in results:
            mark = "PASS" if r["passed"] else ("SKIP" if r["status"] == "skipped" else "FAIL")
            click.echo(f"{mark}  {r['id']}: {r['explanation']}")
    sys.exit(0 if all(r["passed"] or not r["required"] for r in results) else 1)
