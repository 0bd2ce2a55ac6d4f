"""Metrics: v1 timeseries query, v2 and v1 series submission."""

from __future__ import annotations

from typing import Any

from ancha.world.kernel.query_limits import TOO_LONG, too_long
from ancha.world.tools.datadog.call import Call, Reply
from ancha.world.tools.datadog.errors import ApiError, bad_request
from ancha.world.tools.datadog.metric_expressions import timeseries
from ancha.world.tools.datadog.router import route


@route(
    "GET",
    "/api/v1/query",
    partial="metric queries with space aggregation avg/sum/min/max (or none), a tag "
    "scope, group-by, + - * / with numbers and parentheses, and abs(); no other functions",
)
def query_metrics(call: Call) -> Reply:
    start, end = call.q_int("from"), call.q_int("to")
    text = call.q("query")
    if start is None or end is None or not text:
        raise bad_request("Missing required parameters: from, to and query")
    if end < start:
        raise bad_request("Invalid time range: 'to' is before 'from'")
    if too_long(text):
        raise bad_request(f"Error parsing query: {TOO_LONG}")
    state = call.state
    answer = timeseries(state.metrics, text, float(start), float(end), state.now())
    if answer is None:
        raise bad_request(f"Error parsing query: unable to parse {text}: Rule 'scope_expr' didn't match")
    series, group_by = answer
    return Reply(
        200,
        {
            "status": "ok",
            "res_type": "time_series",
            "resp_version": 1,
            "query": text,
            "from_date": start * 1000,
            "to_date": end * 1000,
            "series": series,
            "values": [],
            "times": [],
            "message": "",
            "group_by": group_by,
        },
    )


def _tags(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        raise bad_request("tags must be a list of strings")
    return tuple(value)


@route(
    "POST",
    "/api/v2/series",
    app_key=False,
    partial="points are kept as gauges (type and interval are accepted "
    "and not applied); Content-Encoding is not accepted",
)
def submit_metrics(call: Call) -> Reply:
    series = call.object().get("series")
    if not isinstance(series, list) or not series:
        raise bad_request("Payload is not in the expected format: series is required")
    parsed: list[tuple[str, list[tuple[float, float]], tuple[str, ...]]] = []
    for item in series:
        if not isinstance(item, dict) or not isinstance(item.get("metric"), str) or not item["metric"]:
            raise bad_request("Payload is not in the expected format: each series needs a metric name")
        points = item.get("points")
        if not isinstance(points, list) or not points:
            raise bad_request(f"Payload is not in the expected format: {item['metric']} has no points")
        values: list[tuple[float, float]] = []
        for point in points:
            ts = point.get("timestamp") if isinstance(point, dict) else None
            value = point.get("value") if isinstance(point, dict) else None
            if (
                isinstance(ts, bool)
                or not isinstance(ts, (int, float))
                or isinstance(value, bool)
                or not isinstance(value, (int, float))
            ):
                raise bad_request("Payload is not in the expected format: points need timestamp and value")
            values.append((float(ts), float(value)))
        series_tags = list(_tags(item.get("tags")))
        for resource in item.get("resources") or []:
            if isinstance(resource, dict) and resource.get("type") == "host" and resource.get("name"):
                series_tags.append(f"host:{resource['name']}")
        parsed.append((item["metric"], values, tuple(series_tags)))
    for name, values, tags in parsed:
        call.state.submit_points(name, values, tags, call.actor)
    return Reply(202, {"errors": []})


@route("POST", "/api/v1/series", app_key=False, partial="points are kept as gauges")
def submit_metrics_v1(call: Call) -> Reply:
    series = call.object().get("series")
    if not isinstance(series, list) or not series:
        raise ApiError(400, "Payload is not in the expected format: series is required")
    for item in series:
        if not isinstance(item, dict) or not isinstance(item.get("metric"), str):
            raise bad_request("Payload is not in the expected format: each series needs a metric name")
        points = item.get("points")
        if not isinstance(points, list) or not all(
            isinstance(p, list)
            and len(p) == 2
            and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in p)
            for p in points
        ):
            raise bad_request("Payload is not in the expected format: points are [timestamp, value] pairs")
        v1_tags = list(_tags(item.get("tags")))
        if item.get("host"):
            v1_tags.append(f"host:{item['host']}")
        call.state.submit_points(
            item["metric"], [(float(t), float(v)) for t, v in points], tuple(v1_tags), call.actor
        )
    return Reply(202, {"status": "ok"})


@route("GET", "/api/v1/validate", app_key=False)
def validate_api_key(call: Call) -> Reply:
    return Reply(200, {"valid": True})
