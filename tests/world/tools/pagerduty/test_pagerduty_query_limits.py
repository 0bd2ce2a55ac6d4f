"""PagerDuty's list filters are bounded (issue 26): a ``query`` (or any filter value) past
the shared length bound answers PagerDuty's 400 ``Invalid Input Provided``; within it the
filter works; the account answers as before afterwards, and distinct filters do not pile
up in memory. Hypothesis: no query string makes the parameter reader raise anything but
``InvalidInput``."""

from __future__ import annotations

from urllib.parse import urlencode

import pagerduty
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pagerduty_support import PD

from ancha.world.kernel.query_limits import MAX_QUERY_LENGTH
from ancha.world.tools.pagerduty.errors import InvalidInput
from ancha.world.tools.pagerduty.params import Query

PARENS = "(" * 5000


def _invalid_input(pd: PD, path: str, params: dict[str, str]) -> None:
    with pytest.raises(pagerduty.HttpError) as raised:
        pd.client.rget(path, params=params)
    answer = raised.value.response
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert error["code"] == 2001 and error["message"] == "Invalid Input Provided"
    assert error["errors"] == [f"{next(iter(params)).capitalize()} is longer than {MAX_QUERY_LENGTH} characters."]


def _still_answers(pd: PD) -> None:
    assert [u["name"] for u in pd.client.list_all("users", params={"query": "ben"})] == ["Ben Okafor"]
    assert len(list(pd.client.iter_all("incidents", params={"date_range": "all"}))) == 2


def test_list_filters__5000_open_parentheses_is_invalid_input(pd: PD) -> None:
    for path in ("users", "services", "escalation_policies", "schedules"):
        _invalid_input(pd, path, {"query": PARENS})
    _invalid_input(pd, "incidents", {"incident_key": PARENS})
    _invalid_input(pd, "incidents", {"service_ids": PARENS})
    _still_answers(pd)


def test_list_filters__just_under_the_length_bound_still_work(pd: PD) -> None:
    needle = "ben" + " " * 0
    padded = needle.ljust(MAX_QUERY_LENGTH, "x")
    assert len(padded) == MAX_QUERY_LENGTH
    assert pd.client.list_all("users", params={"query": padded}) == []  # a long needle in no name: fine
    assert [u["name"] for u in pd.client.list_all("users", params={"query": needle})] == ["Ben Okafor"]
    _invalid_input(pd, "users", {"query": padded + "x"})
    _still_answers(pd)


def test_list_incidents__distinct_filters_do_not_pile_up_in_the_cache(pd: PD) -> None:
    for i in range(300):
        answer = pd.raw("GET", "/incidents", params={"incident_key": f"key-{i}-" + "k" * 1000, "date_range": "all"})
        assert answer.status_code == 200 and answer.json()["incidents"] == []
    assert len(pd.replica.state._filtered) <= 64
    _still_answers(pd)


_PARAMS = st.lists(st.tuples(st.sampled_from(["query", "statuses[]", "service_ids[]", "limit", "offset", "since",
                                              "incident_key", "total", "x"]),
                             st.one_of(st.text(max_size=50), st.integers(0, 6000).map(lambda n: "(" * n))),
                   max_size=6)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(params=_PARAMS, raw=st.text(max_size=200))
def test_query__any_query_string_reads_or_is_invalid_input(params: list[tuple[str, str]], raw: str) -> None:
    for text in (urlencode(params), raw):
        query = Query(text)
        try:
            query.get("query")
            query.many("statuses")
            query.flag("total")
            query.page()
            query.time("since")
        except InvalidInput:
            continue
