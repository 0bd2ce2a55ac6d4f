"""`agentos serve`, `agentos worker` and `agentos keys create`."""

from __future__ import annotations

import socket

import click

from agentos.db import describe, resolve_url


@click.group()
# AgentOS ships in the ancha distribution, so its version is that package's.
@click.version_option(package_name="ancha", message="agentos %(version)s")
def main() -> None:
    """AgentOS: agent workflows with evaluations."""


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=int)
@click.option("--database-url", default=None, help="Default: AGENTOS_DATABASE_URL, else agentos.db in $AGENTOS_HOME or your user data directory")
@click.option("--log-level", default="info", show_default=True)
@click.option("--workers", default=1, show_default=True, type=click.IntRange(1, 64),
              help="API processes sharing the port (use PostgreSQL and AGENTOS_BROKER_URL with more than 1)")
def serve(host: str, port: int, database_url: str | None, log_level: str, workers: int) -> None:
    """Serve the API."""
    from agentos.api.app import create_app
    from agentos.api.server import serve_until_stopped
    from agentos.broker import BrokerError

    url = resolve_url(database_url)
    click.echo(f"agentos: database {describe(url)}")
    if workers > 1:
        from agentos.api.processes import serve_processes

        serve_processes(workers, host=host, port=port, database_url=url, log_level=log_level)
        return
    try:
        app = create_app(url, instance_label=f"{socket.gethostname()}:{port}")
    except BrokerError as exc:
        raise click.ClickException(str(exc)) from None
    serve_until_stopped(app, host=host, port=port, log_level=log_level)


@main.command()
@click.option("--database-url", default=None, help="Default: AGENTOS_DATABASE_URL, else agentos.db in $AGENTOS_HOME or your user data directory")
@click.option("--queue-url", default=None, envvar="AGENTOS_QUEUE_URL", help="Redis URL of the run queue [env: AGENTOS_QUEUE_URL]")
@click.option("--concurrency", default=16, show_default=True, type=click.IntRange(1, 1000),
              help="Runs executed at once by this process")
def worker(database_url: str | None, queue_url: str | None, concurrency: int) -> None:
    """Execute the runs that API processes queue (AGENTOS_QUEUE_URL)."""
    from agentos.broker import BrokerError
    from agentos.worker import run_worker

    if not queue_url:
        raise click.UsageError("no queue: pass --queue-url redis://HOST:6379/0 or set AGENTOS_QUEUE_URL")
    url = resolve_url(database_url)
    click.echo(f"agentos worker: database {describe(url)}")
    try:
        run_worker(url, queue_url, None, concurrency)
    except BrokerError as exc:
        raise click.ClickException(str(exc)) from None


@main.group()
def keys() -> None:
    """API keys."""


@keys.command("create")
@click.option("--workspace", required=True, help="Workspace name (created if new).")
@click.option("--role", type=click.Choice(["viewer", "ci", "admin"]), default="admin", show_default=True,
              help="viewer reads; ci also uploads runs, reports evaluations and releases; admin also manages keys "
                   "and deletes runs.")
@click.option("--name", default=None, help="A label for the key, such as 'github actions'.")
@click.option("--database-url", default=None, help="Default: AGENTOS_DATABASE_URL, else agentos.db in $AGENTOS_HOME or your user data directory")
def keys_create(workspace: str, role: str, name: str | None, database_url: str | None) -> None:
    """Print a new API key for WORKSPACE (only its hash is stored)."""
    from agentos.keys import create_key

    try:
        url = resolve_url(database_url)
        click.echo(create_key(url, workspace, role, name))
        click.echo(f"stored in {describe(url)}", err=True)
    except Exception as exc:  # a bad URL or an unreachable database: say so, no traceback
        raise click.ClickException(f"could not create a key: {exc}") from None


@main.group()
def workspaces() -> None:
    """Workspaces: storage quota and the Ancha server of console tasks."""


@workspaces.command("set")
@click.argument("workspace")
@click.option("--quota-bytes", type=click.IntRange(min=0), default=None,
              help="Bytes of uploaded runs the workspace may keep (default: AGENTOS_WORKSPACE_QUOTA_BYTES, else no limit).")
@click.option("--ancha-server", default=None, help="The Ancha server (`ancha serve`) console tasks open worlds on.")
@click.option("--ancha-server-key", default=None, help="Its key (ANCHA_SERVER_KEY of that server).")
@click.option("--database-url", default=None, help="Default: AGENTOS_DATABASE_URL, else agentos.db in $AGENTOS_HOME or your user data directory")
def workspaces_set(workspace: str, quota_bytes: int | None, ancha_server: str | None, ancha_server_key: str | None,
                   database_url: str | None) -> None:
    """Change WORKSPACE's settings; options not given stay as they are."""
    from sqlalchemy import select

    from agentos.db import Database
    from agentos.models import Workspace

    url = resolve_url(database_url)
    if ancha_server is not None and not ancha_server.startswith(("http://", "https://")):
        raise click.BadParameter("an http(s) URL, as `ancha serve` prints it", param_hint="--ancha-server")
    db = Database(url)
    try:
        with db.write() as session:
            found = session.scalar(select(Workspace).where(Workspace.name == workspace))
            if found is None:
                raise click.ClickException(f"no workspace {workspace!r} in {describe(url)}: "
                                           "`agentos keys create --workspace NAME` makes one")
            if quota_bytes is not None:
                found.quota_bytes = quota_bytes
            if ancha_server is not None:
                found.ancha_server_url = ancha_server.rstrip("/")
            if ancha_server_key is not None:
                found.ancha_server_key = ancha_server_key
            quota = "default" if found.quota_bytes is None else f"{found.quota_bytes:,} bytes"
            click.echo(f"workspace {workspace}: quota {quota}; Ancha server {found.ancha_server_url or 'none'}")
    finally:
        db.dispose()


if __name__ == "__main__":
    main()
