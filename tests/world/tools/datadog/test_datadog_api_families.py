"""Downtimes, events, logs, metrics and dashboards through the official client against the
real server, with answers checked against the vendor's OpenAPI schemas."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from datadog_api_client.exceptions import ApiException, NotFoundException
from datadog_api_client.v1.api.dashboards_api import DashboardsApi
from datadog_api_client.v1.api.events_api import EventsApi as EventsV1
from datadog_api_client.v1.api.metrics_api import MetricsApi as MetricsV1
from datadog_api_client.v1.model.event_create_request import EventCreateRequest
from datadog_api_client.v2.api.downtimes_api import DowntimesApi
from datadog_api_client.v2.api.events_api import EventsApi as EventsV2
from datadog_api_client.v2.api.logs_api import LogsApi
from datadog_api_client.v2.api.metrics_api import MetricsApi as MetricsV2
from datadog_api_client.v2.model.downtime_create_request import DowntimeCreateRequest
from datadog_api_client.v2.model.downtime_create_request_attributes import DowntimeCreateRequestAttributes
from datadog_api_client.v2.model.downtime_create_request_data import DowntimeCreateRequestData
from datadog_api_client.v2.model.downtime_monitor_identifier_id import DowntimeMonitorIdentifierId
from datadog_api_client.v2.model.downtime_resource_type import DowntimeResourceType
from datadog_api_client.v2.model.downtime_schedule_one_time_create_update_request import (
    DowntimeScheduleOneTimeCreateUpdateRequest,
)
from datadog_api_client.v2.model.downtime_update_request import DowntimeUpdateRequest
from datadog_api_client.v2.model.downtime_update_request_attributes import DowntimeUpdateRequestAttributes
from datadog_api_client.v2.model.downtime_update_request_data import DowntimeUpdateRequestData
from datadog_api_client.v2.model.logs_list_request import LogsListRequest
from datadog_api_client.v2.model.logs_list_request_page import LogsListRequestPage
from datadog_api_client.v2.model.logs_query_filter import LogsQueryFilter
from datadog_api_client.v2.model.logs_sort import LogsSort
from datadog_api_client.v2.model.metric_intake_type import MetricIntakeType
from datadog_api_client.v2.model.metric_payload import MetricPayload
from datadog_api_client.v2.model.metric_point import MetricPoint
from datadog_api_client.v2.model.metric_series import MetricSeries

from conftest import DD, T0

NOW = datetime.fromtimestamp(T0, UTC)


def _monitor_id(dd: DD, name: str) -> int:
    return int(next(m["id"] for m in dd.raw("GET", "/api/v1/monitor").json() if m["name"] == name))


def _downtime_body(monitor_id: int, minutes: int = 10) -> DowntimeCreateRequest:
    return DowntimeCreateRequest(
        data=DowntimeCreateRequestData(
            type=DowntimeResourceType.DOWNTIME,
            attributes=DowntimeCreateRequestAttributes(
                scope="env:prod",
                message="deploying",
                monitor_identifier=DowntimeMonitorIdentifierId(monitor_id=monitor_id),
                schedule=DowntimeScheduleOneTimeCreateUpdateRequest(
                    start=None, end=NOW + timedelta(minutes=minutes)
                ),
            ),
        )
    )


def test_downtimes__create_get_list_update_cancel(dd: DD, schema: Any) -> None:
    monitor_id = _monitor_id(dd, "orders p99 latency")
    with dd.client() as client:
        api = DowntimesApi(client)
        made = api.create_downtime(body=_downtime_body(monitor_id)).data
        assert str(made.attributes.status) == "active"
        assert made.attributes.monitor_identifier.monitor_id == monitor_id
        got = api.get_downtime(made.id).data
        assert got.attributes.message == "deploying"
        assert [d.id for d in api.list_downtimes(current_only=True).data] == [made.id]
        updated = api.update_downtime(
            made.id,
            body=DowntimeUpdateRequest(
                data=DowntimeUpdateRequestData(
                    id=made.id,
                    type=DowntimeResourceType.DOWNTIME,
                    attributes=DowntimeUpdateRequestAttributes(message="still deploying"),
                )
            ),
        ).data
        assert updated.attributes.message == "still deploying"
        api.cancel_downtime(made.id)
        assert str(api.get_downtime(made.id).data.attributes.status) == "canceled"
        assert api.list_downtimes(current_only=True).data == []
        with pytest.raises(NotFoundException):
            api.get_downtime("00000000-0000-0000-0000-000000000000")
    body = dd.raw("GET", "/api/v2/downtime").json()
    schema("v2", "ListDowntimesResponse", body)
    matches = dd.raw("GET", f"/api/v2/monitor/{monitor_id}/downtime_matches").json()
    assert matches["meta"]["page"]["total_filtered_count"] == 0


def test_downtimes__bad_bodies_get_400(dd: DD) -> None:
    base = {
        "data": {"type": "downtime", "attributes": {"scope": "*", "monitor_identifier": {"monitor_id": 1}}}
    }
    assert dd.raw("POST", "/api/v2/downtime", json=base).status_code == 400
    no_scope = {"data": {"type": "downtime", "attributes": {"monitor_identifier": {"monitor_tags": ["*"]}}}}
    assert dd.raw("POST", "/api/v2/downtime", json=no_scope).json() == {
        "errors": ["Invalid request: scope is required"]
    }
    backwards = {
        "data": {
            "type": "downtime",
            "attributes": {
                "scope": "*",
                "monitor_identifier": {"monitor_tags": ["*"]},
                "schedule": {"start": "2026-03-02T10:00:00Z", "end": "2026-03-02T09:30:00Z"},
            },
        }
    }
    assert dd.raw("POST", "/api/v2/downtime", json=backwards).status_code == 400


def test_events_v1__post_list_get(dd: DD, schema: Any) -> None:
    with dd.client() as client:
        api = EventsV1(client)
        posted = api.create_event(
            body=EventCreateRequest(title="Rollback started", text="v41", tags=["service:orders"])
        )
        assert posted.status == "ok" and posted.event.title == "Rollback started"
        listed = api.list_events(start=int(T0) - 3600, end=int(T0) + 3600)
        titles = [e.title for e in listed.events]
        assert titles[:2] == ["Rollback started", "Deployed orders v42"]
        assert api.get_event(posted.event.id).event.text == "v41"
    body = dd.raw("GET", "/api/v1/events", params={"start": int(T0) - 3600, "end": int(T0) + 3600}).json()
    schema("v1", "EventListResponse", body)
    assert dd.raw("GET", "/api/v1/events").status_code == 400


def test_events_v2__list_and_search_with_query_and_cursor(dd: DD, schema: Any) -> None:
    for i in range(3):
        dd.raw("POST", "/api/v1/events", json={"title": f"deploy {i}", "text": "ok", "tags": ["service:web"]})
    with dd.client() as client:
        api = EventsV2(client)
        found = api.list_events(filter_query="service:web", filter_from="now-1h", page_limit=2)
        assert [e.attributes.attributes.title for e in found.data] == ["deploy 2", "deploy 1"]
        after = found.meta.page.after
        rest = api.list_events(
            filter_query="service:web", filter_from="now-1h", page_limit=2, page_cursor=after
        )
        assert [e.attributes.attributes.title for e in rest.data] == ["deploy 0"]
    body = dd.raw(
        "POST", "/api/v2/events/search", json={"filter": {"query": "Deployed", "from": "now-1d"}}
    ).json()
    schema("v2", "EventsListResponse", body)
    assert [e["attributes"]["attributes"]["title"] for e in body["data"]] == ["Deployed orders v42"]


def _logs(dd: DD, query: str, **kwargs: Any) -> list[str]:
    with dd.client() as client:
        answer = LogsApi(client).list_logs(
            body=LogsListRequest(
                filter=LogsQueryFilter(query=query, _from=kwargs.pop("_from", "now-1d"), to="now"),
                sort=kwargs.pop("sort", LogsSort.TIMESTAMP_ASCENDING),
                page=LogsListRequestPage(limit=kwargs.pop("limit", 50)),
            )
        )
    return [log.attributes.message for log in answer.data]


def test_logs_search__query_syntax_through_the_sdk(dd: DD) -> None:
    assert _logs(dd, "service:orders status:error") == [
        "disk almost full",
        "upstream timeout calling payments",
    ]
    assert _logs(dd, "@http.status_code:5*") == ["upstream timeout calling payments", "retrying charge"]
    assert _logs(dd, "@http.status_code:[500 TO 503]") == ["retrying charge"]
    assert _logs(dd, '"order 17"') == ["order 17 created"]
    assert _logs(dd, "host:web-* -status:info") == ["upstream timeout calling payments"]
    assert _logs(dd, "(service:payments OR host:db-1) AND NOT timeout") == [
        "disk almost full",
        "retrying charge",
    ]
    assert _logs(dd, "@duration:>3000 env:prod") == ["upstream timeout calling payments"]
    assert _logs(dd, "service:orders", _from="now-1h") == [
        "upstream timeout calling payments",
        "order 17 created",
    ]
    assert _logs(dd, "*", sort=LogsSort.TIMESTAMP_DESCENDING, limit=1) == ["retrying charge"]


def test_logs_list__cursor_pages_and_links(dd: DD, schema: Any) -> None:
    first = dd.raw("GET", "/api/v2/logs/events", params={"filter[from]": "now-1d", "page[limit]": 3}).json()
    schema("v2", "LogsListResponse", first)
    assert len(first["data"]) == 3 and first["links"]["next"].startswith(dd.url)
    cursor = first["meta"]["page"]["after"]
    second = dd.raw(
        "GET",
        "/api/v2/logs/events",
        params={"filter[from]": "now-1d", "page[limit]": 3, "page[cursor]": cursor},
    ).json()
    assert [d["attributes"]["message"] for d in second["data"]] == ["disk almost full"]
    last = dd.raw(
        "GET",
        "/api/v2/logs/events",
        params={"filter[from]": "now-1d", "page[limit]": 3, "page[cursor]": second["meta"]["page"]["after"]},
    ).json()
    assert last["data"] == [] and "links" not in last, (
        "a short page has a cursor; the empty page after it has none"
    )
    with dd.client() as client:
        pages = list(
            LogsApi(client).list_logs_get_with_pagination(filter_from=NOW - timedelta(days=1), page_limit=2)
        )
    assert len(pages) == 4


def test_logs_search__bad_query_and_limit_get_400(dd: DD) -> None:
    bad = dd.raw("POST", "/api/v2/logs/events/search", json={"filter": {"query": "service:(orders"}})
    assert bad.status_code == 400 and bad.json()["errors"][0].startswith("Invalid query")
    assert dd.raw("POST", "/api/v2/logs/events/search", json={"page": {"limit": 5000}}).status_code == 400


def test_logs_intake__submitted_lines_are_searchable(dd: DD) -> None:
    answer = dd.raw(
        "POST",
        "/api/v2/logs",
        json=[
            {
                "service": "web",
                "message": "hello from intake",
                "ddtags": "env:prod",
                "hostname": "web-9",
                "status": "warn",
            }
        ],
    )
    assert answer.status_code == 202
    assert _logs(dd, "service:web host:web-9 status:warn") == ["hello from intake"]


def test_metrics__query_baseline_and_submitted_points(dd: DD, schema: Any) -> None:
    with dd.client() as client:
        query = MetricsV1(client).query_metrics(
            _from=int(T0) - 600, to=int(T0), query="avg:orders.latency.p99{*}"
        )
        points = query.series[0].pointlist
        assert len(points) == 10 and all(115 <= p.value[1] <= 125 for p in points)
        MetricsV2(client).submit_metrics(
            body=MetricPayload(
                series=[
                    MetricSeries(
                        metric="checkout.errors",
                        type=MetricIntakeType.GAUGE,
                        points=[MetricPoint(timestamp=int(T0) - 30, value=7.0)],
                    )
                ]
            )
        )
        later = MetricsV1(client).query_metrics(
            _from=int(T0) - 120, to=int(T0) + 60, query="sum:checkout.errors{*}"
        )
        assert [p.value[1] for p in later.series[0].pointlist] == [7.0]
    body = dd.raw(
        "GET",
        "/api/v1/query",
        params={"from": int(T0) - 600, "to": int(T0), "query": "avg:orders.latency.p99{*}"},
    ).json()
    schema("v1", "MetricsQueryResponse", body)
    assert (
        dd.raw("GET", "/api/v1/query", params={"from": 1, "to": 2, "query": "nonsense("}).status_code == 400
    )


def test_dashboards__list_and_get(dd: DD, schema: Any) -> None:
    with dd.client() as client:
        api = DashboardsApi(client)
        listed = api.list_dashboards().dashboards
        assert [d.title for d in listed] == ["Orders overview"]
        board = api.get_dashboard(listed[0].id)
        assert board.title == "Orders overview" and len(board.widgets) == 1
        with pytest.raises(ApiException) as info:
            api.get_dashboard("abc-def-ghi")
        assert info.value.status == 404
    schema("v1", "DashboardSummary", dd.raw("GET", "/api/v1/dashboard").json())
    schema("v1", "Dashboard", dd.raw("GET", f"/api/v1/dashboard/{listed[0].id}").json())
