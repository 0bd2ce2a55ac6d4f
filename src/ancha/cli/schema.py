"""``ancha schema ancha|scene``: the JSON Schema of ancha.yaml or of a scene file."""

from __future__ import annotations

import json
from typing import Any

import click

from ancha.config.catalog import config_model
from ancha.scene.file_model import scene_file_model
from ancha.world.registry import catalog, config_catalog

_TITLES = {"ancha": "ancha.yaml", "scene": "scene.yaml"}


def json_schema(which: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of the file format named ``ancha`` or ``scene``."""
    model = config_model(config_catalog()) if which == "ancha" else scene_file_model(catalog())
    schema = model.model_json_schema(by_alias=True)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = _TITLES[which]
    return schema


@click.command("schema")
@click.argument("which", type=click.Choice(["ancha", "scene"]))
def schema(which: str) -> None:
    """Print the JSON Schema of ancha.yaml (ancha) or of a scene file (scene)."""
    click.echo(json.dumps(json_schema(which), indent=2))
