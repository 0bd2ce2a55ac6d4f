from __future__ import annotations

import json

import jsonschema
from click.testing import CliRunner

from ancha.cli.schema import schema


def _schema(which: str) -> dict:
    result = CliRunner().invoke(schema, [which])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    jsonschema.Draft202012Validator.check_schema(data)
    return data


def test_schema_ancha__describes_the_file() -> None:
    data = _schema("ancha")
    jsonschema.validate({"agent": {"command": "node a.mjs", "idle": "10s", "execution": {"memoryMb": 1024}},
                         "trials": 3, "min_pass_rate": 0.8}, data)
    assert "root" not in data["properties"]
    try:
        jsonschema.validate({"trials": 0}, data)
    except jsonschema.ValidationError:
        pass
    else:
        raise AssertionError("trials: 0 should not validate")


def test_schema_scene__raw_file_shape() -> None:
    data = _schema("scene")
    scene = {"name": "x", "clock": {"start": "2026-01-05T09:00:00Z", "limit": "2h"},
             "world": {"slack": {"messages": [{"channel": "$slack_support", "from": "$slack_bot", "at": "-3d"}]}},
             "checks": [{"id": "a", "trace": {"called": "GET /x"}}], "pass": ["a"]}
    jsonschema.validate(scene, data)
    try:
        jsonschema.validate({"bogus": 1}, data)
    except jsonschema.ValidationError:
        pass
    else:
        raise AssertionError("unknown keys should not validate")


def test_schema__unknown_file_kind_is_a_usage_error() -> None:
    assert CliRunner().invoke(schema, ["nope"]).exit_code == 2
