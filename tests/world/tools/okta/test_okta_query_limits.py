"""Okta's ``filter`` and ``search`` are bounded (issue 26): past the shared length or nesting
bound they answer Okta's E0000031 400, within it they parse in linear time, and the org
answers as before afterwards. Hypothesis: no text makes the parser raise anything but
``InvalidSearch``."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ancha.world.kernel.query_limits import MAX_QUERY_DEPTH, MAX_QUERY_LENGTH
from ancha.world.tools.okta.errors import InvalidSearch
from ancha.world.tools.okta.filters import GROUP_FILTER, USER_FILTER, compile_expression, record_getter
from conftest import Org

PARENS = "(" * 5000


def _logins(users: list[Any]) -> list[str]:
    return [u.profile.login for u in users]


def _nested(depth: int, inner: str) -> str:
    return "(" * depth + inner + ")" * depth


def _invalid_search(org: Org, path: str, **params: str) -> None:
    answer = org.raw("GET", path, params=params)
    assert answer.status_code == 400, answer.text
    body = answer.json()
    assert body["errorCode"] == "E0000031" and body["errorSummary"] == "Invalid search criteria."


def _still_answers(org: Org) -> None:
    users, _, err = org.sdk("list_users", filter='status eq "SUSPENDED"')
    assert err is None and _logins(users) == ["fox@acme.com"]
    assert org.raw("GET", "/api/v1/groups").status_code == 200


def test_list_users__5000_open_parentheses_is_invalid_search(org: Org) -> None:
    for key in ("filter", "search"):
        users, _, err = org.sdk("list_users", **{key: PARENS})
        assert users is None and err is not None
        _invalid_search(org, "/api/v1/users", **{key: PARENS})
        _invalid_search(org, "/api/v1/groups", **{key: PARENS})
    _still_answers(org)


def test_list_users__past_the_length_or_depth_bound_is_invalid_search(org: Org) -> None:
    long_filter = 'status eq "ACTIVE"' + ' or status eq "ACTIVE"' * (MAX_QUERY_LENGTH // 22)
    assert len(long_filter) > MAX_QUERY_LENGTH
    _invalid_search(org, "/api/v1/users", filter=long_filter)
    _invalid_search(org, "/api/v1/users", filter=_nested(MAX_QUERY_DEPTH + 1, 'status eq "ACTIVE"'))
    _invalid_search(org, "/api/v1/users", search="not " * (MAX_QUERY_DEPTH + 1) + 'status eq "ACTIVE"')
    _invalid_search(org, "/api/v1/groups", search=_nested(MAX_QUERY_DEPTH + 1, 'type eq "OKTA_GROUP"'))
    _still_answers(org)


def test_list_users__just_under_the_bounds_still_works(org: Org) -> None:
    users, _, err = org.sdk("list_users", filter=_nested(MAX_QUERY_DEPTH, 'status eq "SUSPENDED"'))
    assert err is None and _logins(users) == ["fox@acme.com"]
    users, _, err = org.sdk("list_users", search="not " * (MAX_QUERY_DEPTH - 1) + 'status ne "SUSPENDED"')
    assert err is None and _logins(users) == ["fox@acme.com"]
    longest = 'status eq "SUSPENDED"' + ' or status eq "X"' * ((MAX_QUERY_LENGTH - 21) // 17)
    longest += " " * (MAX_QUERY_LENGTH - len(longest))
    assert len(longest) == MAX_QUERY_LENGTH
    users, _, err = org.sdk("list_users", filter=longest)
    assert err is None and _logins(users) == ["fox@acme.com"]
    _still_answers(org)


_TOKENS = st.sampled_from(["(", ")", " and ", " or ", "not ", "status", " eq ", " pr", '"ACTIVE"', '"', "\\",
                           "profile.login", " sw ", "12", "-1.5", "true", "null", " ", "lastUpdated", " gt ",
                           '"2026-01-01T00:00:00.000Z"', "\u00e9", "\ud800"])
_EXPRESSIONS = st.one_of(st.text(max_size=300), st.lists(_TOKENS, max_size=1500).map("".join),
                         st.integers(0, 1500).map(lambda n: _nested(n, 'status eq "ACTIVE"')),
                         st.integers(0, 1200).map(lambda n: "not " * n + "status pr"))
_RECORD = record_getter({"id": "00u1", "status": "ACTIVE", "type": {"id": "oty1"}, "lastUpdated":
                         "2026-01-01T00:00:00.000Z", "profile": {"login": "dana@acme.com"}})


@settings(max_examples=300, deadline=None, derandomize=True)
@given(text=_EXPRESSIONS, allowed=st.sampled_from([None, USER_FILTER, GROUP_FILTER]))
def test_compile_expression__any_text_is_a_matcher_or_invalid_search(text: str, allowed: Any) -> None:
    try:
        matcher = compile_expression(text, allowed)
    except InvalidSearch:
        return
    assert matcher(_RECORD) in (True, False)
