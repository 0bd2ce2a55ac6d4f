"""The ``ancha`` command."""

from __future__ import annotations

import sys

import click

from ancha.errors import AnchaUserError


class AnchaGroup(click.Group):
    """Prints user errors (bad config, bad scenes, runs that cannot start) without a traceback."""

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except AnchaUserError as exc:
            click.echo(exc.render(), err=True)
            sys.exit(exc.exit_code)


@click.group(cls=AnchaGroup)
@click.version_option(package_name="ancha", message="ancha %(version)s")
def cli() -> None:
    """Test AI agents in simulated company worlds."""


def _register() -> None:
    from ancha.cli.check import check
    from ancha.cli.diff import diff
    from ancha.cli.doctor import doctor
    from ancha.cli.execution import execution
    from ancha.cli.explain import explain
    from ancha.cli.init import init
    from ancha.cli.playground import playground
    from ancha.cli.report import report
    from ancha.cli.run import run
    from ancha.cli.schema import schema
    from ancha.cli.serve import serve
    from ancha.cli.ui import ui

    for command in (run, doctor, execution, serve, init, schema, explain, diff, check, playground, report, ui):
        cli.add_command(command)


_register()


def main() -> None:
    cli(prog_name="ancha")
