"""``ancha check``: evaluate a scene's checks on a live world."""

from __future__ import annotations

import json
import os
import sys

import click
import httpx


@click.command()
@click.option("--env", "env_id", required=True, help="Environment id (ANCHA_ENV_ID of the trial).")
@click.option("--server", "server_url", envvar="ANCHA_SERVER_URL", default="http://127.0.0.1:7600",
              show_default=True, help="The Ancha server holding the environment.")
@click.option("--json", "as_json", is_flag=True, help="Print every result as JSON.")
def check(env_id: str, server_url: str, as_json: bool) -> None:
    """Evaluate the scene's checks on a live environment."""
    key = os.environ.get("ANCHA_SERVER_KEY")
    headers = {"authorization": f"Bearer {key}"} if key else {}
    try:
        answer = httpx.post(f"{server_url.rstrip('/')}/envs/{env_id}/checks", headers=headers, timeout=30)
    except httpx.HTTPError as exc:
        raise click.ClickException(f"no Ancha server answers at {server_url}: {exc}") from exc
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
