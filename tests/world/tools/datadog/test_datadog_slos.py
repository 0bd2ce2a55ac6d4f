"""The SLO family through datadog-api-client: create (metric, monitor, time-slice,
``sli_specification``), get, list with its filters and pages, update, delete, search, and
history computed from the trial's metric points and monitor states."""

from __future__ import annotations

from typing import Any

import pytest
from datadog_api_client.exceptions import ApiException, NotFoundException
from datadog_api_client.v1.api.service_level_objectives_api import ServiceLevelObjectivesApi
from datadog_api_client.v1.model.service_level_objective import ServiceLevelObjective
from datadog_api_client.v1.model.service_level_objective_query import ServiceLevelObjectiveQuery
from datadog_api_client.v1.model.service_level_objective_request import ServiceLevelObjectiveRequest
from datadog_api_client.v1.model.slo_threshold import SLOThreshold
from datadog_api_client.v1.model.slo_timeframe import SLOTimeframe
from datadog_api_client.v1.model.slo_type import SLOType
from tests.world.tools.datadog.conftest import DD, T0

HITS = ServiceLevelObjectiveQuery(
    numerator="sum:http.hits{code:2xx}.as_count()", denominator="sum:http.hits{!code:3xx}.as_count()"
)
WEEK = [SLOThreshold(target=95.0, timeframe=SLOTimeframe.SEVEN_DAYS, warning=98.0)]


def _metric_slo(
    name: str = "checkout availability", tags: list[str] | None = None
) -> ServiceLevelObjectiveRequest:
    return ServiceLevelObjectiveRequest(
        name=name,
        type=SLOType.METRIC,
        query=HITS,
        thresholds=WEEK,
        tags=tags or ["service:checkout", "env:prod"],
    )


def _monitor_id(dd: DD, name: str) -> int:
    return int(next(m["id"] for m in dd.raw("GET", "/api/v1/monitor").json() if m["name"] == name))


def test_a_metric_slo_is_created_read_listed_updated_and_deleted(dd: DD, schema: Any) -> None:
    with dd.client() as client:
        api = ServiceLevelObjectivesApi(client)
        made = api.create_slo(body=_metric_slo()).data[0]
        assert (made.type_id, str(made.timeframe), made.target_threshold, made.warning_threshold) == (
            1,
            "7d",
            95,
            98,
        )
        assert made.thresholds[0].target_display == "95." and made.tags == ["env:prod", "service:checkout"]
        other = api.create_slo(body=_metric_slo("search latency", ["service:search"])).data[0]
        assert api.get_slo(made.id).data.name == "checkout availability"
        assert [s.id for s in api.list_slos(ids=made.id).data] == [made.id]
        assert [s.id for s in api.list_slos(query="search").data] == [other.id]
        assert [s.id for s in api.list_slos(tags_query="service:checkout").data] == [made.id]
        assert len(api.list_slos(metrics_query="http.hits").data) == 2
        page = api.list_slos(limit=1, offset=1)
        assert [s.id for s in page.data] == [other.id] and page.metadata.page.total_count == 2
        updated = api.update_slo(
            made.id,
            body=ServiceLevelObjective(
                name="checkout availability",
                type=SLOType.METRIC,
                query=HITS,
                target_threshold=97.0,
                thresholds=[SLOThreshold(target=97.0, timeframe=SLOTimeframe.SEVEN_DAYS, warning=98.0)],
            ),
        ).data[0]
        assert updated.target_threshold == 97
        assert api.delete_slo(made.id).data == [made.id]
        with pytest.raises(NotFoundException):
            api.get_slo(made.id)
    assert dd.raw("DELETE", f"/api/v1/slo/{made.id}").json() == {
        "errors": [f"SLO not found: {made.id} not found"]
    }
    schema("v1", "SLOListResponse", dd.raw("GET", "/api/v1/slo").json())


def test_slo_bodies_datadog_refuses_get_its_errors(dd: DD) -> None:
    no_monitors = {"name": "x", "type": "monitor", "thresholds": [{"target": 95, "timeframe": "7d"}]}
    assert dd.raw("POST", "/api/v1/slo", json=no_monitors).json() == {
        "errors": ["Invalid payload: must specify monitor_ids"]
    }
    made = dd.raw("POST", "/api/v1/slo", json=_metric_slo().to_dict()).json()["data"][0]
    # The kind stays a metric SLO: a body without its query is refused as Datadog refuses it.
    answer = dd.raw("PUT", f"/api/v1/slo/{made['id']}", json=no_monitors)
    assert (answer.status_code, answer.json()) == (
        400,
        {"errors": ["Invalid payload: must specify the query for count types"]},
    )
    with dd.client() as client, pytest.raises(ApiException) as refused:
        ServiceLevelObjectivesApi(client).create_slo(
            body=ServiceLevelObjectiveRequest(
                name="bad",
                type=SLOType.METRIC,
                query=HITS,
                thresholds=[SLOThreshold(target=99.0, timeframe=SLOTimeframe.SEVEN_DAYS, warning=90.0)],
            )
        )
    assert refused.value.status == 400


def test_sli_specification_count_gets_the_query_datadog_derives(dd: DD) -> None:
    body = {
        "name": "good minus errors",
        "type": "metric",
        "thresholds": [{"target": 99, "timeframe": "7d"}],
        "sli_specification": {
            "count": {
                "good_events_formula": {"formula": "query1 - query2"},
                "bad_events_formula": {"formula": "query2"},
                "queries": [
                    {"data_source": "metrics", "name": "query1", "query": "sum:http.hits{*}.as_count()"},
                    {"data_source": "metrics", "name": "query2", "query": "sum:http.errors{*}.as_count()"},
                ],
            }
        },
    }
    made = dd.raw("POST", "/api/v1/slo", json=body).json()["data"][0]
    assert made["query"] == {
        "numerator": "sum:http.hits{*}.as_count() - sum:http.errors{*}.as_count()",
        "denominator": "(sum:http.hits{*}.as_count() - sum:http.errors{*}.as_count()) + "
        "(sum:http.errors{*}.as_count())",
    }


