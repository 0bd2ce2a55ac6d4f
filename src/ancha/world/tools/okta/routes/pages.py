"""Okta's cursor pagination: ``limit`` and ``after``, and the ``Link`` header.

Okta answers ``Link: <.../api/v1/users?limit=2>; rel="self"`` and, when more follow,
``<.../api/v1/users?after=00u...&limit=2>; rel="next"`` (the cursor is the last id of the
page). Both links go in one header, comma-separated as RFC 8288 allows (the response
headers here hold one value per name); the official SDKs split on commas, so the URLs
keep commas percent-encoded.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar
from urllib.parse import quote, urlencode

from ancha.world.tools.okta.call import Answer, Call

T = TypeVar("T")


def page(call: Call, ids: Iterator[str], lookup: Callable[[str], T | None], keep: Callable[[T], bool],
         limit: int) -> tuple[list[T], bool]:
    """Up to ``limit`` records after the cursor that ``keep`` accepts, and whether more follow."""
    out: list[T] = []
    for record_id in ids:
        record = lookup(record_id)
        if record is None or not keep(record):
            continue
        if len(out) == limit:
            return out, True
        out.append(record)
    return out, False


def url(call: Call, params: Iterable[tuple[str, str]]) -> str:
    query = urlencode(list(params), quote_via=quote, safe="")
    base = f"{call.replica.base_url}{call.request.path}"
    return f"{base}?{query}" if query else base


def answer(call: Call, items: list[Any], last_id: str | None, more: bool) -> Answer:
    """A list answer with Okta's ``Link`` header."""
    params = [(k, v) for k, values in call.query.items() for v in values]
    links = [f'<{url(call, params)}>; rel="self"']
    if more and last_id is not None:
        rest = [(k, v) for k, v in params if k != "after"]
        links.append(f'<{url(call, [("after", last_id), *rest])}>; rel="next"')
    return Answer(200, items, {"link": ", ".join(links)})
