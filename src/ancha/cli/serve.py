"""``ancha serve``: the Ancha server on its own."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import click
from starlette.types import ASGIApp

from ancha.console.app import console_app
from ancha.console.links import PREFIX
from ancha.results.runs_folder import RUNS_DIR
from ancha.server.app import SecureListener, create_app
from ancha.server.connections import ConnectionLimits
from ancha.server.embedded import free_port, listeners
from ancha.server.keys import LOOPBACK, forget_key, new_key, save_key
from ancha.server.listener import run_on_fast_loop, serve_all
from ancha.server.tls import local_tls

_DEFAULTS = ConnectionLimits()


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=7600, show_default=True, type=int)
@click.option("--tls-port", default=0, type=click.IntRange(0, 65535),
              help="Where tools whose official SDK needs https are served, with a local CA's certificate "
                   "(default: a free port; agents get the URLs from their context).")
@click.option("--key", envvar="ANCHA_SERVER_KEY",
              help="Bearer key the control API requires (ANCHA_SERVER_KEY); default: a new random key, "
                   "printed and kept for the CLI in a file only you can read.")
@click.option("--no-key", is_flag=True,
              help="Serve the control API without a key (loopback only): anyone on this machine, an agent "
                   "under test included, can then read, grade and delete every environment.")
@click.option("--keep-alive", default=_DEFAULTS.keep_alive, show_default=True,
              type=click.FloatRange(0.1, 3600), help="Seconds an idle connection stays open after a response.")
@click.option("--read-timeout", default=_DEFAULTS.read_timeout, show_default=True,
              type=click.FloatRange(0.1, 3600),
              help="Seconds a client has to send a whole request (head and body); slower connections are closed.")
@click.option("--runs-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Runs the console at /ui shows (default: .ancha/runs here, on a loopback host).")
def serve(host: str, port: int, tls_port: int, key: str | None, no_key: bool, keep_alive: float,
          read_timeout: float, runs_dir: Path | None) -> None:
    """Serve environments for `ancha run` (set server.url in ancha.yaml to use it).

    The control API needs a key: --key (ANCHA_SERVER_KEY), or else a new one, printed and
    kept where the CLI on this machine finds it (ancha run, doctor, check, ui). Agents get
    only their trial's tokens, which open their own tools, events, done and context.

    At start the server raises its soft limit on open files to the hard limit, and it
    closes idle and slow connections, so that many idle sockets do not starve others."""
    loopback = host in LOOPBACK
    if no_key and key:
        raise click.UsageError("--no-key and --key (or ANCHA_SERVER_KEY) cannot be combined")
    if no_key and not loopback:
        raise click.UsageError(f"--host {host} is reachable from other machines: --no-key is for loopback only")
    url = f"http://{host}:{port}"
    if no_key:
        click.echo("warning: --no-key: the control API is open to anyone on this machine, an agent under test "
                   "included: it can read the checks it is graded by, grade or end its own trial and others'",
                   err=True)
    else:
        key = key or new_key()
        try:
            kept = f"kept for the CLI in {save_key(url, key)}"
        except OSError as exc:  # no state folder to write: the key still works, set by hand
            kept = f"not kept for the CLI: {exc}; set ANCHA_SERVER_KEY"
        click.echo(f"server key: {key}  ({kept}; elsewhere set ANCHA_SERVER_KEY)")
    tls_port = tls_port or free_port(host)
    click.echo(f"ancha server on {url}  (ancha.yaml: server: {{url: {url}}}); "
               f"https for tools that need it on port {tls_port}")
    tls = local_tls((host, "localhost"))
    # The console shows local files: on a reachable host only when asked for by name.
    runs = runs_dir or (RUNS_DIR if loopback else None)
    # Its pages show runs' checks and follow live trials: with a key, they need it too.
    mounts: dict[str, ASGIApp] = {PREFIX: console_app(runs.resolve(), key, key)} if runs is not None else {}
    if mounts:
        where = f"{url}{PREFIX}/" + (f"?key={key}" if key else "")
        click.echo(f"console on {where}  (runs: {runs})")
    app = create_app(key=key, tls=SecureListener(f"https://{host}:{tls_port}", tls.ca_pem), mounts=mounts)
    limits = ConnectionLimits(keep_alive=keep_alive, read_timeout=read_timeout)
    if key:
        _forget_on_terminate(url, key)
    try:
        run_on_fast_loop(serve_all(listeners(app, host, port, tls_port, tls, limits)))
    finally:
        if key:
            forget_key(url, key)


def _forget_on_terminate(url: str, key: str) -> None:
    """Remove the kept key when SIGTERM stops the server too: uvicorn raises the signal again
    once it has shut down, and this handler is the one it then reaches."""
    def forget_and_end(signum: int, frame: object) -> None:
        forget_key(url, key)
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    signal.signal(signal.SIGTERM, forget_and_end)
