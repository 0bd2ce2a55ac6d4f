"""Hypothesis over AgentOS's write endpoints: no body, path or header gets a 5xx, and the
workspace's lists and runs still answer 200 afterwards (SQLite and PostgreSQL)."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

# Values that broke services before: not JSON-storable, past int()'s digit limit, nested past
# the recursion limit, path-like, and NUL.
NASTY_TEXT = ["\ud800", "a\x00b", "9" * 5000, "NaN", "", "%", "../..", "null", "[" * 3000, "{{input.x}}",
              "\ue000", "a/b", " ", "\udfff\ud800"]
NASTY_BODIES = [b"[" * 5000, b'{"a":' * 3000, b"9" * 5000, b'{"input": {"x": "\\ud800"}}', b"\xff\xfe", b"NaN",
                b'{"input": {"x": NaN}}', b'{"input": {"x": 1e999}}', b'{"input": 1}', b'{"name": "\\u0000"}',
                b'{"input": {"x": ' + b"9" * 5000 + b"}}", b"", b"{}", b"null"]

any_text = st.sampled_from(NASTY_TEXT) | st.text(alphabet=st.characters(codec=None), max_size=12)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | any_text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(any_text, inner, max_size=4),
    max_leaves=12,
)
tame_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)
node_types = st.sampled_from(["set", "condition", "llm", "http", "loop", ""]) | any_text
nodes = st.lists(
    st.fixed_dictionaries(
        {"id": any_text | st.sampled_from(["a", "b"]), "type": node_types},
        optional={"values": st.dictionaries(any_text, any_text | json_values, max_size=3),
                  "expression": any_text, "then": any_text, "else": any_text, "next": any_text,
                  "provider": st.sampled_from(["mock", "openai", ""]) | any_text, "model": any_text,
                  "prompt": any_text, "output": any_text, "responses": json_values, "url": any_text},
    ),
    max_size=3,
)
EXPRESSIONS = ["float('nan')", "1e308 * 10", r"'\ud800'", r"'a\x00b'", "input", "input.get('x')", "x",
               "[input] * 3", "{'k': input, 'n': None}", "'a' * 100", "1 / 0", "2 ** 10000", "state"]
expressions = st.sampled_from(EXPRESSIONS)
runnable_nodes = st.lists(
    st.one_of(
        st.fixed_dictionaries({"type": st.just("set"), "values": st.dictionaries(
            st.sampled_from(["x", "y", "reply"]), expressions, min_size=1, max_size=2)}),
        st.fixed_dictionaries({"type": st.just("condition"), "expression": expressions,
                               "then": st.just("n0")}),
        st.fixed_dictionaries({"type": st.just("llm"), "provider": st.just("mock"), "model": st.just("gpt-4o-mini"),
                               "prompt": st.sampled_from(["{{x}}", "{{input.x}}", "{{state}}", "hi"]),
                               "output": st.sampled_from(["reply", "x"]),
                               "responses": st.lists(st.sampled_from(["ok", "\x00", "ﬃ" * 50]) | any_text,
                                                     min_size=1, max_size=2)}),
    ),
    min_size=1,
    max_size=3,
).map(lambda found: [{"id": f"n{i}", **node} for i, node in enumerate(found)])
checks = st.lists(
    st.fixed_dictionaries(
        {"type": st.sampled_from(["contains", "regex", "expression", "max_cost_usd", "equals"]) | any_text},
        optional={"name": any_text, "target": any_text, "value": json_values | any_text,
                  "case_sensitive": json_values, "id": any_text},
    ),
    max_size=3,
)
shaped = {
    "workflow": st.fixed_dictionaries({}, optional={"name": any_text, "nodes": nodes | json_values,
                                                   "checks": checks | json_values, "gate": json_values})
    | st.fixed_dictionaries({"name": st.sampled_from(["Fuzz", "W1", "W2", "a/b"]) | any_text, "nodes": runnable_nodes},
                            optional={"checks": checks, "gate": st.fixed_dictionaries(
                                {"min_pass_rate": st.floats(0, 1) | json_values})}),
    "run": st.fixed_dictionaries({"input": st.dictionaries(st.sampled_from(["x", "ticket"]), tame_values, max_size=2)
                                  | st.dictionaries(st.sampled_from(["x", "ticket"]) | any_text, json_values, max_size=4)
                                  | json_values},
                                 optional={"wait": st.booleans() | json_values}),
    "evaluation": st.fixed_dictionaries({}, optional={"name": any_text, "dataset": st.lists(
        st.fixed_dictionaries({}, optional={"input": json_values, "expected": json_values}), max_size=3)
        | json_values, "results": json_values}),
    "checks": st.fixed_dictionaries({}, optional={"checks": checks | json_values}),
    "gate": st.fixed_dictionaries({}, optional={"min_pass_rate": json_values}),
    "release": st.fixed_dictionaries({}, optional={"environment": any_text | json_values}),
    "price": st.fixed_dictionaries({}, optional={"input_per_mtok": json_values, "output_per_mtok": json_values}),
}


def _raw(value: Any) -> bytes:
    # ensure_ascii escapes lone surrogates as \udXXX; allow_nan writes NaN and Infinity, as clients do.
    return json.dumps(value, allow_nan=True).encode()


def _body(kind: str) -> st.SearchStrategy[bytes]:
    well_formed = shaped[kind].map(_raw)
    return st.one_of(well_formed, well_formed, well_formed, json_values.map(_raw), st.sampled_from(NASTY_BODIES),
                     st.binary(max_size=60))


ENDPOINTS = [
    ("POST", "/api/workflows", "workflow"),
    ("PATCH", "/api/workflows/{name}", "workflow"),
    ("PUT", "/api/workflows/{name}/checks", "checks"),
    ("PUT", "/api/workflows/{name}/gate", "gate"),
    ("POST", "/api/workflows/{name}/runs", "run"),
    ("POST", "/api/workflows/{name}/evaluations", "evaluation"),
    ("POST", "/api/workflows/{name}/release", "release"),
    ("DELETE", "/api/workflows/{name}", "workflow"),
    ("PUT", "/api/prices/{name}", "price"),
    ("DELETE", "/api/prices/{name}", "price"),
]
CONTENT_TYPES = st.sampled_from(["application/json", "application/json; charset=utf-8", "text/plain", ""])
names = st.sampled_from(["Fuzz", "Fuzz", "W1", "W2", "a%2Fb", "gpt-4o-mini"]) | any_text.map(
    lambda s: quote(s.encode("utf-8", "surrogatepass"), safe=""))

FUZZ_NODES = [{"id": "copy", "type": "set", "values": {"x": "input.get('x')"}},
              {"id": "reply", "type": "llm", "provider": "mock", "model": "gpt-4o-mini", "prompt": "{{x}}",
               "output": "reply", "responses": ["ok"]}]


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(endpoint=st.sampled_from(ENDPOINTS), data=st.data(), content_type=CONTENT_TYPES)
def _fuzz(api: Any, endpoint: tuple[str, str, str], data: st.DataObject, content_type: str) -> None:
    method, template, kind = endpoint
    path = template.format(name=data.draw(names, label="name"))
    body = data.draw(_body(kind), label="body")
    response = api.request(method, path, content=body, headers={"Content-Type": content_type} if content_type else {})
    assert response.status_code < 500, (method, path, body[:300], response.status_code, response.text[:500])


def test_write_endpoints__no_body_path_or_content_type_gets_a_5xx_and_lists_still_work(api):
    created = api.post("/api/workflows", json={"name": "Fuzz", "nodes": FUZZ_NODES,
                                                "checks": [{"name": "ok", "type": "contains", "target": "reply",
                                                            "value": "ok"}]})
    assert created.status_code == 201, created.text
    _fuzz(api)
    for path in ("/api/workflows", "/api/runs", "/api/prices", "/api/dashboard/metrics"):
        response = api.get(path)
        assert response.status_code == 200, (path, response.text)
    for workflow in api.get("/api/workflows").json():
        for tail in ("", "/versions", "/evaluations", "/releases"):
            response = api.get(f"/api/workflows/{workflow['id']}{tail}")
            assert response.status_code == 200, (tail, response.text)
    for run in api.get("/api/runs", params={"limit": 1000}).json():
        assert run["status"] in ("success", "failed")
        assert api.get(f"/api/runs/{run['id']}").status_code == 200
