"""Property tests: whatever a caller sends to the issue, repo and user routes, the replica
answers GitHub-shaped JSON, never a 500."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rest_answers import check_answer, fill_path

from ancha.world.tools.github.router import registered
from ancha.world.tools.github.routes import load_all

_MINE = {"meta", "users", "repos", "collaborators", "issues", "issue_comments", "labels", "milestones",
         "issue_events", "search"}
load_all()
ROUTES = sorted((r.method, r.template) for r in registered() if r.handler.__module__.rsplit(".", 1)[1] in _MINE)

_SEGMENTS = st.one_of(
    st.sampled_from(["acme", "orders", "laura", "notes", "vault", "many", "ben", "carol", "ancha-agent", "1", "2",
                     "3", "0", "-1", "99999999999999999999", "bug", "area/ui", "backend", "v1.0", "%", "a b"]),
    # "." and ".." would be resolved by the client and leave the tool's base URL.
    st.text(min_size=1, max_size=12).filter(lambda s: s.strip(".") != ""),
)
_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**63), max_value=2**63),
                     st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=20),
                     st.sampled_from(["open", "closed", "all", "bug", "ben", "not_planned", "too heated", "push",
                                      "2026-03-02T09:00:00Z", "ffffff", "*", "none"]))
_JSON = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(st.text(max_size=8), inner, max_size=3), max_leaves=6)
_FIELDS = st.sampled_from(["title", "body", "state", "state_reason", "labels", "assignees", "assignee", "milestone",
                           "name", "new_name", "color", "description", "permission", "lock_reason", "private",
                           "visibility", "default_branch", "due_on", "names", "has_issues", "homepage"])
_QUERY = st.dictionaries(st.sampled_from(["state", "labels", "sort", "direction", "since", "per_page", "page",
                                          "assignee", "creator", "mentioned", "milestone", "filter", "q", "type",
                                          "affiliation", "visibility", "role", "order"]), _SCALARS, max_size=4)
_SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])




@_SETTINGS
@given(route=st.sampled_from(ROUTES), segments=st.lists(_SEGMENTS, min_size=4, max_size=4),
       body=st.dictionaries(_FIELDS, _JSON, max_size=5), query=_QUERY)
def test_routes__any_input_never_500(gh, route, segments, body, query):
    method, template = route
    params = {k: json.dumps(v) if not isinstance(v, str) else v for k, v in query.items()}
    check_answer(gh.raw(method, fill_path(template, segments), json=body if method != "GET" else None, params=params))


@_SETTINGS
@given(route=st.sampled_from(ROUTES), raw=st.binary(max_size=40) | st.sampled_from([b"[]", b"null", b"1", b'"x"']))
def test_routes__any_body_bytes_never_500(gh, route, raw):
    method, template = route
    check_answer(gh.raw(method, fill_path(template, ["acme", "orders", "1", "1"]), content=raw))
