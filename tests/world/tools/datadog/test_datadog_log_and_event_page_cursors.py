"""Log and event searches hand out a cursor on every non-empty page, as Datadog does: a short
page has one too (its last item), the page after it is empty and has none, and a cursor the
replica did not hand out is refused. datadog-api-client's recorded cassettes show it: pages of
2 over 3 items answer 2 items + cursor, 1 item + cursor, then ``{"data": []}``."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from datadog_api_client.exceptions import ApiException
from datadog_api_client.v2.api.events_api import EventsApi
from datadog_api_client.v2.api.logs_api import LogsApi
from datadog_api_client.v2.model.events_list_request import EventsListRequest
from datadog_api_client.v2.model.events_query_filter import EventsQueryFilter
from datadog_api_client.v2.model.events_request_page import EventsRequestPage
from datadog_api_client.v2.model.events_sort import EventsSort
from datadog_api_client.v2.model.logs_list_request import LogsListRequest
from datadog_api_client.v2.model.logs_list_request_page import LogsListRequestPage
from datadog_api_client.v2.model.logs_query_filter import LogsQueryFilter
from datadog_api_client.v2.model.logs_sort import LogsSort

from conftest import DD, T0

THREE = {
    "logs": [
        {"service": "web", "status": "info", "message": f"hit {i}", "at": T0 - 60 * i, "host": "web-1"}
        for i in (2, 3, 4)
    ],
    "events": [
        {"title": f"deploy {i}", "text": "", "at": T0 - 60 * i, "tags": ["env:ci"]} for i in (2, 3, 4)
    ],
}


def _logs_page(api: LogsApi, cursor: str | None = None) -> Any:
    page = LogsListRequestPage(limit=2, cursor=cursor) if cursor else LogsListRequestPage(limit=2)
    return api.list_logs(
        body=LogsListRequest(
            filter=LogsQueryFilter(_from="now-15m", to="now"), sort=LogsSort.TIMESTAMP_ASCENDING, page=page
        )
    )


def test_log_search__a_short_page_has_a_cursor_and_the_page_after_it_is_empty(make_datadog: Any) -> None:
    dd: DD = make_datadog(THREE)
    with dd.client() as client:
        api = LogsApi(client)
        first = _logs_page(api)
        second = _logs_page(api, first.meta.page.after)
        assert [log.attributes.message for log in second.data] == ["hit 2"]
        assert second.meta.page.after, "a short page still has a cursor"
        third = _logs_page(api, second.meta.page.after)
        assert third.data == [] and "page" not in third.meta
    raw = dd.raw(
        "GET", "/api/v2/logs/events", params={"page[limit]": 2, "page[cursor]": first.meta.page.after}
    )
    assert raw.json()["links"]["next"].startswith(dd.url), (
        "the short page's next link leads back to the replica"
    )


def test_log_list__the_sdk_pager_reads_every_line_and_stops_at_the_empty_page(make_datadog: Any) -> None:
    dd: DD = make_datadog(THREE)
    now = datetime.fromtimestamp(T0, UTC)
    with dd.client() as client:
        lines = list(
            LogsApi(client).list_logs_get_with_pagination(
                filter_from=now - timedelta(minutes=15), filter_to=now, page_limit=2
            )
        )
    assert [line.attributes.message for line in lines] == ["hit 2", "hit 3", "hit 4"]
    pages = [c for c in dd.trace() if c.get("path") == "/api/v2/logs/events"]
    assert len(pages) == 3, "2 lines, 1 line, then the empty page that has no cursor"


def _events_page(api: EventsApi, cursor: str | None = None) -> Any:
    page = EventsRequestPage(limit=2, cursor=cursor) if cursor else EventsRequestPage(limit=2)
    return api.search_events(
        body=EventsListRequest(
            filter=EventsQueryFilter(_from="now-15m", to="now"),
            sort=EventsSort.TIMESTAMP_ASCENDING,
            page=page,
        )
    )


def test_event_search__a_short_page_has_a_cursor_and_the_page_after_it_is_empty(make_datadog: Any) -> None:
    dd: DD = make_datadog(THREE)
    with dd.client() as client:
        api = EventsApi(client)
        first = _events_page(api)
        assert [e.attributes.attributes.title for e in first.data] == ["deploy 4", "deploy 3"]
        second = _events_page(api, first.meta.page.after)
        assert [e.attributes.attributes.title for e in second.data] == ["deploy 2"]
        assert second.meta.page.after and second.links.next.startswith(dd.url)
        third = _events_page(api, second.meta.page.after)
        assert third.data == [] and "page" not in third.meta
        titles = [
            e.attributes.attributes.title
            for e in api.list_events_with_pagination(filter_from="now-15m", filter_to="now", page_limit=2)
        ]
    assert titles == ["deploy 2", "deploy 3", "deploy 4"]


def test_event_search__a_cursor_the_replica_did_not_hand_out_is_a_400(make_datadog: Any) -> None:
    dd: DD = make_datadog(THREE)
    foreign = "eyJzdGFydEF0IjoiQVFBQUFYS2tMS3pPbm40NGV3QUFBQUJCV0V0clRFdDZVbG8zY3pCRmNsbHJiVmxDWlEifQ=="
    with dd.client() as client, pytest.raises(ApiException) as caught:
        _events_page(EventsApi(client), foreign)
    assert caught.value.status == 400
    assert "invalid cursor" in str(caught.value.body)
