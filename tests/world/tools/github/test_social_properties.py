"""Property tests: whatever a caller sends to the stars, reactions, org membership,
protection-setting, repository-statistics, raw-download and reference routes, the
replica answers GitHub-shaped errors or its documented answers, never a 500."""

from __future__ import annotations

import json
import re
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rest_answers import check_answer, fill_path

from ancha.world.tools.github.router import registered
from ancha.world.tools.github.routes import load_all

_MINE = {"stars", "protection_parts", "reactions", "org_members", "repo_stats", "raw_files", "accounts", "reference"}
load_all()
ROUTES = sorted((r.method, r.template) for r in registered() if r.handler.__module__.rsplit(".", 1)[1] in _MINE)
GH = Any  # conftest.GH
_TEXT = ("text/plain", "application/octocat-stream", "application/vnd.github.raw")

_SEGMENTS = st.one_of(
    st.sampled_from(["acme", "orders", "laura", "notes", "ben", "carol", "backend", "support", "main", "1", "0",
                     "-1", "99999999999999999999", "mit", "Python", "README.md", "%", "a b", "fix-exports"]),
    st.text(min_size=1, max_size=12).filter(lambda s: s.strip(".") != ""),
)
_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**63), max_value=2**63),
                     st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=20),
                     st.sampled_from(["heart", "+1", "eyes", "admin", "member", "maintainer", "active", "pending",
                                      "push", "pull", "maintain", "ci", "true", "1"]))
_JSON = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(st.text(max_size=8), inner, max_size=3), max_leaves=6)
_FIELDS = st.sampled_from(["content", "role", "state", "permission", "subscribed", "ignored", "strict", "contexts",
                           "checks", "required_approving_review_count", "dismiss_stale_reviews",
                           "require_code_owner_reviews", "dismissal_restrictions", "names"])
_QUERY = st.dictionaries(st.sampled_from(["per_page", "page", "since", "sort", "direction", "content", "state",
                                          "anon", "featured", "ref", "token", "s"]), _SCALARS, max_size=4)
_ACCEPT = st.sampled_from(["application/vnd.github+json", "application/vnd.github.star+json",
                           "application/vnd.github.v3.repository+json", "application/vnd.github.raw+json"])
_SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])




def test_routes__all_registered() -> None:
    assert len(ROUTES) >= 60


@_SETTINGS
@given(route=st.sampled_from(ROUTES), segments=st.lists(_SEGMENTS, min_size=6, max_size=6),
       body=st.one_of(st.dictionaries(_FIELDS, _JSON, max_size=4), st.lists(_SCALARS, max_size=3)), query=_QUERY,
       accept=_ACCEPT, who=st.sampled_from(["agent", "laura", "carol", None]))
def test_routes__any_input_never_500(gh: GH, route: tuple[str, str], segments: list[str], body: Any,
                                     query: dict[str, Any], accept: str, who: str | None) -> None:
    method, template = route
    params = {k: json.dumps(v) if not isinstance(v, str) else v for k, v in query.items()}
    token = "" if who == "agent" else None if who is None else gh.token_for(who)
    check_answer(gh.raw(method, fill_path(template, segments), token=token, json=body if method != "GET" else None,
                        params=params, headers={"Accept": accept}), _TEXT)


@_SETTINGS
@given(route=st.sampled_from(ROUTES), body=st.dictionaries(_FIELDS, _JSON, max_size=4), query=_QUERY)
def test_routes__real_objects_any_body_never_500(gh: GH, route: tuple[str, str], body: dict[str, Any],
                                                 query: dict[str, Any]) -> None:
    """The same routes on objects that exist, so bodies reach the handlers' validation."""
    method, template = route
    values = {"owner": "acme", "repo": "orders", "org": "acme", "username": "carol", "team_slug": "backend",
              "issue_number": "1", "branch": "main", "license": "mit", "name": "Python", "path": "main/README.md",
              "reaction_id": "1", "comment_id": "1", "release_id": "1"}
    path = re.sub(r"\{([^}]+)\}", lambda m: values.get(m.group(1), "x"), template)
    params = {k: json.dumps(v) if not isinstance(v, str) else v for k, v in query.items()}
    laura = gh.token_for("laura")
    if "/protection/" in template:  # protected afresh, so the settings' own validation is reached
        gh.raw("PUT", "/repos/acme/orders/branches/main/protection", token=laura, json={
            "required_status_checks": {"strict": False, "contexts": ["ci"]}, "enforce_admins": False,
            "required_pull_request_reviews": {"required_approving_review_count": 1}, "restrictions": None})
    check_answer(gh.raw(method, path, token=laura, json=body if method != "GET" else None,
                        params=params), _TEXT)
