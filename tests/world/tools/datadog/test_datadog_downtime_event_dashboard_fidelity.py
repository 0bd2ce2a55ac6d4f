"""Gaps datadog-api-client's recorded cassettes showed in downtimes, events, dashboards and
active metrics, each pinned through the official client: v2 downtimes' ``included`` and
recurring schedules, Datadog's refusals (a scope without ``key:value``, an unknown field, an
event too far in the past), v1 events' ``handle``/``related_event_id``, dashboard delete and
restore with ``deleted_at``, and ``GET /api/v1/metrics``."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from datadog_api_client.exceptions import ApiException, NotFoundException
from datadog_api_client.v1.api.dashboards_api import DashboardsApi
from datadog_api_client.v1.api.events_api import EventsApi
from datadog_api_client.v1.api.metrics_api import MetricsApi
from datadog_api_client.v1.model.dashboard import Dashboard
from datadog_api_client.v1.model.dashboard_bulk_action_data import DashboardBulkActionData
from datadog_api_client.v1.model.dashboard_bulk_action_data_list import DashboardBulkActionDataList
from datadog_api_client.v1.model.dashboard_bulk_delete_request import DashboardBulkDeleteRequest
from datadog_api_client.v1.model.dashboard_layout_type import DashboardLayoutType
from datadog_api_client.v1.model.dashboard_resource_type import DashboardResourceType
from datadog_api_client.v1.model.dashboard_restore_request import DashboardRestoreRequest
from datadog_api_client.v1.model.event_create_request import EventCreateRequest
from datadog_api_client.v1.model.note_widget_definition import NoteWidgetDefinition
from datadog_api_client.v1.model.widget import Widget
from datadog_api_client.v2.api.downtimes_api import DowntimesApi
from datadog_api_client.v2.model.downtime_create_request import DowntimeCreateRequest
from datadog_api_client.v2.model.downtime_create_request_attributes import DowntimeCreateRequestAttributes
from datadog_api_client.v2.model.downtime_create_request_data import DowntimeCreateRequestData
from datadog_api_client.v2.model.downtime_monitor_identifier_id import DowntimeMonitorIdentifierId
from datadog_api_client.v2.model.downtime_monitor_identifier_tags import DowntimeMonitorIdentifierTags
from datadog_api_client.v2.model.downtime_resource_type import DowntimeResourceType
from datadog_api_client.v2.model.downtime_schedule_recurrence_create_update_request import (
    DowntimeScheduleRecurrenceCreateUpdateRequest,
)
from datadog_api_client.v2.model.downtime_schedule_recurrences_create_request import (
    DowntimeScheduleRecurrencesCreateRequest,
)
from tests.world.tools.datadog.conftest import DD, T0


def _monitor_id(dd: DD, name: str) -> int:
    return int(next(m["id"] for m in dd.raw("GET", "/api/v1/monitor").json() if m["name"] == name))


def _downtime(scope: str, identifier: Any, schedule: Any = None) -> DowntimeCreateRequest:
    attributes = DowntimeCreateRequestAttributes(scope=scope, monitor_identifier=identifier)
    if schedule is not None:
        attributes.schedule = schedule
    return DowntimeCreateRequest(
        data=DowntimeCreateRequestData(type=DowntimeResourceType.DOWNTIME, attributes=attributes)
    )


def test_a_created_downtime_includes_its_creator_and_with_include_monitor_its_monitor(
    dd: DD, schema: Any
) -> None:
    monitor_id = _monitor_id(dd, "orders p99 latency")
    with dd.client() as client:
        api = DowntimesApi(client)
        made = api.create_downtime(
            body=_downtime("env:prod", DowntimeMonitorIdentifierId(monitor_id=monitor_id))
        )
        creator = made.data.relationships.created_by.data
        assert [(str(i.type), i.id) for i in made.included][0] == ("users", creator.id)
        assert made.included[0].attributes.handle == "ops@acme.test"
        got = api.get_downtime(made.data.id, include="created_by,monitor")
        kinds = {str(i.type): i for i in got.included}
        assert (
            kinds["monitors"].id == monitor_id and kinds["monitors"].attributes.name == "orders p99 latency"
        )
        listed = api.list_downtimes(include="monitor")
        assert [i.attributes.name for i in listed.included] == ["orders p99 latency"]
    plain = dd.raw("GET", f"/api/v2/downtime/{made.data.id}").json()
    assert "included" not in plain
    schema(
        "v2", "DowntimeResponse", dd.raw("GET", f"/api/v2/downtime/{made.data.id}?include=created_by").json()
    )


def test_a_weekly_downtime_is_active_only_within_its_occurrences(dd: DD) -> None:
    # The trial starts Monday 2026-03-02 09:00 UTC; the downtime runs 08:00-10:00 on Mondays.
    schedule = DowntimeScheduleRecurrencesCreateRequest(
        timezone="UTC",
        recurrences=[
            DowntimeScheduleRecurrenceCreateUpdateRequest(
                rrule="FREQ=WEEKLY;BYDAY=MO", duration="2h", start="2026-02-23T08:00"
            )
        ],
    )
    with dd.client() as client:
        api = DowntimesApi(client)
        made = api.create_downtime(
            body=_downtime("env:prod", DowntimeMonitorIdentifierTags(monitor_tags=["*"]), schedule)
        ).data
        attributes = made.attributes
        assert str(attributes.status) == "active"
        assert attributes.schedule.recurrences[0].rrule == "FREQ=WEEKLY;BYDAY=MO"
        assert attributes.schedule.current_downtime.start == datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
        assert attributes.schedule.current_downtime.end == datetime(2026, 3, 2, 10, 0, tzinfo=UTC)
        assert [d.id for d in api.list_downtimes(current_only=True).data] == [made.id]
        from datadog_api_client.v2.model.downtime_schedule_recurrences_update_request import (
            DowntimeScheduleRecurrencesUpdateRequest,
        )
        from datadog_api_client.v2.model.downtime_update_request import DowntimeUpdateRequest
        from datadog_api_client.v2.model.downtime_update_request_attributes import (
            DowntimeUpdateRequestAttributes,
        )
        from datadog_api_client.v2.model.downtime_update_request_data import DowntimeUpdateRequestData

        # Moved to Tuesdays: not active on this Monday any more, scheduled for the next occurrence.
        moved = api.update_downtime(
            made.id,
            body=DowntimeUpdateRequest(
                data=DowntimeUpdateRequestData(
                    id=made.id,
                    type=DowntimeResourceType.DOWNTIME,
                    attributes=DowntimeUpdateRequestAttributes(
                        schedule=DowntimeScheduleRecurrencesUpdateRequest(
                            recurrences=[
                                DowntimeScheduleRecurrenceCreateUpdateRequest(
                                    rrule="FREQ=WEEKLY;BYDAY=TU", duration="2h", start="2026-02-24T08:00"
                                )
                            ]
                        )
                    ),
                )
            ),
        ).data
        assert str(moved.attributes.status) == "scheduled"
        assert moved.attributes.schedule.current_downtime.start == datetime(2026, 3, 3, 8, 0, tzinfo=UTC)
    later = _downtime(
        "env:prod",
        DowntimeMonitorIdentifierTags(monitor_tags=["*"]),
        DowntimeScheduleRecurrencesCreateRequest(
            recurrences=[
                DowntimeScheduleRecurrenceCreateUpdateRequest(
                    rrule="FREQ=DAILY", duration="1h", start="2026-03-02T12:00"
                )
            ]
        ),
    )
    body = dd.raw("POST", "/api/v2/downtime", json=later.to_dict()).json()["data"]["attributes"]
    assert body["status"] == "scheduled"
    assert body["schedule"]["current_downtime"]["start"].startswith("2026-03-02T12:00:00")


def test_downtime_refusals_read_as_datadogs(dd: DD) -> None:
    bad_scope = {
        "data": {
            "type": "downtime",
            "attributes": {
                "scope": "BAD_SCOPE_MISSING_KEY_VALUE_FORMAT",
                "monitor_identifier": {"monitor_tags": ["cat:hat"]},
                "schedule": {"start": None},
            },
        }
    }
    answer = dd.raw("POST", "/api/v2/downtime", json=bad_scope)
    assert (answer.status_code, answer.json()) == (400, {"errors": ["All values must have a key"]})
    good = {
        "data": {
            "type": "downtime",
            "attributes": {
                "scope": 'env:prod AND host:"web 1"',
                "monitor_identifier": {"monitor_tags": ["cat:hat"]},
            },
        }
    }
    made = dd.raw("POST", "/api/v2/downtime", json=good).json()["data"]
    unknown = {"data": {"type": "downtime", "id": made["id"], "attributes": {"invalid_field": "sophon"}}}
    answer = dd.raw("PATCH", f"/api/v2/downtime/{made['id']}", json=unknown)
    assert answer.json() == {
        "errors": ["Additional properties are not allowed ('invalid_field' was unexpected)"]
    }
    assert dd.raw("GET", "/api/v2/downtime/INVALID_UUID_LENGTH").json() == {
        "errors": ["Invalid URL param: downtime_id must be an uuid"]
    }
    missing = "00000000-0000-1234-0000-000000000000"
    assert dd.raw("GET", f"/api/v2/downtime/{missing}").json() == {"errors": ["Downtime not found"]}
    assert dd.raw("DELETE", f"/api/v2/downtime/{missing}").json() == {
        "errors": [f"Downtime {missing} not found"]
    }
    bad_rule = {
        "data": {
            "type": "downtime",
            "attributes": {
                "scope": "env:prod",
                "monitor_identifier": {"monitor_tags": ["*"]},
                "schedule": {"recurrences": [{"rrule": "FREQ=WEEKLY", "duration": "forever"}]},
            },
        }
    }
    assert dd.raw("POST", "/api/v2/downtime", json=bad_rule).status_code == 400
    # Occurrences are walked from the start: a rule that would hold the server is refused.
    for rule, start in (("FREQ=SECONDLY", "2026-03-01T00:00"), ("FREQ=DAILY", "1900-01-01T00:00")):
        costly = {
            "data": {
                "type": "downtime",
                "attributes": {
                    "scope": "env:prod",
                    "monitor_identifier": {"monitor_tags": ["*"]},
                    "schedule": {"recurrences": [{"rrule": rule, "duration": "1h", "start": start}]},
                },
            }
        }
        answer = dd.raw("POST", "/api/v2/downtime", json=costly)
        assert answer.status_code == 400 and answer.json()["errors"][0].startswith(
            ("Invalid rrule", "Invalid start")
        )


def test_v1_events_carry_handle_and_related_event_id_and_refuse_1970(dd: DD) -> None:
    with dd.client() as client:
        api = EventsApi(client)
        first = api.create_event(body=EventCreateRequest(title="deploy", text="v1")).event
        assert first.handle is None and first.related_event_id is None
        child = api.create_event(
            body=EventCreateRequest(title="deploy done", text="ok", related_event_id=first.id)
        ).event
        assert child.related_event_id == first.id
        assert api.get_event(child.id).event.related_event_id == first.id
        with pytest.raises(ApiException) as refused:
            api.create_event(body=EventCreateRequest(title="old", text="x", date_happened=1))
        assert refused.value.status == 400
    assert dd.raw(
        "POST", "/api/v1/events", json={"title": "old", "text": "x", "date_happened": 1}
    ).json() == {"errors": ["Event too far in the past"]}
    # The event's url leads back to the replica, where it answers.
    url = first.url
    assert url.startswith(dd.url)
    assert (
        httpx.get(
            url, headers={"DD-API-KEY": dd.api_key, "DD-APPLICATION-KEY": dd.app_key}, timeout=10
        ).json()["event"]["id"]
        == first.id
    )


def _dashboard(title: str) -> Dashboard:
    return Dashboard(
        title=title,
        layout_type=DashboardLayoutType.ORDERED,
        widgets=[Widget(definition=NoteWidgetDefinition(content="hello", type="note"))],
    )


def test_dashboards_are_created_deleted_listed_as_deleted_and_restored(dd: DD, schema: Any) -> None:
    with dd.client() as client:
        api = DashboardsApi(client)
        made = api.create_dashboard(body=_dashboard("Checkout"))
        assert made.widgets[0].id is not None and made.url.startswith(f"/dashboard/{made.id}/checkout")
        gone = api.create_dashboard(body=_dashboard("Old"))
        assert api.delete_dashboard(made.id).deleted_dashboard_id == made.id
        with pytest.raises(NotFoundException):
            api.delete_dashboard(made.id)
        with pytest.raises(NotFoundException):
            api.get_dashboard(made.id)
        api.delete_dashboards(
            body=DashboardBulkDeleteRequest(
                data=DashboardBulkActionDataList(
                    [DashboardBulkActionData(id=gone.id, type=DashboardResourceType.DASHBOARD)]
                )
            )
        )
        live = [d.id for d in api.list_dashboards().dashboards]
        assert made.id not in live and gone.id not in live
        deleted = api.list_dashboards(filter_deleted=True).dashboards
        assert {d.id for d in deleted} == {made.id, gone.id} and all(
            d.deleted_at is not None for d in deleted
        )
        api.restore_dashboards(
            body=DashboardRestoreRequest(
                data=DashboardBulkActionDataList(
                    [DashboardBulkActionData(id=made.id, type=DashboardResourceType.DASHBOARD)]
                )
            )
        )
        assert api.get_dashboard(made.id).title == "Checkout"
        renamed = api.update_dashboard(made.id, body=_dashboard("Checkout v2"))
        assert renamed.title == "Checkout v2" and renamed.url.startswith(f"/dashboard/{made.id}/checkout-v2")
        assert made.id in [d.id for d in api.list_dashboards().dashboards]
    listed = dd.raw("GET", "/api/v1/dashboard").json()
    schema("v1", "DashboardSummary", listed)
    assert all("deleted_at" in d and d["deleted_at"] is None for d in listed["dashboards"])
    assert dd.raw("DELETE", "/api/v1/dashboard/abc-def-ghi").json() == {
        "errors": ["Dashboard with ID abc-def-ghi not found"]
    }
    assert dd.raw(
        "POST", "/api/v1/dashboard", json={**_dashboard("x").to_dict(), "tags": ["tm:foobar"]}
    ).json() == {"errors": ["Invalid tag format. Valid tag keys are: team."]}


def test_active_metrics_lists_metrics_with_points_since_from(dd: DD) -> None:
    dd.raw(
        "POST",
        "/api/v2/series",
        json={
            "series": [
                {
                    "metric": "checkout.requests",
                    "points": [{"timestamp": int(T0) - 60, "value": 3}],
                    "tags": ["env:prod"],
                    "resources": [{"type": "host", "name": "web-1"}],
                }
            ]
        },
    )
    with dd.client() as client:
        api = MetricsApi(client)
        found = api.list_active_metrics(_from=int(T0) - 3600)
        assert found.metrics == ["checkout.requests", "orders.latency.p99", "payments.errors"]
        assert found._from == str(int(T0) - 3600)
        assert api.list_active_metrics(_from=int(T0) - 3600, host="web-1").metrics == ["checkout.requests"]
        assert api.list_active_metrics(_from=int(T0) - 3600, tag_filter="env:staging").metrics == []
        # payments.errors' last point is 2 minutes before the start
        assert "payments.errors" not in api.list_active_metrics(_from=int(T0) - 30).metrics
    assert dd.raw("GET", "/api/v1/metrics").status_code == 400


def test_v1_recurring_downtimes_are_stored_reported_and_active_within_occurrences(dd: DD) -> None:
    from datadog_api_client.v1.api.downtimes_api import DowntimesApi as DowntimesV1
    from datadog_api_client.v1.model.downtime import Downtime as DowntimeV1
    from datadog_api_client.v1.model.downtime_recurrence import DowntimeRecurrence

    monday_8 = int(T0) - 3600  # the trial starts Monday 09:00 UTC
    weekdays = DowntimeRecurrence(type="weeks", period=1, week_days=["Mon", "Tue"], until_occurrences=4)
    with dd.client() as client:
        api = DowntimesV1(client)
        made = api.create_downtime(
            body=DowntimeV1(
                scope=["env:prod"],
                start=monday_8,
                end=monday_8 + 7200,
                timezone="UTC",
                recurrence=weekdays,
                message="maintenance",
            )
        )
        assert made.active is True and made.recurrence.week_days == ["Mon", "Tue"]
        assert made.recurrence.until_occurrences == 4 and made.scope == ["env:prod"]
        assert api.get_downtime(made.id).message == "maintenance"
        updated = api.update_downtime(
            made.id, body=DowntimeV1(message="maintenance, longer", end=monday_8 + 10800)
        )
        assert updated.message == "maintenance, longer" and updated.updater_id is not None
        assert updated.end == monday_8 + 10800 and updated.recurrence.until_occurrences == 4
        listed = api.list_downtimes(current_only=True, with_creator=True)
        assert [d.id for d in listed] == [made.id] and listed[0].creator["email"] == "ops@acme.test"
        # The same downtime through v2: an RRULE recurrence, active now.
        v2 = dd.raw("GET", f"/api/v2/downtime/{made.uuid}").json()["data"]["attributes"]
        assert v2["schedule"]["recurrences"][0]["rrule"] == "FREQ=WEEKLY;INTERVAL=1;BYDAY=MO,TU;COUNT=4"
        assert v2["status"] == "active"
        tonight = api.create_downtime(
            body=DowntimeV1(
                scope=["env:prod"],
                start=int(T0) + 36000,
                end=int(T0) + 39600,
                recurrence=DowntimeRecurrence(type="days", period=1),
            )
        )
        assert tonight.active is False and tonight.status == "scheduled"
        orders = _monitor_id(dd, "orders p99 latency")
        # monitor_tags ["*"]: it silences every monitor
        assert [d.id for d in api.list_monitor_downtimes(orders)] == [made.id]
        assert api.cancel_downtimes_by_scope(body={"scope": "env:prod"}).cancelled_ids == [
            made.id,
            tonight.id,
        ]
        api.cancel_downtime(made.id)  # already canceled: still 204
    bad = {"scope": ["*"], "start": monday_8, "end": monday_8 + 60}
    for recurrence, error in (
        ({"type": "hours", "period": 1}, "Invalid recurrence type"),
        (
            {"type": "weeks", "period": 1, "week_days": ["mon"]},
            "Invalid set of days in week_days. Be sure that the first letter is capitalized.",
        ),
        (
            {"type": "weeks", "period": 1, "until_date": monday_8 + 86400, "until_occurrences": 3},
            "You must provide only provide one of (until_occurrences, until_date)",
        ),
    ):
        assert dd.raw("POST", "/api/v1/downtime", json={**bad, "recurrence": recurrence}).json() == {
            "errors": [error]
        }
    assert dd.raw("POST", "/api/v1/downtime", json={"monitor_tags": ["a"]}).json() == {
        "errors": ["Invalid scope parameter"]
    }
    assert dd.raw("GET", "/api/v1/downtime/0").json() == {"errors": ["Downtime not found"]}
    assert dd.raw("DELETE", "/api/v1/downtime/0").json() == {"errors": ["Downtime 0 not found"]}
    assert dd.raw("POST", "/api/v1/downtime/cancel/by_scope", json={"scope": "nope:x"}).json() == {
        "errors": ["No downtimes found"]
    }
