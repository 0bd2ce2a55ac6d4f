"""``ancha serve``: the Ancha server on its own."""

from __future__ import annotations

import asyncio

import click

from ancha.server.app import SecureListener, create_app
from ancha.server.embedded import listeners, serve_all
from ancha.server.tls import local_tls


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=7600, show_default=True, type=int)
@click.option("--tls-port", default=7601, show_default=True, type=int,
              help="Where tools whose official SDK needs https (PagerDuty) are served, with a local CA's certificate.")
@click.option("--key", envvar="ANCHA_SERVER_KEY", help="Bearer key the control API requires (ANCHA_SERVER_KEY).")
def serve(host: str, port: int, tls_port: int, key: str | None) -> None:
    """Serve environments for `ancha run` (set server.url in ancha.yaml to use it)."""
    loopback = host in ("127.0.0.1", "localhost", "::1")
    if not loopback and not key:
        raise click.UsageError(f"--host {host} is reachable from other machines: set --key (or ANCHA_SERVER_KEY) "
                               "so that only you can create environments")
    click.echo(f"ancha server on http://{host}:{port}  (ancha.yaml: server: {{url: http://{host}:{port}}})")
    tls = local_tls((host, "localhost"))
    app = create_app(key=key, tls=SecureListener(f"https://{host}:{tls_port}", tls.ca_pem))
    asyncio.run(serve_all(listeners(app, host, port, tls_port, tls)))