def test_history_computes_the_sli_from_metric_points_and_monitor_states(dd: DD) -> None:
    points = [(f"code:{code}", value) for code, value in (("2xx", 90), ("5xx", 10))]
    dd.raw(
        "POST",
        "/api/v2/series",
        json={
            "series": [
                {"metric": "http.hits", "points": [{"timestamp": int(T0) - 600, "value": v}], "tags": [tag]}
                for tag, v in points
            ]
        },
    )
    disk = _monitor_id(dd, "disk full on db")
    orders = _monitor_id(dd, "orders p99 latency")
    with dd.client() as client:
        api = ServiceLevelObjectivesApi(client)
        metric = api.create_slo(body=_metric_slo()).data[0]
        history = api.get_slo_history(metric.id, from_ts=int(T0) - 3600, to_ts=int(T0)).data
        assert history.overall.sli_value == 90.0 and str(history.overall.state) == "breached"
        assert history.series.numerator.sum == 90 and history.series.denominator.sum == 100
        empty = api.get_slo_history(metric.id, from_ts=int(T0) - 7200, to_ts=int(T0) - 3600).data.overall
        assert empty.sli_value is None and empty.errors[0].error_type == "ZERO_VALUED_DENOMINATOR"
        up = api.create_slo(
            body=ServiceLevelObjectiveRequest(
                name="orders up", type=SLOType.MONITOR, monitor_ids=[orders], thresholds=WEEK
            )
        ).data[0]
        down = api.create_slo(
            body=ServiceLevelObjectiveRequest(
                name="disk up", type=SLOType.MONITOR, monitor_ids=[disk], thresholds=WEEK
            )
        ).data[0]
        assert api.get_slo_history(up.id, from_ts=int(T0) - 3600, to_ts=int(T0)).data.overall.sli_value == 100
        assert api.get_slo_history(down.id, from_ts=int(T0) - 3600, to_ts=int(T0)).data.overall.sli_value == 0
        found = api.search_slo(query="disk").data.attributes.slos
        assert [s.data.attributes.name for s in found] == ["disk up"]
    assert dd.raw("GET", f"/api/v1/slo/{metric.id}/history").status_code == 400
    assert dd.raw("GET", "/api/v1/slo/can_delete").status_code == 501


def test_slo_corrections_are_created_listed_updated_and_deleted(dd: DD) -> None:
    from datadog_api_client.v1.api.service_level_objective_corrections_api import (
        ServiceLevelObjectiveCorrectionsApi,
    )
    from datadog_api_client.v1.model.slo_correction_category import SLOCorrectionCategory
    from datadog_api_client.v1.model.slo_correction_create_data import SLOCorrectionCreateData
    from datadog_api_client.v1.model.slo_correction_create_request import SLOCorrectionCreateRequest
    from datadog_api_client.v1.model.slo_correction_create_request_attributes import (
        SLOCorrectionCreateRequestAttributes,
    )
    from datadog_api_client.v1.model.slo_correction_type import SLOCorrectionType
    from datadog_api_client.v1.model.slo_correction_update_data import SLOCorrectionUpdateData
    from datadog_api_client.v1.model.slo_correction_update_request import SLOCorrectionUpdateRequest
    from datadog_api_client.v1.model.slo_correction_update_request_attributes import (
        SLOCorrectionUpdateRequestAttributes,
    )

    with dd.client() as client:
        slos = ServiceLevelObjectivesApi(client)
        api = ServiceLevelObjectiveCorrectionsApi(client)
        slo = slos.create_slo(body=_metric_slo()).data[0]
        made = api.create_slo_correction(
            body=SLOCorrectionCreateRequest(
                data=SLOCorrectionCreateData(
                    type=SLOCorrectionType.CORRECTION,
                    attributes=SLOCorrectionCreateRequestAttributes(
                        slo_id=slo.id,
                        start=int(T0),
                        end=int(T0) + 3600,
                        category=SLOCorrectionCategory.DEPLOYMENT,
                        description="release",
                        timezone="UTC",
                    ),
                )
            )
        ).data
        assert (
            made.attributes.slo_id == slo.id
            and made.attributes.creator.data["attributes"]["email"] == "ops@acme.test"
        )
        assert [c.id for c in slos.get_slo_corrections(slo.id).data] == [made.id]
        assert [c.id for c in api.list_slo_correction().data] == [made.id]
        updated = api.update_slo_correction(
            made.id,
            body=SLOCorrectionUpdateRequest(
                data=SLOCorrectionUpdateData(
                    type=SLOCorrectionType.CORRECTION,
                    attributes=SLOCorrectionUpdateRequestAttributes(category=SLOCorrectionCategory.OTHER),
                )
            ),
        ).data
        assert str(updated.attributes.category) == "Other" and updated.attributes.modifier is not None
        api.delete_slo_correction(made.id)
        with pytest.raises(NotFoundException):
            api.get_slo_correction(made.id)
    missing_end = {
        "data": {
            "type": "correction",
            "attributes": {"slo_id": slo.id, "start": int(T0), "category": "Other"},
        }
    }
    assert dd.raw("POST", "/api/v1/slo/correction", json=missing_end).status_code == 400
