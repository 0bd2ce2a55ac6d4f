"""Every Datadog query language is bounded (issue 26): log and event searches, monitor
queries, monitor search and metric queries refuse a query past the shared length or
nesting bound with Datadog's 400, parse anything within it in linear time, and the world
answers as before afterwards. Hypothesis: no text makes a parser raise anything but its
own query error."""

from __future__ import annotations

import json
import time

import pytest
from datadog_api_client.exceptions import ApiException
from datadog_api_client.v1.api.metrics_api import MetricsApi
from datadog_api_client.v1.api.monitors_api import MonitorsApi
from datadog_api_client.v1.model.monitor import Monitor
from datadog_api_client.v1.model.monitor_type import MonitorType
from datadog_api_client.v2.api.events_api import EventsApi
from datadog_api_client.v2.api.logs_api import LogsApi
from datadog_api_client.v2.model.logs_list_request import LogsListRequest
from datadog_api_client.v2.model.logs_list_request_page import LogsListRequestPage
from datadog_api_client.v2.model.logs_query_filter import LogsQueryFilter
from datadog_api_client.v2.model.logs_sort import LogsSort
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ancha.world.kernel.query_limits import MAX_QUERY_DEPTH, MAX_QUERY_LENGTH, TOO_DEEP, TOO_LONG
from ancha.world.tools.datadog.log_query import LogLine, QuerySyntaxError, compile_query
from ancha.world.tools.datadog.metric_expressions import parse_monitor_query
from ancha.world.tools.datadog.metrics import parse_metric_query
from ancha.world.tools.datadog.monitors import Monitor as MonitorModel
from ancha.world.tools.datadog.monitors import validate_monitor
from ancha.world.tools.datadog.routes.monitors import _search_match
from conftest import DD, T0

PARENS = "(" * 5000


def _logs(dd: DD, query: str) -> list[str]:
    with dd.client() as client:
        answer = LogsApi(client).list_logs(
            body=LogsListRequest(
                filter=LogsQueryFilter(query=query, _from="now-1d", to="now"),
                sort=LogsSort.TIMESTAMP_ASCENDING,
                page=LogsListRequestPage(limit=50),
            )
        )
    return [log.attributes.message for log in answer.data]


def _log_error(dd: DD, query: str) -> ApiException:
    with pytest.raises(ApiException) as info:
        _logs(dd, query)
    return info.value


def _errors(error: ApiException) -> list[str]:
    """Datadog's ``{"errors": [...]}``, as the client hands it over."""
    body = error.body if isinstance(error.body, dict) else json.loads(error.body)
    return list(body["errors"])


def _still_answers(dd: DD) -> None:
    assert _logs(dd, "service:payments") == ["retrying charge"]
    assert dd.raw("GET", "/api/v1/monitor").status_code == 200
    assert "monitors" in dd.state()


def _nested(depth: int, inner: str) -> str:
    return "(" * depth + inner + ")" * depth


def test_log_search__5000_open_parentheses_is_datadog_400(dd: DD) -> None:
    error = _log_error(dd, PARENS)
    assert error.status == 400 and _errors(error) == [f"Invalid query: {TOO_LONG}"]
    get = dd.raw("GET", "/api/v2/logs/events", params={"filter[query]": PARENS})
    assert get.status_code == 400 and get.json()["errors"][0].startswith("Invalid query")
    _still_answers(dd)


