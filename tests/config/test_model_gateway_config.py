"""``agent.budget_usd`` and ``agent.execution.modelHosts`` as ancha.yaml checks them."""

from __future__ import annotations

from pathlib import Path

import pytest

from ancha.config.errors import ConfigInvalid
from ancha.config.loading import ConfigOverrides, load_config
from ancha.world.registry import config_catalog


def problems(tmp_path: Path, text: str) -> dict[str, tuple[str, str | None]]:
    (tmp_path / "ancha.yaml").write_text(text)
    with pytest.raises(ConfigInvalid) as info:
        load_config(Path("ancha.yaml"), tmp_path, ConfigOverrides(), catalog=config_catalog())
    assert info.value.exit_code == 2
    return {p.path: (p.message, p.hint) for p in info.value.problems}


def test_budget_and_model_hosts__load_when_valid(tmp_path: Path) -> None:
    (tmp_path / "ancha.yaml").write_text(
        "agent:\n  command: python agent.py\n  budget_usd: 0.5\n  execution:\n    modelHosts: [openrouter.ai]\n")
    agent = load_config(Path("ancha.yaml"), tmp_path, ConfigOverrides(), catalog=config_catalog()).agent
    assert agent is not None and agent.budget_usd == 0.5 and agent.execution.model_hosts == ["openrouter.ai"]


def test_budget_usd__must_be_a_positive_number(tmp_path: Path) -> None:
    for value in ("0", "-1", "'1'"):
        found = problems(tmp_path, f"agent:\n  command: x\n  budget_usd: {value}\n"
                                   "  execution:\n    modelHosts: [openrouter.ai]\n")
        message, _ = found["agent.budget_usd"]
        assert message.startswith("expected a positive number of US dollars, such as 0.5, got"), message


def test_budget_usd__without_model_hosts_says_the_gateway_counts_it(tmp_path: Path) -> None:
    found = problems(tmp_path, "agent:\n  command: x\n  budget_usd: 1\n")
    message, hint = found["agent.budget_usd"]
    assert message == "needs agent.execution.modelHosts"
    assert hint is not None and "model gateway" in hint and "openrouter.ai" in hint


def test_model_hosts__are_bare_domains(tmp_path: Path) -> None:
    found = problems(tmp_path, "agent:\n  command: x\n  execution:\n"
                               "    modelHosts: [https://openrouter.ai, OpenRouter.ai, 'api.openai.com:443', ok.example]\n")
    assert set(found) == {f"agent.execution.modelHosts[{i}]" for i in range(3)}
    assert all("a domain such as openrouter.ai" in message for message, _ in found.values())
