"""``ancha report``: hand a run to AgentOS as a completed evaluation of a workflow version,
so that a release is gated by what the agent did in the simulated worlds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from agentos_sdk import AgentOS, AgentOSError, APIConnectionError
from ancha.cli.explain import find_run
from ancha.results.run_folder import RunFolder
from ancha.results.runs_folder import LATEST


def evaluation_results(run_dir: Path) -> list[dict[str, Any]]:
    """One evaluation item per judged trial (``scene/trial``); invalid trials are left out,
    as they are of the pass rate."""
    items: list[dict[str, Any]] = []
    for folder in RunFolder(run_dir).graded_trials():
        trial = folder.read_checks()
        if trial.get("verdict") in ("invalid", "unreadable"):
            continue
        items.append({
            "item": f"{trial['scene']}/{trial['trial']}",
            "status": "success" if trial.get("reason") is None else "failed",
            "checks": [{"name": r["id"], "passed": bool(r["passed"])} for r in trial["results"]
                       if r.get("status") != "skipped"],
        })
    return items


@click.command()
@click.argument("run", default=LATEST, required=False)
@click.option("--workflow", required=True, help="AgentOS workflow (id or exact name) the agent under test is.")
@click.option("--url", envvar=["AGENTOS_BASE_URL", "AGENTOS_URL"], default="http://localhost:8000", show_default=True,
              help="AgentOS server (AGENTOS_BASE_URL, as the SDKs read it; AGENTOS_URL also works).")
@click.option("--api-key", envvar="AGENTOS_API_KEY", required=True, help="AgentOS API key (AGENTOS_API_KEY).")
@click.option("--name", help="Evaluation name (default: ancha run RUN_ID).")
def report(run: str, workflow: str, url: str, api_key: str, name: str | None) -> None:
    """Report RUN (default: latest) to AgentOS as a completed evaluation of WORKFLOW."""
    run_dir = find_run(run)
    items = evaluation_results(run_dir)
    if not items:
        raise click.ClickException(f"run {run_dir.name} has no judged trials to report")
    try:
        with AgentOS(url, api_key=api_key) as agentos:
            evaluation = agentos.evaluate(workflow, name=name or f"ancha run {run_dir.name}", results=items)
    except APIConnectionError as exc:
        raise click.ClickException(
            f"AgentOS is not running at {url} (nothing answered: {exc})\n"
            "hint: start it with `agentos serve` (see the AgentOS docs), or pass --url (AGENTOS_BASE_URL) "
            "with the address of yours") from exc
    except AgentOSError as exc:
        raise click.ClickException(f"AgentOS refused the evaluation: {exc}") from exc
    rate = evaluation.get("check_pass_rate")
    shown = "—" if rate is None else f"{rate:.1%}"
    click.echo(f"evaluation {evaluation['id']} of {workflow} v{evaluation.get('workflow_version')}: "
               f"{len(items)} trials, check pass rate {shown}")
