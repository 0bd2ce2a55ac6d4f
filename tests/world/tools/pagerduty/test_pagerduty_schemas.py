"""The replica's answers to the main operations validate against PagerDuty's OpenAPI
response schemas, and the coverage ledger is current."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pagerduty_support import assert_schema, call

from ancha.world.environment import Environment
from ancha.world.tools.pagerduty import coverage
from ancha.world.tools.pagerduty.coverage_ledger import LEDGER


def _created(env: Environment) -> dict[str, Any]:
    service = env.refs["pagerduty_orders"].id
    answer = call(env, "POST", "/incidents", {"incident": {"type": "incident", "title": "Orders down",
                                                           "service": {"id": service, "type": "service_reference"}}})
    body = json.loads(answer.body)
    assert_schema("POST", "/incidents", answer.status, body)
    return dict(body["incident"])


@pytest.mark.parametrize(("method", "template", "path", "query", "body"), [
    ("GET", "/incidents", "/incidents", "date_range=all&total=true", None),
    ("GET", "/incidents/{id}", "/incidents/{incident}", "", None),
    ("PUT", "/incidents/{id}", "/incidents/{incident}", "", {"incident": {"type": "incident_reference",
                                                                         "status": "acknowledged"}}),
    ("PUT", "/incidents", "/incidents", "", {"incidents": [{"id": "{incident}", "type": "incident_reference",
                                                            "status": "resolved"}]}),
    ("GET", "/incidents/{id}/notes", "/incidents/{incident}/notes", "", None),
    ("POST", "/incidents/{id}/notes", "/incidents/{incident}/notes", "", {"note": {"content": "On it"}}),
    ("GET", "/incidents/{id}/log_entries", "/incidents/{incident}/log_entries", "", None),
    ("GET", "/log_entries", "/log_entries", "", None),
    ("GET", "/services", "/services", "", None),
    ("GET", "/services/{id}", "/services/{service}", "", None),
    ("GET", "/escalation_policies", "/escalation_policies", "", None),
    ("GET", "/escalation_policies/{id}", "/escalation_policies/{policy}", "", None),
    ("GET", "/schedules", "/schedules", "", None),
    ("GET", "/schedules/{id}", "/schedules/{schedule}", "since=2026-03-01T00:00:00Z&until=2026-03-20T00:00:00Z",
     None),
    ("GET", "/users", "/users", "", None),
    ("GET", "/users/{id}", "/users/{user}", "", None),
    ("GET", "/users/me", "/users/me", "", None),
    ("GET", "/oncalls", "/oncalls", "", None),
    ("GET", "/priorities", "/priorities", "", None),
])
def test_answers_validate_against_the_vendor_schema(env: Environment, method: str, template: str, path: str,
                                                    query: str, body: Any) -> None:
    incident = _created(env)
    ids = {"incident": incident["id"], "service": env.refs["pagerduty_orders"].id,
           "policy": env.refs["pd_orders_policy"].id, "schedule": env.refs["pd_primary"].id,
           "user": env.refs["pd_laura"].id}
    for name, value in ids.items():
        path = path.replace("{" + name + "}", value)
        if body is not None:
            body = json.loads(json.dumps(body).replace("{" + name + "}", value))
    answer = call(env, method, path, body, query=query)
    assert answer.status < 300, answer.body
    assert_schema(method, template, answer.status, json.loads(answer.body))


def test_coverage_ledger__is_current_and_names_every_vendor_endpoint() -> None:
    assert coverage.COVERAGE.path.read_text() == coverage.COVERAGE.generate()
    assert set(LEDGER) == set(coverage.vendor_endpoints())
    assert LEDGER["POST /v2/enqueue"] == ("implemented", "")
    assert coverage.COVERAGE.extra_routes(coverage.vendor_endpoints()) == []