def test_log_search__past_the_length_bound_is_400_naming_it(dd: DD) -> None:
    query = "service:payments" + " OR service:x" * (MAX_QUERY_LENGTH // 13)
    assert len(query) > MAX_QUERY_LENGTH
    answer = dd.raw("POST", "/api/v2/logs/events/search", json={"filter": {"query": query, "from": "now-1d"}})
    assert answer.status_code == 400 and answer.json() == {"errors": [f"Invalid query: {TOO_LONG}"]}
    _still_answers(dd)


def test_log_search__deeper_than_the_bound_is_400_naming_it(dd: DD) -> None:
    for query in (
        _nested(MAX_QUERY_DEPTH + 1, "service:payments"),
        "NOT " * (MAX_QUERY_DEPTH + 1) + "x",
        "-" * (MAX_QUERY_DEPTH + 1) + "x",
        _nested(MAX_QUERY_DEPTH, "NOT service:payments"),
    ):
        answer = dd.raw(
            "POST", "/api/v2/logs/events/search", json={"filter": {"query": query, "from": "now-1d"}}
        )
        assert answer.status_code == 400 and answer.json() == {"errors": [f"Invalid query: {TOO_DEEP}"]}, (
            query
        )
    _still_answers(dd)


def test_log_search__just_under_the_bounds_still_works(dd: DD) -> None:
    assert _logs(dd, _nested(MAX_QUERY_DEPTH, "service:payments")) == ["retrying charge"]
    assert _logs(dd, _nested(MAX_QUERY_DEPTH - 1, "NOT service:orders")) == ["retrying charge"]
    assert _logs(dd, "NOT " * (MAX_QUERY_DEPTH - 1) + "service:orders") == ["retrying charge"]
    longest = "service:payments" + " OR service:x" * ((MAX_QUERY_LENGTH - 16) // 13)
    longest += " " * (MAX_QUERY_LENGTH - len(longest))
    assert len(longest) == MAX_QUERY_LENGTH
    assert _logs(dd, longest) == ["retrying charge"]


def test_event_search__5000_open_parentheses_is_datadog_400(dd: DD) -> None:
    with dd.client() as client, pytest.raises(ApiException) as info:
        EventsApi(client).list_events(filter_query=PARENS, filter_from="now-1d")
    assert info.value.status == 400 and _errors(info.value) == [f"Invalid query: {TOO_LONG}"]
    answer = dd.raw(
        "POST", "/api/v2/events/search", json={"filter": {"query": "x " * 3000, "from": "now-1d"}}
    )
    assert answer.status_code == 400 and answer.json() == {"errors": [f"Invalid query: {TOO_LONG}"]}
    with dd.client() as client:
        found = EventsApi(client).list_events(
            filter_query=_nested(MAX_QUERY_DEPTH, "Deployed"), filter_from="now-1d"
        )
    assert [e.attributes.attributes.title for e in found.data] == ["Deployed orders v42"]
    _still_answers(dd)


def test_monitor_query__past_the_length_bound_is_the_invalid_query_400(dd: DD) -> None:
    long_query = "avg(last_5m):avg:orders.latency.p99{" + "a," * MAX_QUERY_LENGTH + "b} > 1"
    with dd.client() as client:
        api = MonitorsApi(client)
        for call in (api.create_monitor, api.validate_monitor):
            with pytest.raises(ApiException) as info:
                call(body=Monitor(name="long", type=MonitorType.QUERY_ALERT, query=long_query))
            assert info.value.status == 400
            assert _errors(info.value) == ["The value provided for parameter 'query' is invalid"]
    answer = dd.raw("POST", "/api/v1/monitor", json={"type": "log alert", "query": PARENS})
    assert answer.status_code == 400
    assert answer.json() == {"errors": ["The value provided for parameter 'query' is invalid"]}
    seeded = dd.raw("GET", "/api/v1/monitor").json()[0]["id"]
    update = dd.raw("PUT", f"/api/v1/monitor/{seeded}", json={"query": PARENS})
    assert update.status_code == 400
    _still_answers(dd)


def test_monitor_query__a_long_query_within_the_bound_is_read_in_linear_time(dd: DD) -> None:
    # Spaces between a window and no threshold made the monitor regex backtrack cubically
    # (a 4,100-character query held the server for about five minutes).
    query = "avg(last_5m):" + " " * (MAX_QUERY_LENGTH - 20) + "x"
    started = time.monotonic()
    answer = dd.raw(
        "POST", "/api/v1/monitor", json={"type": "log alert", "name": "spaces", "query": query + " > 1"}
    )
    assert answer.status_code == 200, answer.text
    no_operator = dd.raw(
        "POST", "/api/v1/monitor", json={"type": "log alert", "name": "spaces", "query": query}
    )
    assert no_operator.json() == {
        "errors": ["The value provided for parameter 'query' is invalid: invalid operator specified: "]
    }
    listed = dd.raw("POST", "/api/v1/monitor/validate", json={"type": "query alert", "query": query + " > "})
    assert listed.status_code == 400
    assert time.monotonic() - started < 10  # linear: milliseconds; the cubic regex took minutes
    _still_answers(dd)


def test_monitor_search__past_the_length_bound_is_400(dd: DD) -> None:
    with dd.client() as client:
        api = MonitorsApi(client)
        with pytest.raises(ApiException) as info:
            api.search_monitors(query=PARENS)
        assert info.value.status == 400 and _errors(info.value) == [f"Invalid query: {TOO_LONG}"]
        found = api.search_monitors(query="status:alert " + " " * (MAX_QUERY_LENGTH - 13))
    assert [m.name for m in found.monitors] == ["disk full on db"]
    _still_answers(dd)


def test_metric_query__past_the_length_bound_is_400(dd: DD) -> None:
    with dd.client() as client:
        api = MetricsApi(client)
        for query in (PARENS, "avg:orders.latency.p99{" + "a," * MAX_QUERY_LENGTH + "b}"):
            with pytest.raises(ApiException) as info:
                api.query_metrics(_from=int(T0) - 600, to=int(T0), query=query)
            assert info.value.status == 400 and _errors(info.value) == [f"Error parsing query: {TOO_LONG}"]
        answer = api.query_metrics(_from=int(T0) - 600, to=int(T0), query="avg:orders.latency.p99{*}")
    assert len(answer.series[0].pointlist) == 10
    _still_answers(dd)


# --- properties: any text, each parser's own error or nothing ------------------------------

_TOKENS = st.sampled_from(
    [
        "(",
        ")",
        "NOT ",
        "-",
        " OR ",
        " AND ",
        "service:",
        "status:(",
        "@a.b:",
        "[1 TO 5]",
        '"',
        "\\",
        "*",
        "?",
        "x",
        "warn",
        " ",
        ":",
        ">=3",
        "env:prod",
        "\u00e9",
        "\ud800",
    ]
)
_QUERIES = st.one_of(
    st.text(max_size=300),
    st.lists(_TOKENS, max_size=1500).map("".join),
    st.integers(0, 1500).map(lambda n: _nested(n, "x")),
    st.integers(0, 1000).map(lambda n: "NOT " * n + "x"),
    st.integers(0, 3000).map(lambda n: "-" * n + "x"),
)
_LINE = LogLine(T0, 1, "orders", "error", "web-1", "upstream timeout (x) warn", {"a": {"b": 3}}, ["env:prod"])
_PROPERTY = settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


@_PROPERTY
@given(query=_QUERIES)
def test_log_query__any_text_is_a_matcher_or_a_query_syntax_error(query: str) -> None:
    try:
        match, _ = compile_query(query)
    except QuerySyntaxError:
        return
    assert match(_LINE) in (True, False)


_MONITOR_TOKENS = st.sampled_from(
    [
        "avg(last_5m):",
        "avg:",
        "a.b",
        "{",
        "}",
        "*",
        ",",
        " ",
        "\t",
        ">",
        ">=",
        "==",
        "1",
        "-",
        ".",
        "by {host}",
        ".rollup(sum, 60)",
        "(",
        ")",
        "x",
        "\ud800",
    ]
)
_MONITOR_QUERIES = st.one_of(st.text(max_size=300), st.lists(_MONITOR_TOKENS, max_size=1500).map("".join))


@_PROPERTY
@given(query=_MONITOR_QUERIES, kind=st.sampled_from(["query alert", "metric alert", "log alert"]))
def test_monitor_and_metric_queries__any_text_parses_or_is_refused(query: str, kind: str) -> None:
    parsed = parse_monitor_query(query)
    assert parsed is None or parsed.metric.name
    metric = parse_metric_query(query)
    assert metric is None or metric.name
    problem = validate_monitor({"type": kind, "query": query, "options": {"thresholds": {"critical": 1}}})
    assert problem is None or isinstance(problem, str)
    monitor = MonitorModel(id=1, name="m", type=kind, query="avg(last_5m):avg:a.b{*} > 1")
    assert _search_match(monitor, False, query) in (True, False)
