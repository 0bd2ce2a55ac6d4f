"""Monitors through the official client against the real server: create, get, list with
filters, update, delete, search, validate; states on the simulated clock; vendor schemas."""

from __future__ import annotations

from typing import Any

import pytest
from datadog_api_client.exceptions import ApiException, ForbiddenException, NotFoundException
from datadog_api_client.v1.api.monitors_api import MonitorsApi
from datadog_api_client.v1.model.monitor import Monitor
from datadog_api_client.v1.model.monitor_type import MonitorType
from datadog_api_client.v1.model.monitor_update_request import MonitorUpdateRequest

from conftest import DD

QUERY = "avg(last_5m):avg:orders.latency.p99{*} > 2000"


def _by_name(dd: DD, name: str) -> dict[str, Any]:
    return next(m for m in dd.raw("GET", "/api/v1/monitor").json() if m["name"] == name)


def test_list_monitors__seeded_with_states_and_vendor_shape(dd: DD, schema: Any) -> None:
    with dd.client() as client:
        monitors = MonitorsApi(client).list_monitors()
    states = {m.name: str(m.overall_state) for m in monitors}
    assert states == {"orders p99 latency": "OK", "payments errors": "OK", "disk full on db": "Alert"}
    answer = dd.raw("GET", "/api/v1/monitor").json()
    for monitor in answer:
        schema("v1", "Monitor", monitor)
        assert "overall_state_modified" in monitor


def test_create_get_update_delete_monitor__through_the_sdk(dd: DD) -> None:
    with dd.client() as client:
        api = MonitorsApi(client)
        made = api.create_monitor(
            body=Monitor(
                name="checkout latency",
                type=MonitorType.QUERY_ALERT,
                query="avg(last_10m):avg:checkout.latency{env:prod} > 500",
                message="ping @pagerduty",
                tags=["service:checkout"],
                priority=3,
            )
        )
        assert made.id > 0 and str(made.overall_state) == "OK"
        assert made.options.thresholds.critical == 500
        got = api.get_monitor(made.id)
        assert got.name == "checkout latency" and got.tags == ["service:checkout"]
        updated = api.update_monitor(
            made.id, body=MonitorUpdateRequest(name="checkout p95", tags=["team:web"])
        )
        assert updated.name == "checkout p95" and updated.tags == ["team:web"]
        assert api.delete_monitor(made.id).deleted_monitor_id == made.id
        with pytest.raises(NotFoundException) as info:
            api.get_monitor(made.id)
        assert "Monitor not found" in str(info.value.body)


def test_create_monitor__bad_query_and_threshold_mismatch_get_400(dd: DD) -> None:
    bad = dd.raw(
        "POST", "/api/v1/monitor", json={"type": "query alert", "query": "orders are slow", "name": "x"}
    )
    assert bad.status_code == 400 and bad.json() == {
        "errors": ["The value provided for parameter 'query' is invalid: invalid operator specified: "]
    }
    mismatch = dd.raw(
        "POST",
        "/api/v1/monitor",
        json={
            "type": "query alert",
            "query": QUERY,
            "name": "x",
            "options": {"thresholds": {"critical": 10}},
        },
    )
    assert mismatch.status_code == 400
    assert mismatch.json()["errors"] == ["Alert threshold (10) does not match that used in the query (2000)."]
    assert dd.raw("POST", "/api/v1/monitor", json={"type": "nope", "query": QUERY}).status_code == 400


def test_validate_monitor__ok_and_400(dd: DD) -> None:
    with dd.client() as client:
        api = MonitorsApi(client)
        assert api.validate_monitor(body=Monitor(type=MonitorType.QUERY_ALERT, query=QUERY)) == {}
        with pytest.raises(ApiException) as info:
            api.validate_monitor(body=Monitor(type=MonitorType.QUERY_ALERT, query="nonsense"))
        assert info.value.status == 400


