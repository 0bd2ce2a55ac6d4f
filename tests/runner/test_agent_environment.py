"""What an agent is given in a world with every tool: every template name of the reference
resolves, and every ANCHA_* variable of world.md is set."""

from __future__ import annotations

from typing import Any

from ancha.config.templates import available_names
from ancha.runner.agents.environment import ancha_variables, base_environment, template_values
from ancha.world.registry import config_catalog

EVERY_TOOL = {"world": {"slack": {}, "github": {}, "datadog": {}, "okta": {},
                        "pagerduty": {"services": [{"ref": "pd_orders", "name": "orders"}]}}}


def test_every_template_name__resolves_in_a_world_with_every_tool(make_env: Any) -> None:
    values = template_values(make_env(EVERY_TOOL))
    wanted = [name for name in available_names(config_catalog()) if not name.startswith("agent.")]
    assert [name for name in wanted if name not in values] == []
    assert values["pagerduty.routing_keys"].split(",") == [values["pagerduty.routing_key"]]


def test_ancha_variables__world_md_names_for_every_tool(make_env: Any) -> None:
    variables = ancha_variables(make_env(EVERY_TOOL), "/tmp/state")
    for name in ("SLACK_SIGNING_SECRET", "SLACK_APP_TOKEN", "DATADOG_API_KEY", "DATADOG_APP_KEY",
                 "PAGERDUTY_FROM_EMAIL", "PAGERDUTY_ROUTING_KEY", "OKTA_TOKEN", "GITHUB_TOKEN"):
        assert variables[f"ANCHA_{name}"], name
    for tool in ("SLACK", "GITHUB", "DATADOG", "PAGERDUTY", "OKTA"):
        assert variables[f"ANCHA_{tool}_URL"].startswith(("http://127.0.0.1:", "https://127.0.0.1:"))
    assert variables["ANCHA_PAGERDUTY_URL"].startswith("https://")
    assert variables["OKTA_TESTING_TESTINGDISABLEHTTPSCHECK"] == "true"  # the okta SDK's plain-http switch


def test_base_environment__never_holds_the_server_key() -> None:
    shell = {"PATH": "/bin", "ANCHA_SERVER_KEY": "k", "OTHER": "x"}
    assert "ANCHA_SERVER_KEY" not in base_environment(["ANCHA_SERVER_KEY"], False, shell)
    assert base_environment([], True, shell) == {"PATH": "/bin", "OTHER": "x"}
