"""``GET /api/v1/query`` reads Datadog's metric expressions (issue 27): a bare metric, group-by
(a series per group with its scope, tag_set and expression), and arithmetic between
metrics and numbers; a metric monitor evaluates the same expressions."""

from __future__ import annotations

from typing import Any

from datadog_api_client.v1.api.metrics_api import MetricsApi as MetricsV1
from datadog_api_client.v1.api.monitors_api import MonitorsApi
from datadog_api_client.v1.model.monitor import Monitor
from datadog_api_client.v1.model.monitor_type import MonitorType
from datadog_api_client.v2.api.metrics_api import MetricsApi as MetricsV2
from datadog_api_client.v2.model.metric_intake_type import MetricIntakeType
from datadog_api_client.v2.model.metric_payload import MetricPayload
from datadog_api_client.v2.model.metric_point import MetricPoint
from datadog_api_client.v2.model.metric_series import MetricSeries

from conftest import DD, T0


def _submit(dd: DD, metric: str, value: float, tags: list[str], at: float = T0 - 90) -> None:
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
                ]
            )
        )


def _query(dd: DD, query: str) -> Any:
    with dd.client() as client:
        return MetricsV1(client).query_metrics(_from=int(T0) - 300, to=int(T0), query=query)


def test_query__a_bare_metric_reads_as_avg_with_aggr_null(dd: DD, schema: Any) -> None:
    answer = _query(dd, "orders.latency.p99{*}")
    assert answer.status == "ok" and answer.query == "orders.latency.p99{*}"
    assert answer.series[0].metric == "orders.latency.p99" and len(answer.series[0].pointlist) == 5
    raw = dd.raw(
        "GET",
        "/api/v1/query",
        params={"from": int(T0) - 300, "to": int(T0), "query": "orders.latency.p99{*}"},
    ).json()
    assert raw["series"][0]["aggr"] is None
    schema("v1", "MetricsQueryResponse", raw)


def test_query__group_by_gives_a_series_per_group(dd: DD, schema: Any) -> None:
    _submit(dd, "web.requests", 10.0, ["env:prod", "host:web-1"])
    _submit(dd, "web.requests", 30.0, ["env:prod", "host:web-2"])
    _submit(dd, "web.requests", 99.0, ["env:dev", "host:dev-1"])
    answer = _query(dd, "sum:web.requests{env:prod} by {host}")
    series = {s.scope: s for s in answer.series}
    assert set(series) == {"env:prod,host:web-1", "env:prod,host:web-2"}
    assert series["env:prod,host:web-1"].tag_set == ["host:web-1"]
    assert series["env:prod,host:web-1"].expression == "sum:web.requests{env:prod,host:web-1}"
    assert [p.value[1] for p in series["env:prod,host:web-2"].pointlist] == [30.0]
    raw = dd.raw(
        "GET",
        "/api/v1/query",
        params={"from": int(T0) - 300, "to": int(T0), "query": "sum:web.requests{env:prod} by {host}"},
    ).json()
    assert raw["group_by"] == ["host"]
    schema("v1", "MetricsQueryResponse", raw)


def test_query__arithmetic_between_metrics_and_numbers(dd: DD) -> None:
    _submit(dd, "app.errors", 5.0, ["env:prod"])
    _submit(dd, "app.hits", 200.0, ["env:prod"])
    added = _query(dd, "sum:app.errors{*} + sum:app.hits{*}")
    assert [p.value[1] for p in added.series[0].pointlist] == [205.0]
    ratio = _query(dd, "sum:app.errors{*} / sum:app.hits{*} * 100")
    assert [p.value[1] for p in ratio.series[0].pointlist] == [2.5]
    assert ratio.series[0].expression == "sum:app.errors{*} / sum:app.hits{*} * 100"
    grouped = _query(dd, "(sum:app.errors{*} by {env} + 1) * 2")
    assert [(s.tag_set, [p.value[1] for p in s.pointlist]) for s in grouped.series] == [
        (["env:prod"], [12.0])
    ]


def test_monitor__an_arithmetic_query_evaluates(dd: DD) -> None:
    _submit(dd, "app.errors", 5.0, ["env:prod"], at=T0 - 30)
    _submit(dd, "app.hits", 50.0, ["env:prod"], at=T0 - 30)
    with dd.client() as client:
        made = MonitorsApi(client).create_monitor(
            body=Monitor(
                name="error rate",
                type=MonitorType.QUERY_ALERT,
                query="sum(last_5m):sum:app.errors{*} / sum:app.hits{*} * 100 > 5",
            )
        )
        assert str(MonitorsApi(client).get_monitor(made.id).overall_state) == "Alert"


def test_query__nesting_past_the_bound_is_datadogs_400_not_a_crash(dd: DD) -> None:
    deep = "(" * 2000 + "avg:app.hits{*}" + ")" * 2000
    answer = dd.raw("GET", "/api/v1/query", params={"from": int(T0) - 300, "to": int(T0), "query": deep})
    assert answer.status_code == 400 and answer.json()["errors"][0].startswith("Error parsing query")
    made = dd.raw(
        "POST",
        "/api/v1/monitor",
        json={"type": "query alert", "name": "deep", "query": f"avg(last_5m):{deep} > 1"},
    )
    assert (
        made.status_code == 200 and dd.raw("GET", f"/api/v1/monitor/{made.json()['id']}").status_code == 200
    )
