"""Property tests: whatever a caller sends to the pull, review, deployment, status, check
run and release routes, the replica answers GitHub-shaped JSON, never a 500."""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import quote

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rest_answers import check_answer, fill_path

from ancha.world.tools.github.router import registered
from ancha.world.tools.github.routes import load_all

_MINE = {"pulls", "pull_merge", "pull_reviews", "pull_comments", "deployments", "statuses", "check_runs", "releases"}
load_all()
ROUTES = sorted((r.method, r.template) for r in registered() if r.handler.__module__.rsplit(".", 1)[1] in _MINE)
GH = Any  # conftest.GH

_SEGMENTS = st.one_of(
    st.sampled_from(["acme", "orders", "laura", "notes", "3", "1", "0", "-1", "99999999999999999999", "main",
                     "fix-exports", "HEAD", "production", "v1.0", "%", "a b", "ffff"]),
    st.text(min_size=1, max_size=12).filter(lambda s: s.strip(".") != ""),
)
_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**63), max_value=2**63),
                     st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=20),
                     st.sampled_from(["main", "fix-exports", "README.md", "APPROVE", "REQUEST_CHANGES", "COMMENT",
                                      "merge", "squash", "rebase", "success", "failure", "completed", "queued",
                                      "production", "v1.0", "ben", "laura", "2026-03-02T09:00:00Z", "acme:main"]))
_JSON = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(st.text(max_size=8), inner, max_size=3), max_leaves=6)
_FIELDS = st.sampled_from(["title", "body", "state", "head", "base", "draft", "issue", "merge_method", "sha",
                           "commit_title", "commit_message", "event", "comments", "commit_id", "path", "line",
                           "position", "side", "in_reply_to", "reviewers", "team_reviewers", "message", "ref",
                           "environment", "required_contexts", "auto_merge", "payload", "auto_inactive", "context",
                           "target_url", "name", "head_sha", "status", "conclusion", "output", "started_at",
                           "tag_name", "target_commitish", "prerelease", "make_latest"])
_QUERY = st.dictionaries(st.sampled_from(["state", "head", "base", "sort", "direction", "per_page", "page", "sha",
                                          "ref", "task", "environment", "check_name", "status", "filter", "since"]),
                         _SCALARS, max_size=4)
_SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])




def test_routes__all_registered() -> None:
    assert len(ROUTES) > 40


@_SETTINGS
@given(route=st.sampled_from(ROUTES), segments=st.lists(_SEGMENTS, min_size=5, max_size=5),
       body=st.dictionaries(_FIELDS, _JSON, max_size=5), query=_QUERY)
def test_routes__any_input_never_500(gh: GH, route: tuple[str, str], segments: list[str], body: dict[str, Any],
                                     query: dict[str, Any]) -> None:
    method, template = route
    params = {k: json.dumps(v) if not isinstance(v, str) else v for k, v in query.items()}
    check_answer(gh.raw(method, fill_path(template, segments), json=body if method != "GET" else None, params=params))


def _objects(gh: GH) -> dict[str, str]:
    """Ids of one of each object, made once per environment, so bodies reach real objects."""
    made: dict[str, str] | None = getattr(gh, "made", None)
    if made is not None:
        return made
    sha = gh.raw("GET", "/repos/acme/orders/branches/main").json()["commit"]["sha"]
    gh.raw("PUT", "/repos/acme/orders/contents/x.py", json={"message": "x", "content": "eA==",
                                                            "branch": "fix-exports"})
    ids = {
        "review_id": gh.raw("POST", "/repos/acme/orders/pulls/3/reviews", json={"body": "p"}).json()["id"],
        "comment_id": gh.raw("POST", "/repos/acme/orders/pulls/3/comments",
                             json={"body": "c", "path": "x.py", "line": 1}).json()["id"],
        "deployment_id": gh.raw("POST", "/repos/acme/orders/deployments", json={"ref": "main"}).json()["id"],
        "check_run_id": gh.raw("POST", "/repos/acme/orders/check-runs",
                               json={"name": "ci", "head_sha": sha}).json()["id"],
        "release_id": gh.raw("POST", "/repos/acme/orders/releases", json={"tag_name": "v9"}).json()["id"],
    }
    ids["status_id"] = gh.raw("POST", f"/repos/acme/orders/deployments/{ids['deployment_id']}/statuses",
                              json={"state": "queued"}).json()["id"]
    made = {"owner": "acme", "repo": "orders", "pull_number": "3", "sha": sha, "ref": "main", "tag": "v9",
            "environment_name": "production", **{k: str(v) for k, v in ids.items()}}
    gh.made = made
    return made


@_SETTINGS
@given(route=st.sampled_from(ROUTES), body=st.dictionaries(_FIELDS, _JSON, max_size=6))
def test_routes__any_body_on_real_objects_never_500(gh: GH, route: tuple[str, str], body: dict[str, Any]) -> None:
    method, template = route
    made = _objects(gh)
    path = re.sub(r"\{([^}]+)\}", lambda m: quote(made.get(m.group(1), "1"), safe=""), template)
    check_answer(gh.raw(method, path, json=body))


@_SETTINGS
@given(route=st.sampled_from(ROUTES), raw=st.binary(max_size=40) | st.sampled_from([b"[]", b"null", b"1", b'"x"']))
def test_routes__any_body_bytes_never_500(gh: GH, route: tuple[str, str], raw: bytes) -> None:
    method, template = route
    check_answer(gh.raw(method, fill_path(template, ["acme", "orders", "3", "1", "1"]), content=raw))
