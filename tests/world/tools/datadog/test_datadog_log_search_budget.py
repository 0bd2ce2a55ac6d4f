"""A log search has a budget of term tests (lines tested x the query's terms): a query no index
narrows, such as hundreds of negated wildcards over a large world, stops at it and answers what
it found with Datadog's ``meta.status: timeout`` instead of holding the server for minutes."""

from __future__ import annotations

import copy
import time
from typing import Any

import pytest

from ancha.world.tools.datadog import logs
from ancha.world.tools.datadog.log_query import WILDCARD_COST
from conftest import DD, SEED, T0

LINES = 20_000
NEGATED_WILDCARDS = " ".join(f"-z{a}{b}*" for a in "abcdefghijklmnopqrstuvwxyz" for b in "abcdefghijklmnopqrstuvwxyz")
"""676 terms, each true of every line and none narrowing the index; then a word no line has, so
every line tests all 677 terms and none matches (a wildcard: no index narrows it): the whole range is scanned at full cost."""
WORST = NEGATED_WILDCARDS + " nowher*"


@pytest.fixture(scope="module")
def big_seed() -> dict[str, Any]:
    seed = copy.deepcopy(SEED)
    seed["logs"] = [{"service": "orders", "status": "info", "message": f"request {i} served in 12 ms",
                     "at": T0 - 3_000 + i * 0.1, "host": "web-1", "attributes": {}, "tags": ["env:prod"]}
                    for i in range(LINES)]
    return seed


def _search(dd: DD, query: str) -> dict[str, Any]:
    answer = dd.raw("POST", "/api/v2/logs/events/search",
                    json={"filter": {"query": query, "from": "now-1h", "to": "now"}, "page": {"limit": 10}})
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body


def test_log_search__a_query_past_the_budget_answers_partial_results_with_status_timeout(make_datadog, big_seed):
    dd = make_datadog(big_seed)
    started = time.perf_counter()
    body = _search(dd, WORST)
    took = time.perf_counter() - started
    assert body["meta"]["status"] == "timeout"
    assert body["meta"]["warnings"][0]["code"] == "timeout"
    assert body["data"] == [] and "page" not in body["meta"], "what it found (nothing), and no next page"
    partial = _search(dd, NEGATED_WILDCARDS)
    assert len(partial["data"]) == 10, "lines that match are found before the budget runs out"
    tested = logs.SEARCH_BUDGET // (len(WORST.split()) * WILDCARD_COST)
    assert tested < LINES, "the budget stopped it before the end of the range"
    assert took < 60, f"{took:.1f} s"  # a sanity bound only: the bench measures; before, minutes


def test_log_search__an_ordinary_query_over_the_same_world_is_done(make_datadog, big_seed):
    dd = make_datadog(big_seed)
    body = _search(dd, "service:orders -timeout request")
    assert body["meta"]["status"] == "done" and "warnings" not in body["meta"]
    assert len(body["data"]) == 10 and body["meta"]["page"]["after"]
    every = _search(dd, "-nothing* served")
    assert every["meta"]["status"] == "done", "a few terms over 20,000 lines are within the budget"


def test_log_search__the_budget_counts_the_querys_terms(monkeypatch: pytest.MonkeyPatch, make_datadog):
    dd = make_datadog()
    monkeypatch.setattr(logs, "SEARCH_BUDGET", 4)
    assert _search(dd, "-zzz")["meta"]["status"] == "done", "3 lines x 1 term: within"
    assert _search(dd, "-zzz -yyy")["meta"]["status"] == "timeout", "3 lines x 2 terms: past it"
    monkeypatch.setattr(logs, "SEARCH_BUDGET", 3 * WILDCARD_COST)  # the last hour holds 3 lines
    assert _search(dd, "-zz*")["meta"]["status"] == "done", "3 lines x 1 wildcard: within"
    assert _search(dd, "-zz* -yyy")["meta"]["status"] == "timeout", "a wildcard costs more than a word"
