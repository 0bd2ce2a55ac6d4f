"""Property tests: whatever a caller sends to any Okta path the replica serves, it answers
Okta's JSON (an error in Okta's body shape), never a 500; the only 5xx is the documented 501."""

from __future__ import annotations

import json
import re
from urllib.parse import quote

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ancha.world.tools.okta.router import registered
from ancha.world.tools.okta.routes import load_all
from conftest import Org

load_all()
ROUTES = sorted((r.method, r.template) for r in registered())
_SEGMENTS = st.one_of(
    st.sampled_from(["dana@acme.com", "fox@acme.com", "gone@acme.com", "me", "00u", "00g", "0", "-1", "%", "a b",
                     "Everyone", "lifecycle", "x" * 300]),
    st.text(min_size=1, max_size=12).filter(lambda s: s.strip(".") != ""),
)
_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**63), max_value=2**63),
                     st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=20),
                     st.sampled_from(["ACTIVE", "dana@acme.com", "a@b.co", "Sup3rSecret!", ""]))
_JSON = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(st.text(max_size=8), inner, max_size=3), max_leaves=6)
_FIELDS = st.sampled_from(["profile", "credentials", "groupIds", "type", "login", "name", "description"])
_PROFILE = st.dictionaries(st.sampled_from(["login", "email", "firstName", "lastName", "name", "description",
                                            "mobilePhone", "x"]), _SCALARS, max_size=5)
_EXPRESSIONS = st.one_of(
    st.text(max_size=40),
    st.builds(lambda a, o, v, j: f'{a} {o} "{v}"{j}',
              st.sampled_from(["status", "profile.login", "lastUpdated", "id", "type", "profile.x", "created"]),
              st.sampled_from(["eq", "gt", "sw", "co", "pr", "lt", "zz"]), st.text(max_size=10),
              st.sampled_from(["", " and", " or (", ")", ' and status eq "ACTIVE"'])))
_QUERY = st.dictionaries(st.sampled_from(["limit", "after", "filter", "search", "q", "activate", "sendEmail",
                                          "nextLogin"]), st.one_of(_SCALARS, _EXPRESSIONS), max_size=4)
_SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _fill(template: str, values: list[str]) -> str:
    it = iter(values)
    return re.sub(r"\{[^}]+\}", lambda _: quote(next(it, "x"), safe=""), template)


@_SETTINGS
@given(route=st.sampled_from(ROUTES), segments=st.lists(_SEGMENTS, min_size=2, max_size=2),
       body=st.one_of(st.dictionaries(_FIELDS, _JSON, max_size=4), st.builds(lambda p: {"profile": p}, _PROFILE)),
       query=_QUERY)
def test_routes__any_input_never_500(org: Org, route: tuple[str, str], segments: list[str], body: dict[str, object],
                                     query: dict[str, object]) -> None:
    method, template = route
    params = {k: v if isinstance(v, str) else json.dumps(v) for k, v in query.items()}
    answer = org.raw(method, _fill(template, segments), json=body if method != "GET" else None, params=params)
    assert answer.status_code < 500, answer.text
    if answer.status_code == 204:
        return
    data = answer.json()
    if answer.status_code >= 400:
        assert set(data) == {"errorCode", "errorSummary", "errorLink", "errorId", "errorCauses"}, answer.text


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(method=st.sampled_from(["GET", "POST", "PUT", "PATCH", "DELETE"]),
       path=st.lists(st.sampled_from(["api", "v1", "users", "groups", "lifecycle", "apps", "x", "00u1", "rules"]),
                     min_size=1, max_size=6))
def test_any_path__okta_answers_or_501(org: Org, method: str, path: list[str]) -> None:
    answer = org.raw(method, "/" + "/".join(path))
    assert answer.status_code < 500 or answer.status_code == 501, answer.text
    if answer.status_code >= 400:
        assert answer.json()["errorCode"], answer.text
