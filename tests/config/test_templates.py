from __future__ import annotations

import pytest

from ancha.config.catalog import ConfigCatalog
from ancha.config.templates import TemplateError, available_names, find_placeholders, render
from ancha.world.registry import config_catalog


def test_template_names__reference_table() -> None:
    for name in ("task", "trial", "env.id", "okta.url", "github.token", "slack.signing_secret", "slack.app_token",
                 "datadog.api_key", "datadog.app_key", "datadog.webhook_token", "pagerduty.from_email",
                 "pagerduty.routing_key", "pagerduty.routing_keys", "events.url", "events.token", "done.url",
                 "trial.token", "context.url", "agent.port", "service"):
        assert name in available_names(config_catalog(), "url")


def test_available_names__per_tool_and_place() -> None:
    names = available_names(config_catalog(), tools=["slack"])
    assert "slack.url" in names and "github.url" not in names and "service" not in names
    assert "service" in available_names(config_catalog(), where="url", tools=["slack"])


def test_available_names__the_tools_are_what_the_catalog_gives() -> None:
    catalog = ConfigCatalog(templates={"chat": ("url", "bot_token")})
    names = available_names(catalog)
    assert [n for n in names if n.startswith("chat.")] == ["chat.url", "chat.bot_token"]
    assert "slack.url" not in names


def test_find_placeholders() -> None:
    assert find_placeholders("{{slack.url}}/x/{{ trial }}") == ["slack.url", "trial"]


def test_render__fills_values() -> None:
    assert render("Bearer {{slack.token}}", {"slack.token": "xoxb-1"}) == "Bearer xoxb-1"


def test_render__unknown_name_lists_available() -> None:
    with pytest.raises(TemplateError) as info:
        render("{{nope}}", {"task": "t"})
    assert isinstance(info.value, KeyError)
    assert str(info.value) == "unknown template {{nope}}; available: task"
