"""``ancha serve``: the Ancha server on its own."""

from __future__ import annotations

from pathlib import Path

import click
from starlette.types import ASGIApp

from ancha.cli.explain import RUNS_DIR
from ancha.console.app import console_app
from ancha.console.links import PREFIX
from ancha.server.app import SecureListener, create_app
from ancha.server.connections import ConnectionLimits
from ancha.server.embedded import free_port, listeners
from ancha.server.listener import run_on_fast_loop, serve_all
from ancha.server.tls import local_tls

_DEFAULTS = ConnectionLimits()


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=7600, show_default=True, type=int)
@click.option("--tls-port", default=0, type=click.IntRange(0, 65535),
              help="Where tools whose official SDK needs https are served, with a local CA's certificate "
                   "(default: a free port; agents get the URLs from their context).")
@click.option("--key", envvar="ANCHA_SERVER_KEY", help="Bearer key the control API requires (ANCHA_SERVER_KEY).")
@click.option("--keep-alive", default=_DEFAULTS.keep_alive, show_default=True,
              type=click.FloatRange(0.1, 3600), help="Seconds an idle connection stays open after a response.")
@click.option("--read-timeout", default=_DEFAULTS.read_timeout, show_default=True,
              type=click.FloatRange(0.1, 3600),
              help="Seconds a client has to send a whole request (head and body); slower connections are closed.")
@click.option("--runs-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Runs the console at /ui shows (default: .ancha/runs here, on a loopback host).")
def serve(host: str, port: int, tls_port: int, key: str | None, keep_alive: float, read_timeout: float,
          runs_dir: Path | None) -> None:
    """Serve environments for `ancha run` (set server.url in ancha.yaml to use it).

    At start the server raises its soft limit on open files to the hard limit, and it
    closes idle and slow connections, so that many idle sockets do not starve others."""
    loopback = host in ("127.0.0.1", "localhost", "::1")
    if not loopback and not key:
        raise click.UsageError(f"--host {host} is reachable from other machines: set --key (or ANCHA_SERVER_KEY) "
                               "so that only you can create environments")
    tls_port = tls_port or free_port(host)
    click.echo(f"ancha server on http://{host}:{port}  (ancha.yaml: server: {{url: http://{host}:{port}}}); "
               f"https for tools that need it on port {tls_port}")
    tls = local_tls((host, "localhost"))
    # The console shows local files: on a reachable host only when asked for by name.
    runs = runs_dir or (RUNS_DIR if loopback else None)
    page_key = None if loopback else key  # reachable from elsewhere: the pages need the key too
    mounts: dict[str, ASGIApp] = {PREFIX: console_app(runs.resolve(), key, page_key)} if runs is not None else {}
    if mounts:
        click.echo(f"console on http://{host}:{port}{PREFIX}/  (runs: {runs})")
    app = create_app(key=key, tls=SecureListener(f"https://{host}:{tls_port}", tls.ca_pem), mounts=mounts)
    limits = ConnectionLimits(keep_alive=keep_alive, read_timeout=read_timeout)
    run_on_fast_loop(serve_all(listeners(app, host, port, tls_port, tls, limits)))
