"""Monitors as datadog-api-client's own recorded scenarios see them (issue 27): the fields
Datadog answers, the queries it accepts (calendar windows, formulas over variables, assets,
every monitor type) and refuses (with its exact texts), search's priority and mute end,
and multi-alert monitors whose groups each have a state."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from datadog_api_client.exceptions import ApiException
from datadog_api_client.v1.api.monitors_api import MonitorsApi
from datadog_api_client.v1.model.monitor import Monitor
from datadog_api_client.v1.model.monitor_asset import MonitorAsset
from datadog_api_client.v1.model.monitor_asset_category import MonitorAssetCategory
from datadog_api_client.v1.model.monitor_asset_resource_type import MonitorAssetResourceType
from datadog_api_client.v1.model.monitor_formula_and_function_event_aggregation import (
    MonitorFormulaAndFunctionEventAggregation,
)
from datadog_api_client.v1.model.monitor_formula_and_function_event_query_definition import (
    MonitorFormulaAndFunctionEventQueryDefinition,
)
from datadog_api_client.v1.model.monitor_formula_and_function_event_query_definition_compute import (
    MonitorFormulaAndFunctionEventQueryDefinitionCompute,
)
from datadog_api_client.v1.model.monitor_formula_and_function_event_query_definition_search import (
    MonitorFormulaAndFunctionEventQueryDefinitionSearch,
)
from datadog_api_client.v1.model.monitor_formula_and_function_events_data_source import (
    MonitorFormulaAndFunctionEventsDataSource,
)
from datadog_api_client.v1.model.monitor_options import MonitorOptions
from datadog_api_client.v1.model.monitor_thresholds import MonitorThresholds
from datadog_api_client.v1.model.monitor_type import MonitorType
from datadog_api_client.v1.model.monitor_update_request import MonitorUpdateRequest
from datadog_api_client.v2.api.downtimes_api import DowntimesApi
from datadog_api_client.v2.api.metrics_api import MetricsApi as MetricsV2
from datadog_api_client.v2.model.downtime_create_request import DowntimeCreateRequest
from datadog_api_client.v2.model.downtime_create_request_attributes import DowntimeCreateRequestAttributes
from datadog_api_client.v2.model.downtime_create_request_data import DowntimeCreateRequestData
from datadog_api_client.v2.model.downtime_monitor_identifier_id import DowntimeMonitorIdentifierId
from datadog_api_client.v2.model.downtime_resource_type import DowntimeResourceType
from datadog_api_client.v2.model.downtime_schedule_one_time_create_update_request import (
    DowntimeScheduleOneTimeCreateUpdateRequest,
)
from datadog_api_client.v2.model.metric_intake_type import MetricIntakeType
from datadog_api_client.v2.model.metric_payload import MetricPayload
from datadog_api_client.v2.model.metric_point import MetricPoint
from datadog_api_client.v2.model.metric_series import MetricSeries

from conftest import DD, T0

NOW = datetime.fromtimestamp(T0, UTC)
BAD_OPERATOR = "The value provided for parameter 'query' is invalid: invalid operator specified: "


def _errors(error: ApiException) -> list[str]:
    body = error.body if isinstance(error.body, dict) else json.loads(error.body)
    return list(body["errors"])


def _submit(dd: DD, metric: str, points: list[tuple[float, float, list[str]]]) -> None:
    with dd.client() as client:
        MetricsV2(client).submit_metrics(
            body=MetricPayload(
                series=[
                    MetricSeries(
                        metric=metric,
                        type=MetricIntakeType.GAUGE,
                        tags=tags,
                        points=[MetricPoint(timestamp=int(at), value=value)],
                    )
                    for at, value, tags in points
                ]
            )
        )


def test_create_monitor__answers_created_at_creator_id_restriction_policy_draft_status_and_assets(
    dd: DD,
) -> None:
    with dd.client() as client:
        made = MonitorsApi(client).create_monitor(
            body=Monitor(
                name="load this month",
                type=MonitorType.METRIC_ALERT,
                query="avg(current_1mo):avg:system.load.5{*} > 0.5",
                draft_status="draft",
                options=MonitorOptions(thresholds=MonitorThresholds(critical=0.5)),
                assets=[
                    MonitorAsset(
                        category=MonitorAssetCategory.RUNBOOK,
                        name="Monitor Runbook",
                        resource_key="12345",
                        resource_type=MonitorAssetResourceType.NOTEBOOK,
                        url="/notebooks/12345",
                    )
                ],
            )
        )
        assert made.query == "avg(current_1mo):avg:system.load.5{*} > 0.5"
        assert str(made.draft_status) == "draft"
        assert made.assets[0].url == "/notebooks/12345" and str(made.assets[0].category) == "runbook"
    raw = dd.raw("GET", f"/api/v1/monitor/{made.id}").json()
    assert raw["created_at"] == int(datetime.fromisoformat(raw["created"]).timestamp() * 1000)
    assert raw["restriction_policy"] is None and raw["creator"]["id"] > 0
    assert raw["assets"][0]["monitor_id"] == made.id
    assert raw["multi"] is False


def test_create_monitor__formula_over_variables_llm_observability_and_every_vendor_type(dd: DD) -> None:
    formula = 'formula("query1 / query2 * 100").last("15m") >= 0.8'

    def events(name: str, query: str) -> MonitorFormulaAndFunctionEventQueryDefinition:
        return MonitorFormulaAndFunctionEventQueryDefinition(
            name=name,
            data_source=MonitorFormulaAndFunctionEventsDataSource.CI_PIPELINES,
            search=MonitorFormulaAndFunctionEventQueryDefinitionSearch(query=query),
            indexes=["*"],
            compute=MonitorFormulaAndFunctionEventQueryDefinitionCompute(
                aggregation=MonitorFormulaAndFunctionEventAggregation.COUNT
            ),
            group_by=[],
        )

    with dd.client() as client:
        api = MonitorsApi(client)
        made = api.create_monitor(
            body=Monitor(
                name="pipelines failing",
                type=MonitorType.CI_PIPELINES_ALERT,
                query=formula,
                options=MonitorOptions(
                    thresholds=MonitorThresholds(critical=0.8),
                    variables=[events("query1", "@ci.status:error"), events("query2", "")],
                ),
            )
        )
        assert made.query == formula
        assert made.options.variables[0].name == "query1"
        assert str(made.options.variables[0].data_source) == "ci_pipelines"
        assert made.options.groupby_simple_monitor is False
        llm = api.create_monitor(
            body=Monitor(
                name="llm errors",
                type=MonitorType.LLM_OBSERVABILITY_ALERT,
                query='llm-observability("@status:error").rollup("count").last("5m") > 5',
            )
        )
        assert str(llm.type) == "llm-observability alert"
        grouped = api.create_monitor(
            body=Monitor(
                name="logs by source",
                type=MonitorType.LOG_ALERT,
                query='logs("service:foo AND type:error").index("main").rollup("count").by("source").last("5m") > 2',
            )
        )
        assert grouped.multi is True


@pytest.mark.parametrize("path", ["/api/v1/monitor", "/api/v1/monitor/validate"])
def test_create_and_validate__a_query_without_comparison_is_datadogs_400(dd: DD, path: str) -> None:
    with dd.client() as client:
        api = MonitorsApi(client)
        call = api.create_monitor if path == "/api/v1/monitor" else api.validate_monitor
        with pytest.raises(ApiException) as info:
            call(body=Monitor(type=MonitorType.LOG_ALERT, query="query"))
    assert info.value.status == 400 and _errors(info.value) == [BAD_OPERATOR]
    existing = dd.raw("GET", "/api/v1/monitor").json()[0]["id"]
    answer = dd.raw(
        "POST", f"/api/v1/monitor/{existing}/validate", json={"type": "log alert", "query": "query"}
    )
    assert answer.status_code == 400 and answer.json() == {"errors": [BAD_OPERATOR]}


def test_update_and_create__an_unknown_field_is_400(dd: DD) -> None:
    monitor_id = dd.raw("GET", "/api/v1/monitor").json()[0]["id"]
    answer = dd.raw("PUT", f"/api/v1/monitor/{monitor_id}", json={"name": "x", "colour": "red"})
    assert answer.status_code == 400 and answer.json() == {"errors": ["Invalid parameter(s): colour"]}
    with dd.client() as client:
        updated = MonitorsApi(client).update_monitor(monitor_id, body=MonitorUpdateRequest(name="renamed"))
    assert updated.name == "renamed"


def test_search__bad_status_and_group_states_are_datadogs_400s(dd: DD) -> None:
    with dd.client() as client:
        api = MonitorsApi(client)
        for call in (
            lambda: api.search_monitors(query="status:notastatus"),
            lambda: api.search_monitor_groups(query="status:notastatus"),
        ):
            with pytest.raises(ApiException) as info:
                call()
            assert _errors(info.value) == ["Query parsing error: 'notastatus' is not a valid monitor status"]
        with pytest.raises(ApiException) as info:
            api.list_monitors(group_states="notagroupstate")
        assert _errors(info.value) == ["Invalid group_state filters."]
        assert [m.name for m in api.search_monitors(query="status:alert").monitors] == ["disk full on db"]


def test_search__priority_and_muted_until_ts_and_matching_downtime_details(dd: DD) -> None:
    monitor = next(m for m in dd.raw("GET", "/api/v1/monitor").json() if m["name"] == "orders p99 latency")
    end = NOW + timedelta(minutes=30)
    with dd.client() as client:
        made = (
            DowntimesApi(client)
            .create_downtime(
                body=DowntimeCreateRequest(
                    data=DowntimeCreateRequestData(
                        type=DowntimeResourceType.DOWNTIME,
                        attributes=DowntimeCreateRequestAttributes(
                            scope="env:prod",
                            monitor_identifier=DowntimeMonitorIdentifierId(monitor_id=monitor["id"]),
                            schedule=DowntimeScheduleOneTimeCreateUpdateRequest(start=None, end=end),
                        ),
                    )
                )
            )
            .data
        )
        api = MonitorsApi(client)
        found = {m.name: m for m in api.search_monitors(query="").monitors}
        assert found["orders p99 latency"].priority == 2
        assert found["orders p99 latency"].to_dict()["muted_until_ts"] == int(end.timestamp())
        assert found["payments errors"].to_dict()["muted_until_ts"] is None
        got = api.get_monitor(monitor["id"], with_downtimes=True)
    assert made.id
    match = got.matching_downtimes[0]
    assert match.end == int(end.timestamp()) and match.scope == ["env:prod"]
    raw = dd.raw("GET", f"/api/v1/monitor/{monitor['id']}", params={"with_downtimes": "true"}).json()
    assert raw["matching_downtimes"][0]["active"] is True
    assert raw["matching_downtimes"][0]["monitor_id"] == monitor["id"]
    assert raw["options"]["silenced"] == {"env:prod": int(end.timestamp())}


def test_multi_alert__each_group_has_a_state_and_the_worst_decides(dd: DD, schema: Any) -> None:
    query = "avg(last_5m):avg:cpu.load{env:prod} by {host} > 90"
    with dd.client() as client:
        api = MonitorsApi(client)
        made = api.create_monitor(
            body=Monitor(
                name="cpu by host",
                type=MonitorType.METRIC_ALERT,
                query=query,
                options=MonitorOptions(thresholds=MonitorThresholds(critical=90.0, warning=70.0)),
            )
        )
        assert made.multi is True
        assert str(made.type) == "query alert", (
            "Datadog keeps a metric alert on a plain query as a query alert"
        )
        _submit(
            dd,
            "cpu.load",
            [
                (T0 - 60, 95.0, ["env:prod", "host:web-1"]),
                (T0 - 60, 75.0, ["env:prod", "host:web-2"]),
                (T0 - 60, 10.0, ["env:prod", "host:web-3"]),
                (T0 - 60, 99.0, ["env:dev", "host:dev-1"]),
            ],
        )
        got = api.get_monitor(made.id, group_states="all")
        assert str(got.overall_state) == "Alert"
        groups = {name: str(group.status) for name, group in got.state.groups.items()}
        assert groups == {"host:web-1": "Alert", "host:web-2": "Warn", "host:web-3": "OK"}
        assert (
            got.state.groups["host:web-1"].last_triggered_ts
            > 0
            == got.state.groups["host:web-3"].last_triggered_ts
        )
        only_alert = api.get_monitor(made.id, group_states="alert")
        assert list(only_alert.state.groups) == ["host:web-1"]
        found = api.search_monitor_groups(query="status:alert")
        assert [(g.group, g.monitor_name) for g in found.groups] == [
            ("*", "disk full on db"),
            ("host:web-1", "cpu by host"),
        ]
    schema(
        "v1", "Monitor", dd.raw("GET", f"/api/v1/monitor/{made.id}", params={"group_states": "all"}).json()
    )
    schema("v1", "MonitorGroupSearchResponse", dd.raw("GET", "/api/v1/monitor/groups/search").json())


def test_alert_notification__its_link_leads_back_to_the_replica(dd: DD) -> None:
    with dd.client() as client:
        made = MonitorsApi(client).create_monitor(
            body=Monitor(
                name="checkout errors",
                type=MonitorType.QUERY_ALERT,
                query="avg(last_5m):avg:checkout.errors{*} > 10",
            )
        )
        _submit(dd, "checkout.errors", [(T0 - 30, 50.0, [])])
        assert str(MonitorsApi(client).get_monitor(made.id).overall_state) == "Alert"
    alert = next(
        e for e in dd.events() if e["type"] == "monitor.alert" and e["payload"]["alert_id"] == str(made.id)
    )
    link = alert["payload"]["link"]
    assert link.startswith(dd.url) and "datadoghq" not in link
    followed = dd.raw("GET", link[len(dd.url) :])
    assert followed.status_code == 200 and followed.json()["event"]["title"] == "[Triggered] checkout errors"


def test_downtime_matches__an_unknown_monitor_is_named_in_the_404(dd: DD) -> None:
    with dd.client() as client, pytest.raises(ApiException) as info:
        DowntimesApi(client).list_monitor_downtimes(0)
    assert info.value.status == 404 and _errors(info.value) == ["Monitor with id 0 not found"]
