"""`ancha --version` and `agentos --version` print the installed package's version."""

from __future__ import annotations

from importlib.metadata import version

from click.testing import CliRunner

from agentos.cli import main as agentos_main
from ancha.cli.main import cli as ancha_cli


def test_ancha_version__prints_the_package_version() -> None:
    result = CliRunner().invoke(ancha_cli, ["--version"])
    assert result.exit_code == 0, result.output
    assert result.output == f"ancha {version('ancha')}\n"


def test_agentos_version__prints_the_package_version() -> None:
    result = CliRunner().invoke(agentos_main, ["--version"])
    assert result.exit_code == 0, result.output
    assert result.output == f"agentos {version('ancha')}\n"
