"""``ancha init``: a config, a scene and an agent that pass, to start from."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import click

FILES = {
    "ancha.yaml": "ancha.yaml",
    "scenes/hello/scene.yaml": "scene.yaml",
    "agent.py": "agent.py",
}


@click.command()
@click.option("--force", is_flag=True, help="Overwrite files that already exist.")
def init(force: bool) -> None:
    """Write ancha.yaml (trials: 1), a scene and an agent that passes it."""
    here = Path.cwd()
    existing = [name for name in FILES if (here / name).exists()]
    if existing and not force:
        raise click.ClickException(
            f"{', '.join(existing)} already exist{'s' if len(existing) == 1 else ''} here; "
            "nothing was written (use --force to overwrite)")
    starter = resources.files("ancha.cli") / "starter"
    for target, source in FILES.items():
        path = here / target
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text((starter / source).read_text())
        click.echo(f"wrote {target}")
    click.echo("next: ancha run")