def test_list_monitors__filters_by_name_monitor_tags_tags_and_pages(dd: DD) -> None:
    with dd.client() as client:
        api = MonitorsApi(client)
        assert [m.name for m in api.list_monitors(name="payments")] == ["payments errors"]
        assert [m.name for m in api.list_monitors(monitor_tags="service:db")] == ["disk full on db"]
        assert [m.name for m in api.list_monitors(tags="env:prod")] == ["payments errors"]
        pages = [api.list_monitors(page=p, page_size=2) for p in (0, 1)]
        assert [len(p) for p in pages] == [2, 1]
        shown = api.list_monitors(group_states="alert,warn")
        assert all(m.state is not None for m in shown)


def test_search_monitors__status_tag_and_text_with_counts(dd: DD, schema: Any) -> None:
    with dd.client() as client:
        api = MonitorsApi(client)
        alerting = api.search_monitors(query="status:alert")
        assert [m.name for m in alerting.monitors] == ["disk full on db"]
        tagged = api.search_monitors(query='tag:"service:orders"')
        assert [m.name for m in tagged.monitors] == ["orders p99 latency"]
        text = api.search_monitors(query="payments")
        assert text.metadata.total_count == 1
    body = dd.raw("GET", "/api/v1/monitor/search", params={"query": "", "per_page": 2}).json()
    schema("v1", "MonitorSearchResponse", body)
    assert body["metadata"] == {"page": 0, "page_count": 2, "per_page": 2, "total_count": 3}
    assert {c["name"]: c["count"] for c in body["counts"]["status"]} == {"ok": 2, "alert": 1}


def test_keys__missing_or_wrong_get_datadogs_403(dd: DD) -> None:
    for headers in (
        {},
        {"DD-API-KEY": dd.api_key},
        {"DD-API-KEY": "0" * 32, "DD-APPLICATION-KEY": dd.app_key},
    ):
        answer = dd.raw("GET", "/api/v1/monitor", keys=False, headers=headers)
        assert answer.status_code == 403 and answer.json() == {"errors": ["Forbidden"]}
    config = dd.config()
    config.api_key["appKeyAuth"] = "f" * 40
    from datadog_api_client import ApiClient

    with ApiClient(config) as client, pytest.raises(ForbiddenException):
        MonitorsApi(client).list_monitors()


def test_keys__look_like_datadogs(dd: DD) -> None:
    import re

    assert re.fullmatch(r"[0-9a-f]{32}", dd.api_key) and re.fullmatch(r"[0-9a-f]{40}", dd.app_key)
    assert dd.context["tools"]["datadog"]["token"] == dd.api_key


def test_unknown_path__datadogs_404_and_vendor_endpoint_501_is_a_coverage_gap(dd: DD) -> None:
    unknown = dd.raw("GET", "/api/v1/nothing-here")
    assert unknown.status_code == 404 and unknown.json() == {"errors": ["Not found"]}
    gap = dd.raw("GET", "/api/v1/notebooks")
    assert gap.status_code == 501 and gap.json()["endpoint"] == "GET /api/v1/notebooks"
    entry = dd.trace()[-1]
    assert entry["coverage_gap"] is True and entry["path"] == "/api/v1/notebooks"


def test_world_paths__answer_404_to_the_agent(dd: DD) -> None:
    monitor = _by_name(dd, "orders p99 latency")
    answer = dd.raw("PUT", f"/ancha/monitor/{monitor['id']}/state", json={"state": "Alert"})
    assert answer.status_code == 404 and answer.json() == {"errors": ["Not found"]}
    assert _by_name(dd, "orders p99 latency")["overall_state"] == "OK"


def test_create_monitor__a_window_past_any_duration_is_kept_not_evaluated(dd: DD) -> None:
    query = "avg(last_" + "9" * 4000 + "m):avg:orders.latency.p99{*} > 2000"  # within the query bound
    made = dd.raw("POST", "/api/v1/monitor", json={"type": "query alert", "name": "endless", "query": query})
    assert made.status_code == 200, made.text
    assert made.json()["overall_state"] in ("OK", "No Data")
    assert dd.raw("GET", "/api/v1/monitor").status_code == 200
