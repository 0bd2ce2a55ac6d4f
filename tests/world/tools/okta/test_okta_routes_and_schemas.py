"""What every path answers (served, a 501 coverage gap, Okta's 404 and 405), the coverage
ledger derived from the vendor's list, and answers validated against the vendor's
OpenAPI schemas (management-minimal.yaml) for the main operations."""

from __future__ import annotations

import re
from functools import cache
from typing import Any

import jsonschema
import pytest
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from ancha.world.tools.okta import coverage
from ancha.world.tools.okta.coverage_ledger import LEDGER, OPERATION_IDS
from ancha.world.tools.okta.router import registered
from ancha.world.tools.okta.routes import load_all
from conftest import Org, vendor_spec


@pytest.fixture(scope="module")
def endpoints() -> list[str]:
    return coverage.vendor_endpoints()


def test_ledger__lists_exactly_the_vendors_operations(endpoints: list[str]) -> None:
    assert list(LEDGER) == endpoints and len(LEDGER) == 732
    assert OPERATION_IDS["GET /api/v1/users"] == "listUsers"


def test_ledger__is_current(endpoints: list[str]) -> None:
    assert coverage.COVERAGE.path.read_text() == coverage.COVERAGE.generate(), \
        "run: python -m ancha.world.tools.okta.coverage --regenerate"
    assert coverage.COVERAGE.extra_routes(endpoints) == []


def test_ledger__statuses_follow_the_routes() -> None:
    load_all()
    served = {f"{r.method} {r.template}": r.partial for r in registered()}
    for key, (status, note) in LEDGER.items():
        expected = "not_implemented" if key not in served else "partial" if served[key] else "implemented"
        assert (status, note) == (expected, served.get(key, "")), key


def test_unimplemented_vendor_endpoint__501_coverage_gap(org: Org) -> None:
    answer = org.raw("GET", "/api/v1/users/00u1/factors")
    assert answer.status_code == 501
    assert answer.json()["errorSummary"] == "Not implemented in this replica: GET /api/v1/users/{userId}/factors"
    entry = org.trace()[-1]
    assert entry["coverage_gap"] is True and entry["worked"] is False
    # A literal segment wins over a parameter: group rules are not group "rules".
    rules = org.raw("GET", "/api/v1/groups/rules")
    assert rules.status_code == 501 and "GET /api/v1/groups/rules" in rules.json()["errorSummary"]


def test_unknown_path_and_method__oktas_404_and_405(org: Org) -> None:
    answer = org.raw("GET", "/api/v1/nothing-here")
    assert answer.status_code == 404 and answer.json()["errorCode"] == "E0000008"
    assert answer.json()["errorSummary"] == "The requested path was not found"
    answer = org.raw("PATCH", "/api/v1/users")
    assert answer.status_code == 405 and answer.json()["errorCode"] == "E0000022"
    assert answer.json()["errorSummary"] == "The endpoint does not support the provided HTTP method"
    assert org.trace()[-1]["coverage_gap"] is False


# --- the vendor's schemas --------------------------------------------------------------


def _jsonschema(node: Any) -> Any:
    """OpenAPI 3.0 -> JSON Schema: ``nullable: true`` becomes ``null`` allowed."""
    if isinstance(node, list):
        return [_jsonschema(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: _jsonschema(v) for k, v in node.items() if k not in ("nullable", "discriminator", "example")}
    if node.get("nullable"):
        return {"anyOf": [out, {"type": "null"}]}
    return out


@cache
def _registry() -> tuple[Registry, dict[str, Any]]:
    spec = vendor_spec()
    root = {"components": {"schemas": _jsonschema(spec["components"]["schemas"])}}
    return Registry().with_resource("okta", Resource.from_contents(root, default_specification=DRAFT202012)), spec


def _schema_of(method: str, template: str, status: str) -> dict[str, Any]:
    registry, spec = _registry()
    response = spec["paths"][template][method.lower()]["responses"][status]
    if "$ref" in response:
        response = spec["components"]["responses"][response["$ref"].rsplit("/", 1)[1]]
    schema = response["content"]["application/json"]["schema"]
    return _jsonschema(_rebase(schema))


def _rebase(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: ("okta" + v if k == "$ref" and v.startswith("#") else _rebase(v)) for k, v in node.items()}
    if isinstance(node, list):
        return [_rebase(n) for n in node]
    return node


def _valid(body: Any, method: str, template: str, status: str) -> None:
    registry, _ = _registry()
    schema = _schema_of(method, template, status)
    jsonschema.Draft202012Validator(schema, registry=registry).validate(body)


def test_schemas__main_operations_answer_the_vendors_shapes(org: Org) -> None:
    dana = org.user_id("dana@acme.com")
    eng = org.group_id("Engineering")
    _valid(org.raw("GET", "/api/v1/users").json(), "GET", "/api/v1/users", "200")
    _valid(org.raw("GET", f"/api/v1/users/{dana}").json(), "GET", "/api/v1/users/{id}", "200")
    created = org.raw("POST", "/api/v1/users", json={"profile": {"login": "z@acme.com", "email": "z@acme.com",
                                                                  "firstName": "Z", "lastName": "Z"}})
    _valid(created.json(), "POST", "/api/v1/users", "200")
    _valid(org.raw("POST", f"/api/v1/users/{dana}", json={"profile": {"firstName": "D"}}).json(),
           "POST", "/api/v1/users/{id}", "200")
    _valid(org.raw("GET", f"/api/v1/users/{dana}/groups").json(), "GET", "/api/v1/users/{id}/groups", "200")
    _valid(org.raw("GET", "/api/v1/groups").json(), "GET", "/api/v1/groups", "200")
    _valid(org.raw("GET", f"/api/v1/groups/{eng}").json(), "GET", "/api/v1/groups/{groupId}", "200")
    _valid(org.raw("GET", f"/api/v1/groups/{eng}/users").json(), "GET", "/api/v1/groups/{groupId}/users", "200")
    _valid(org.raw("POST", "/api/v1/groups", json={"profile": {"name": "New"}}).json(), "POST", "/api/v1/groups",
           "200")
    _valid(org.raw("POST", f"/api/v1/users/{created.json()['id']}/lifecycle/activate",
                   params={"sendEmail": "false"}).json(), "POST", "/api/v1/users/{id}/lifecycle/activate", "200")
    _valid(org.raw("POST", f"/api/v1/users/{dana}/lifecycle/reset_password", params={"sendEmail": "false"}).json(),
           "POST", "/api/v1/users/{id}/lifecycle/reset_password", "200")
    _valid(org.raw("POST", f"/api/v1/users/{dana}/lifecycle/expire_password").json(), "POST",
           "/api/v1/users/{id}/lifecycle/expire_password", "200")
    _valid(org.raw("GET", "/api/v1/users/nobody").json(), "GET", "/api/v1/groups/{groupId}", "404")
    _valid(org.raw("GET", "/api/v1/users", token="bad").json(), "GET", "/api/v1/groups", "403")


def test_link_header__commas_in_queries_stay_encoded(org: Org) -> None:
    answer = org.raw("GET", "/api/v1/users", params={"search": 'profile.lastName co ","', "limit": "1"})
    assert answer.status_code == 200
    assert re.fullmatch(r'<[^,]+>; rel="self"', answer.headers["link"])
