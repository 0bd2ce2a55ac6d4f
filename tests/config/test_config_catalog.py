"""ancha.yaml names tools only as the catalog the caller passes gives them: their templates and
the values of their ``agent.<tool>_transport`` fields."""

from __future__ import annotations

from pathlib import Path

import pytest

from ancha.config import ConfigCatalog, ConfigInvalid, load_config
from ancha.config.catalog import config_model
from ancha.world.registry import config_catalog


def _problems(tmp_path: Path, text: str, catalog: ConfigCatalog) -> list[str]:
    (tmp_path / "ancha.yaml").write_text(text)
    with pytest.raises(ConfigInvalid) as info:
        load_config(None, tmp_path, catalog=catalog)
    return [f"{p.path}: {p.message}" for p in info.value.problems]


def test_transport__the_values_come_from_the_catalog(tmp_path: Path) -> None:
    catalog = ConfigCatalog(templates={"slack": ("url",)}, transports={"slack": ("feed", "pigeon")})
    (tmp_path / "ancha.yaml").write_text("agent:\n  command: x\n  slack_transport: pigeon\n")
    assert load_config(None, tmp_path, catalog=catalog).agent.slack_transport == "pigeon"  # type: ignore[union-attr]
    assert _problems(tmp_path, "agent:\n  command: x\n  slack_transport: http\n", catalog) == [
        "agent.slack_transport: expected one of feed, pigeon, got 'http'"]


def test_transport__this_build_offers_what_slack_declares(tmp_path: Path) -> None:
    field = config_model(config_catalog()).model_json_schema()["$defs"]["AgentConfig"]["properties"]["slack_transport"]
    assert field["enum"] == ["feed", "http", "socket"]


def test_templates__a_tool_the_catalog_lacks_is_unknown(tmp_path: Path) -> None:
    catalog = ConfigCatalog(templates={"chat": ("url", "bot_token")})
    assert _problems(tmp_path, "agent:\n  command: x\n  env:\n    A: '{{slack.token}}'\n    B: '{{chat.bot_token}}'\n",
                     catalog) == ["agent.env.A: unknown template {{slack.token}}"]
