"""Fixtures for the Datadog replica's tests: a seeded world on the real server, the official
``datadog-api-client`` pointed at it, raw HTTP, and the vendor's OpenAPI schemas."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from typing import Any

import httpx
import pytest
from datadog_api_client import ApiClient, Configuration

from ancha.world.kernel import vendor_data

START = "2026-03-02T09:00:00Z"
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC).timestamp()

SEED: dict[str, Any] = {
    "monitors": [
        {"ref": "datadog_orders", "name": "orders p99 latency", "type": "query alert",
         "query": "avg(last_5m):avg:orders.latency.p99{*} > 2000", "message": "p99 is high @slack-ops",
         "tags": ["service:orders", "team:core"], "priority": 2},
        {"ref": "datadog_payments", "name": "payments errors", "type": "metric alert",
         "query": "avg(last_5m):sum:payments.errors{env:prod} > 10", "tags": ["service:payments"]},
        {"ref": "datadog_disk", "name": "disk full on db", "type": "service check",
         "query": '"disk.check".over("host:db").by("*").last(2).count_by_status()', "state": "Alert",
         "tags": ["service:db"]},
    ],
    "dashboards": [{"ref": "datadog_overview", "title": "Orders overview",
                    "widgets": [{"definition": {"type": "note", "content": "hello"}}]}],
    "events": [{"ref": "datadog_deploy", "title": "Deployed orders v42", "text": "by ben",
                "tags": ["service:orders"], "at": T0 - 600}],
    "logs": [
        {"service": "orders", "status": "error", "message": "upstream timeout calling payments", "at": T0 - 300,
         "host": "web-1", "attributes": {"http": {"status_code": 504, "method": "POST"}, "duration": 3100},
         "tags": ["env:prod"]},
        {"service": "orders", "status": "info", "message": "order 17 created", "at": T0 - 200, "host": "web-2",
         "attributes": {"http": {"status_code": 201}}, "tags": ["env:prod"]},
        {"service": "payments", "status": "warn", "message": "retrying charge", "at": T0 - 100, "host": "pay-1",
         "attributes": {"http": {"status_code": 502}}, "tags": ["env:prod"]},
        {"ref": "datadog_old_log", "service": "orders", "status": "error", "message": "disk almost full",
         "at": T0 - 7200, "host": "db-1", "attributes": {}, "tags": ["env:prod"]},
    ],
    "metrics": {"orders.latency.p99": {"baseline": 120, "noise": 5},
                "payments.errors": {"points": [[T0 - 240, 2], [T0 - 120, 3]]}},
}


@dataclass
class DD:
    context: dict[str, Any]
    url: str
    api_key: str
    app_key: str

    @property
    def base(self) -> str:
        return self.url.rsplit("/datadog", 1)[0]

    def config(self, **kwargs: Any) -> Configuration:
        config = Configuration(host=self.url, **kwargs)
        config.api_key["apiKeyAuth"] = self.api_key
        config.api_key["appKeyAuth"] = self.app_key
        return config

    def client(self) -> ApiClient:
        return ApiClient(self.config())

    def raw(self, method: str, path: str, keys: bool = True, **kwargs: Any) -> httpx.Response:
        headers = dict(kwargs.pop("headers", {}))
        if keys:
            headers.setdefault("DD-API-KEY", self.api_key)
            headers.setdefault("DD-APPLICATION-KEY", self.app_key)
        return httpx.request(method, f"{self.url}{path}", headers=headers, timeout=10, **kwargs)

    def trace(self) -> list[dict[str, Any]]:
        text = httpx.get(f"{self.base}/trace", timeout=10).text
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    def state(self) -> dict[str, Any]:
        return dict(httpx.get(f"{self.base}/state", timeout=10).json()["datadog"])

    def events(self) -> list[dict[str, Any]]:
        feed = self.context["events"]
        answer = httpx.get(feed["url"], params={"after": 0, "wait": "0s"},
                           headers={"Authorization": f"Bearer {feed['token']}"}, timeout=10)
        return list(answer.json()["events"])


@pytest.fixture
def make_datadog(make_env: Callable[..., dict[str, Any]]) -> Callable[..., DD]:
    def make(seed: dict[str, Any] | None = None, scene: dict[str, Any] | None = None) -> DD:
        body = {"world": {"datadog": copy.deepcopy(SEED if seed is None else seed)},
                "clock": {"start": START, "limit": 7200}, **(scene or {})}
        context = make_env(body)
        tool = context["tools"]["datadog"]
        return DD(context, tool["url"], tool["api_key"], tool["app_key"])
    return make


@pytest.fixture
def dd(make_datadog: Callable[..., DD]) -> DD:
    return make_datadog()


def _spec(version: str) -> dict[str, Any]:
    """The packaged structure of the vendor's ``openapi-{version}.yaml``."""
    spec: dict[str, Any] = vendor_data.read("datadog", "rest")[version]
    return spec


def _nullable(node: Any) -> Any:
    """OpenAPI 3.0 ``nullable: true`` as JSON Schema (``type: [t, null]`` / ``anyOf`` null)."""
    if isinstance(node, list):
        return [_nullable(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: _nullable(v) for k, v in node.items() if k not in ("nullable", "readOnly", "writeOnly", "example",
                                                                  "x-enum-varnames")}
    if node.get("nullable"):
        if "$ref" in out or "allOf" in out or "oneOf" in out or "anyOf" in out:
            return {"anyOf": [out, {"type": "null"}]}
        if "type" in out:
            out["type"] = [out["type"], "null"]
        if "enum" in out:
            out["enum"] = [*out["enum"], None]
    return out


@cache
def _schemas(version: str) -> dict[str, Any]:
    return {"components": {"schemas": _nullable(_spec(version)["components"]["schemas"])}}


def assert_schema(version: str, name: str, data: Any) -> None:
    """``data`` is valid against the vendor's component schema ``name``."""
    import jsonschema

    root = _schemas(version)
    schema = {"$ref": f"#/components/schemas/{name}", **root}
    jsonschema.validate(data, schema, cls=jsonschema.Draft202012Validator)


@pytest.fixture
def schema() -> Iterator[Callable[[str, str, Any], None]]:
    yield assert_schema
