"""The coverage ledger follows the vendor's endpoint list and our routes; junk thrown at every
served route never gets a 5xx (except the documented 501 coverage gap)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ancha.scene.model import Scene
from ancha.world.environment import Environment
from ancha.world.kernel.tool import ToolRequest
from ancha.world.tools.datadog import coverage
from ancha.world.tools.datadog.coverage_ledger import LEDGER
from ancha.world.tools.datadog.replica import DatadogReplica
from ancha.world.tools.datadog.router import registered
from ancha.world.tools.datadog.routes import load_all
from conftest import SEED, START


@pytest.fixture(scope="module")
def endpoints() -> list[str]:
    return coverage.vendor_endpoints()


def test_ledger__lists_exactly_the_vendors_operations_and_is_current(endpoints: list[str]) -> None:
    assert list(LEDGER) == endpoints and len(LEDGER) >= 1200
    assert coverage.COVERAGE.path.read_text() == coverage.COVERAGE.generate(), \
        "run: python -m ancha.world.tools.datadog.coverage --regenerate"
    assert coverage.COVERAGE.extra_routes(endpoints) == []


def test_ledger__statuses_follow_the_routes() -> None:
    load_all()
    served = {f"{r.method} {r.template}": r.partial for r in registered()}
    for key, (status, note) in LEDGER.items():
        if key not in served:
            assert status == "not_implemented", key
        else:
            assert status == ("partial" if served[key] else "implemented") and note == served[key], key
    assert LEDGER["GET /api/v1/monitor/{monitor_id}"][0] == "partial"
    assert LEDGER["POST /api/v1/events"] == ("implemented", "")


@pytest.fixture(scope="module")
def world() -> tuple[Environment, DatadogReplica]:
    scene = Scene.model_validate({"name": "dd", "clock": {"start": START, "limit": 7200},
                                  "world": {"datadog": copy.deepcopy(SEED)}})
    env = Environment("env_props", scene, 1)
    replica = env.tools["datadog"]
    assert isinstance(replica, DatadogReplica)
    return env, replica


_SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
_ROUTES = sorted({(r.method, r.template) for r in registered()} | {("GET", "/api/v1/monitor")})
_SEGMENT = st.one_of(st.sampled_from(["1", "0", "-3", "abc", "x y", "%00", "9" * 30, "*", "fault:x"]),
                     st.text(min_size=1, max_size=8).filter(lambda s: "/" not in s and "?" not in s))
_SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-10**12, 10**12), st.floats(allow_nan=False),
                    st.text(max_size=12), st.sampled_from(["now-15m", "service:(a", "@x:[1 TO", "-", "OR", '"',
                                                           "2026-03-02T09:00:00Z", "Alert", "query alert"]))
_JSON = st.recursive(_SCALAR, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
    st.sampled_from(["data", "type", "attributes", "scope", "monitor_identifier", "monitor_id", "monitor_tags",
                     "schedule", "start", "end", "query", "name", "title", "text", "tags", "filter", "page", "limit",
                     "cursor", "from", "to", "sort", "series", "metric", "points", "timestamp", "value", "options",
                     "thresholds", "critical", "state", "message", "service", "every", "priority"]), inner, max_size=5),
    max_leaves=12)
_QUERY = st.dictionaries(st.sampled_from(["query", "from", "to", "start", "end", "page", "page_size", "per_page",
                                          "page[limit]", "page[cursor]", "filter[query]", "filter[from]", "sort",
                                          "group_states", "tags", "monitor_tags", "current_only", "monitor_ids",
                                          "page[offset]", "name"]), _SCALAR.map(str), max_size=4)


def _path(template: str, values: list[str]) -> str:
    parts = []
    for segment in template.split("/"):
        if segment.startswith("{") and segment.endswith("}"):
            parts.append(values.pop() if values else "1")
        else:
            parts.append(segment)
    return "/".join(parts)


def _assert_answer(status: int, gap: bool, body: bytes) -> None:
    assert status < 500 or (status == 501 and gap), (status, body[:200])
    if body:
        json.loads(body)


@_SETTINGS
@given(route=st.sampled_from(_ROUTES), values=st.lists(_SEGMENT, max_size=3), body=_JSON, query=_QUERY,
       world_keys=st.booleans())
def test_served_routes__junk_never_5xx(world: tuple[Environment, DatadogReplica], route: tuple[str, str],
                                       values: list[str], body: Any, query: dict[str, str], world_keys: bool) -> None:
    env, replica = world
    from urllib.parse import urlencode

    headers = replica.world_headers() if world_keys else {
        "dd-api-key": replica.api_key, "dd-application-key": replica.app_key}
    request = ToolRequest(route[0], _path(route[1], list(values)), urlencode(query), headers,
                          json.dumps(body).encode())
    answer = env.dispatch("datadog", request)
    _assert_answer(answer.status, answer.coverage_gap, answer.body)


@_SETTINGS
@given(method=st.sampled_from(["GET", "POST", "PUT", "PATCH", "DELETE"]),
       path=st.sampled_from(["/api/v1/monitor", "/api/v2/downtime", "/api/v2/logs/events/search", "/api/v1/slo",
                             "/api/v2/series", "/api/v1/events", "/nope", "/api/v2/logs"]),
       body=st.binary(max_size=60))
def test_garbage_bodies__never_5xx(world: tuple[Environment, DatadogReplica], method: str, path: str,
                                   body: bytes) -> None:
    env, replica = world
    headers = {"dd-api-key": replica.api_key, "dd-application-key": replica.app_key}
    answer = env.dispatch("datadog", ToolRequest(method, path, "", headers, body))
    _assert_answer(answer.status, answer.coverage_gap, answer.body)
