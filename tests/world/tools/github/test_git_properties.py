"""Property tests: whatever a caller sends to the contents, git data, branches and commits
routes, the replica answers GitHub-shaped JSON (or raw bytes when asked), never a 500."""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import quote

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ancha.world.tools.github.router import registered
from ancha.world.tools.github.routes import load_all

GH = Any  # conftest.GH
_MINE = {"contents", "git_data", "branches", "commits"}
load_all()
ROUTES = sorted((r.method, r.template) for r in registered() if r.handler.__module__.rsplit(".", 1)[1] in _MINE)

_SEGMENTS = st.one_of(
    st.sampled_from(["acme", "orders", "vault", "main", "fix-exports", "README.md", "heads/main", "refs/heads/x",
                     "HEAD", "main...fix-exports", "main..nope", "f" * 40, "0" * 40, "abc", "%", "a b", "docs/x"]),
    st.text(min_size=1, max_size=12).filter(lambda s: s.strip(".") != ""),
)
_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**63), max_value=2**63),
                     st.text(max_size=20),
                     st.sampled_from(["main", "eA==", "100644", "040000", "blob", "tree", "commit", "utf-8", "base64",
                                      "refs/heads/new", "f" * 40, "2026-03-02T09:00:00Z"]))
_JSON = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(st.text(max_size=8), inner, max_size=3), max_leaves=6)
_FIELDS = st.sampled_from(["message", "content", "sha", "branch", "committer", "author", "encoding", "tree",
                           "base_tree", "parents", "ref", "force", "tag", "object", "type", "tagger", "new_name",
                           "required_status_checks", "enforce_admins", "required_pull_request_reviews",
                           "restrictions", "allow_force_pushes"])
_QUERY = st.dictionaries(st.sampled_from(["ref", "recursive", "sha", "path", "author", "committer", "since", "until",
                                          "per_page", "page", "protected"]), _SCALARS, max_size=4)
_SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _path(template: str, values: list[str]) -> str:
    it = iter(values)
    return re.sub(r"\{[^}]+\}(\.\.\.\{[^}]+\})?", lambda _: quote(next(it, "x"), safe="/"), template)


def _check(answer: httpx.Response) -> None:
    assert answer.status_code < 500, answer.text
    if answer.status_code in (204, 304) or not answer.headers.get("content-type", "").startswith("application/json"):
        return
    body = answer.json()
    if answer.status_code >= 400:
        assert isinstance(body, dict) and isinstance(body.get("message"), str), answer.text


@_SETTINGS
@given(route=st.sampled_from(ROUTES), segments=st.lists(_SEGMENTS, min_size=4, max_size=4),
       body=st.dictionaries(_FIELDS, _JSON, max_size=6), query=_QUERY)
def test_git_routes__any_input_never_500(gh: GH, route: tuple[str, str], segments: list[str],
                                         body: dict[str, Any], query: dict[str, Any]) -> None:
    method, template = route
    params = {k: json.dumps(v) if not isinstance(v, str) else v for k, v in query.items()}
    segments = ["acme", "orders", *segments[2:]] if segments[0] == "acme" else segments
    _check(gh.raw(method, _path(template, segments), json=body if method != "GET" else None, params=params))


@_SETTINGS
@given(route=st.sampled_from(ROUTES), raw=st.binary(max_size=40) | st.sampled_from([b"[]", b"null", b"1", b'"x"']))
def test_git_routes__any_body_bytes_never_500(gh: GH, route: tuple[str, str], raw: bytes) -> None:
    method, template = route
    _check(gh.raw(method, _path(template, ["acme", "orders", "main", "README.md"]), content=raw))
