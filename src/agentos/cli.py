"""`agentos serve` and `agentos keys create`."""

from __future__ import annotations

import socket

import click

from agentos.db import describe, resolve_url


@click.group()
def main() -> None:
    """AgentOS: agent workflows with evaluations."""


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=int)
@click.option("--database-url", default=None, help="Default: AGENTOS_DATABASE_URL, else agentos.db in $AGENTOS_HOME or your user data directory")
@click.option("--log-level", default="info", show_default=True)
def serve(host: str, port: int, database_url: str | None, log_level: str) -> None:
    """Serve the API."""
    from agentos.api.app import create_app
    from agentos.api.server import serve_until_stopped

    url = resolve_url(database_url)
    click.echo(f"agentos: database {describe(url)}")
    app = create_app(url, instance_label=f"{socket.gethostname()}:{port}")
    serve_until_stopped(app, host=host, port=port, log_level=log_level)


@main.group()
def keys() -> None:
    """API keys."""


@keys.command("create")
@click.option("--workspace", required=True, help="Workspace name (created if new).")
@click.option("--database-url", default=None, help="Default: AGENTOS_DATABASE_URL, else agentos.db in $AGENTOS_HOME or your user data directory")
def keys_create(workspace: str, database_url: str | None) -> None:
    """Print a new API key for WORKSPACE (only its hash is stored)."""
    from agentos.keys import create_key

    try:
        url = resolve_url(database_url)
        click.echo(create_key(url, workspace))
        click.echo(f"stored in {describe(url)}", err=True)
    except Exception as exc:  # a bad URL or an unreachable database: say so, no traceback
        raise click.ClickException(f"could not create a key: {exc}") from None


if __name__ == "__main__":
    main()
