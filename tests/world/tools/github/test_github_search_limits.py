"""GitHub's search ``q`` is bounded (issue 26): past GitHub's own 256 characters (inside the
shared query bound) ``/search/issues`` answers GitHub's 422 Validation Failed; within it
any text is searched, parentheses as part of words; the replica answers as before
afterwards. Hypothesis: no text makes the query reader raise."""

from __future__ import annotations

import pytest
from github import GithubException
from hypothesis import given, settings
from hypothesis import strategies as st

from ancha.world.kernel.query_limits import MAX_QUERY_DEPTH, MAX_QUERY_LENGTH
from ancha.world.tools.github.routes.search import MAX_QUERY, IssueQuery

PARENS = "(" * 5000
TOO_LONG = {"message": "The search is longer than 256 characters.", "resource": "Search", "field": "q",
            "code": "invalid"}


def _still_answers(gh) -> None:
    found = gh.client.search_issues("exports repo:acme/orders is:issue is:open label:bug")
    assert found.totalCount == 1
    assert gh.raw("GET", "/repos/acme/orders/issues").status_code == 200


def test_search_issues__5000_open_parentheses_is_validation_failed(gh):
    assert MAX_QUERY == 256 <= MAX_QUERY_LENGTH
    with pytest.raises(GithubException) as raised:
        gh.client.search_issues(PARENS).totalCount  # noqa: B018 - reading it sends the request
    assert raised.value.status == 422
    assert raised.value.data["message"] == "Validation Failed" and raised.value.data["errors"] == [TOO_LONG]
    answer = gh.raw("GET", "/search/issues", params={"q": "x" * (MAX_QUERY + 1)})
    assert answer.status_code == 422 and answer.json()["errors"] == [TOO_LONG]
    _still_answers(gh)


def test_search_issues__just_under_the_bound_still_works(gh):
    query = "(" * MAX_QUERY_DEPTH + "exports" + ")" * MAX_QUERY_DEPTH + " repo:acme/orders"
    assert gh.raw("GET", "/search/issues", params={"q": query}).json()["total_count"] == 0  # a word, not a group
    longest = "exports repo:acme/orders is:issue".ljust(MAX_QUERY)
    assert len(longest) == MAX_QUERY
    assert gh.client.search_issues(longest).totalCount == 1
    _still_answers(gh)


_TOKENS = st.sampled_from(["repo:", "acme/orders", "is:", "issue", "-label:", "bug", '"', "'", "\\", "(", ")",
                           " ", "in:", "title,body", "AND", "OR", "NOT", "no:", "milestone", "\x00", "\ud800"])


@settings(max_examples=300, deadline=None, derandomize=True)
@given(text=st.one_of(st.text(max_size=MAX_QUERY), st.lists(_TOKENS, max_size=120).map("".join)))
def test_issue_query__any_text_is_read(text: str) -> None:
    query = IssueQuery(None, text)  # type: ignore[arg-type]  # reading the text needs no call
    assert isinstance(query.words, list) and isinstance(query.checks, list)
