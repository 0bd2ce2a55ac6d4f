"""Every problem of ancha.yaml is reported at once (the reference's Validation): a wrong
value in ``agent.env`` or ``agent.execution.env`` does not hide the template errors or
reserved names of the other items of the same mapping or list."""

from __future__ import annotations

from pathlib import Path

import pytest

from ancha.config import ConfigInvalid, ConfigOverrides, load_config
from ancha.world.registry import config_catalog


def _messages(tmp_path: Path, text: str) -> list[str]:
    (tmp_path / "ancha.yaml").write_text(text)
    with pytest.raises(ConfigInvalid) as info:
        load_config(None, tmp_path, ConfigOverrides(), catalog=config_catalog())
    assert info.value.exit_code == 2
    return [f"{p.path}: {p.message}" for p in info.value.problems]


def test_agent_env__template_errors_come_with_a_type_error_in_the_same_mapping(tmp_path: Path) -> None:
    found = _messages(
        tmp_path,
        (
            "agent:\n"
            "  command: python -m bot\n"
            "  env:\n"
            '    SLACK_BASE: "{{slack.urll}}"\n'
            "    PORT: 8080\n"
            '    TASK: "{{task}}"\n'
            '    WHO: "{{nobody}}"\n'
            "trials: 0\n"
        ),
    )
    assert found == [
        "agent.env.SLACK_BASE: unknown template {{slack.urll}}",
        "agent.env.PORT: expected a string, got 8080",
        "agent.env.WHO: unknown template {{nobody}}",
        "trials: expected a positive integer, got 0",
    ]


def test_execution_env__reserved_names_come_with_a_wrong_item_in_the_same_list(tmp_path: Path) -> None:
    found = _messages(
        tmp_path,
        (
            "agent:\n"
            "  command: node agent.mjs\n"
            "  execution:\n"
            "    mode: container\n"
            "    image: my-agent:local\n"
            "    env:\n"
            "      - PATH\n"
            "      - 5\n"
            "      - OPENROUTER_API_KEY\n"
        ),
    )
    assert found == [
        "agent.execution.env[0]: PATH is a reserved name",
        "agent.execution.env[1]: expected a variable name such as OPENAI_API_KEY, got 5",
    ]
