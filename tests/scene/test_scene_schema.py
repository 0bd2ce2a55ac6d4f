from __future__ import annotations

import io
from typing import Any

import jsonschema
from ruamel.yaml import YAML
from scene_files import PEOPLE, REFERENCE

from ancha.cli.schema import json_schema


def _yaml(text: str) -> Any:
    return YAML(typ="safe").load(io.StringIO(text))


def test_schema_scene__people_world_rules_and_process_checks_validate() -> None:
    schema = json_schema("scene")
    jsonschema.Draft202012Validator.check_schema(schema)
    scene = _yaml(PEOPLE + REFERENCE + """\
world_rules:
  events:
    - at: 10m
      unless: { not: { any: [{ message: { to: laura, from: $slack_bot } }, { knows: [ben, laura.beta_on] }] } }
      do:
        - slack.message: { channel: $slack_support, from: $slack_laura, text: Any news?, thread_of: $slack_q }
""")
    jsonschema.validate(scene, schema)
    assert {"people", "world_rules"} <= set(schema["properties"])


def test_schema_scene__refuses_unknown_person_fields() -> None:
    validator = jsonschema.Draft202012Validator(json_schema("scene"))
    assert not validator.is_valid({"people": {"laura": {"replies": "2m"}}})
    assert not validator.is_valid({"world_rules": {"events": [{"at": "1m", "do": [{"slack.mesage": {}}]}]}})
