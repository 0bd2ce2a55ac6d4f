"""The ``ancha`` command."""

from __future__ import annotations

import importlib
import sys

import click

from ancha.errors import AnchaUserError

# Each command's module, imported when the command runs (or help lists it): `ancha init`
# should not pay for the runner, the server and the checks that `ancha run` needs.
COMMANDS = {
    name: f"ancha.cli.{name}"
    for name in ("run", "doctor", "execution", "serve", "init", "schema", "explain", "diff", "check",
                 "playground", "report", "ui", "replay", "fork", "push")
}


class AnchaGroup(click.Group):
    """Prints user errors (bad config, bad scenes, runs that cannot start) without a traceback,
    and imports a command's module only when that command is asked for."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name)
        if command is None and cmd_name in COMMANDS:
            command = getattr(importlib.import_module(COMMANDS[cmd_name]), cmd_name)
            self.add_command(command)
        return command

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple[str | None, click.Command | None,
                                                                          list[str]]:
        try:
            return super().resolve_command(ctx, args)
        except click.NoSuchCommand as exc:  # "Did you mean ...?" among every command, imported or not
            raise click.NoSuchCommand(exc.command_name, possibilities=self.list_commands(ctx), ctx=ctx) from None

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


def main() -> None:
    cli(prog_name="ancha")
