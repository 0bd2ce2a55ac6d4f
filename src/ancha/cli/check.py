"""``ancha check``: evaluate a scene's checks on a live world."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import click
import httpx

from ancha.checks.judge import (
    KEY_VAR,
    JudgeUnavailable,
    context_secrets,
    evaluate_judge_checks,
    trace_entries_from_jsonl,
    world_views,
)
from ancha.checks.task import TaskInvalid, read_task, task_rule_problems
from ancha.errors import Problem
from ancha.scene.model import CheckSpec
from ancha.server.keys import server_key


class CouldNotCheck(click.ClickException):
    """The checks could not be run at all: exit 3, as ``ancha run`` says "could not run"."""

    exit_code = 3


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

    Judge checks are graded here, with OPENROUTER_API_KEY from your environment (never sent
    to the server); without it they are skipped.

    Exit 0 when every required check passed, 1 when one failed, 2 when the task file is invalid,
    3 when the checks could not be run (no server answers, or it has no such environment)."""
    task: Any = None
    if task_path is not None:
        task, lines = read_task(task_path)
        problems = task_rule_problems(task, str(task_path), lines)
        if problems:
            raise TaskInvalid(problems, task_path)
    key = server_key(server_url)  # ANCHA_SERVER_KEY, else the key `ancha serve` kept for that server
    headers = {"authorization": f"Bearer {key}"} if key else {}
    try:
        answer = httpx.post(f"{server_url.rstrip('/')}/envs/{env_id}/checks", headers=headers, timeout=30,
                            **({"json": task} if task_path is not None else {}))
    except httpx.HTTPError as exc:
        raise CouldNotCheck(f"no Ancha server answers at {server_url}: {exc}\nhint: start one with `ancha serve`, "
                            "or pass --server (ANCHA_SERVER_URL) with the address of the one running the "
                            "trial") from exc
    if answer.status_code == 400 and task_path is not None:  # refs the scene does not declare, and the like
        raise TaskInvalid([Problem("", answer.json().get("error", answer.text), None, None, str(task_path))],
                          task_path)
    if answer.status_code != 200:
        raise CouldNotCheck(f"{server_url} answered {answer.status_code}: {answer.text}")
    body = answer.json()
    results = body["results"]
    if body.get("judge"):  # graded here with the user's key; without one, skipped as ancha run says
        results = _judge(server_url.rstrip("/") + f"/envs/{env_id}", headers, body["judge"], results)
    if as_json:
        click.echo(json.dumps(results, indent=2))
    else:
        for r in results:
            mark = "PASS" if r["passed"] else {"skipped": "SKIP", "error": "ERROR"}.get(r["status"], "FAIL")
            click.echo(f"{mark}  {r['id']}: {r['explanation']}")
    sys.exit(0 if all(r["passed"] or not r["required"] for r in results) else 1)


def _judge(env_url: str, headers: dict[str, str], rubrics: dict[str, str],
           results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Grade the judge checks the server skipped, as the runner does: from the trace and the
    world as they are now, with the user's own key and ``judge.model`` of ./ancha.yaml.
    Without a key they are skipped, saying so in the words ``ancha run`` uses."""
    required = {r["id"]: bool(r["required"]) for r in results}
    specs = [CheckSpec(id=check_id, judge=rubric) for check_id, rubric in rubrics.items()]
    if not os.environ.get(KEY_VAR, "").strip():
        skipped = evaluate_judge_checks(specs, [], [], None, dict(os.environ))
        by_id = {r.id: {**r.to_dict(), "required": required.get(r.id, True)} for r in skipped}
        return [by_id.get(r["id"], r) for r in results]
    try:
        context = _get(f"{env_url}/context", headers).json()
        trace = trace_entries_from_jsonl(_get(f"{env_url}/trace", headers).text)
        world = _get(f"{env_url}/state", headers).json()
    except httpx.HTTPError as exc:
        raise click.ClickException(f"the judge checks could not be graded: {exc}") from exc
    try:
        judged = evaluate_judge_checks(specs, trace, world_views(world), _judge_model(), dict(os.environ),
                                       secrets=context_secrets(context))
    except JudgeUnavailable as exc:  # the judge checks say so, with status error
        judged = exc.results
    by_id = {r.id: {**r.to_dict(), "required": required.get(r.id, True)} for r in judged}
    return [by_id.get(r["id"], r) for r in results]


def _get(url: str, headers: dict[str, str]) -> httpx.Response:
    answer = httpx.get(url, headers=headers, timeout=60)
    answer.raise_for_status()
    return answer


def _judge_model() -> str | None:
    """``judge.model`` of ./ancha.yaml, when there is one that loads."""
    from ancha.config.errors import ConfigInvalid
    from ancha.config.loading import load_config
    from ancha.world.registry import config_catalog

    if not Path("ancha.yaml").is_file():
        return None
    try:
        return load_config(None, Path.cwd(), catalog=config_catalog()).judge.model
    except ConfigInvalid:  # an invalid ancha.yaml is ancha run's to report; the default model grades
        return None
