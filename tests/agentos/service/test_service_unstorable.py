"""JSON that cannot be stored (NaN, Infinity, a lone surrogate, a NUL) is refused at the edge.

A body carrying one answers 422 with a detail naming where it is; a node producing one
fails its run with that reason; either way the workspace's lists keep working.
"""

from __future__ import annotations

import pytest

# Raw bodies: json.dumps would refuse NaN only with allow_nan=False, and clients send these.
BAD_VALUES = {
    "NaN": "NaN",
    "Infinity": "Infinity",
    "-Infinity": "-Infinity",
    "a lone surrogate": '"\\ud800"',
    "a NUL character": '"a\\u0000b"',
}


@pytest.mark.parametrize("label", list(BAD_VALUES))
def test_run_input__unstorable_json_is_refused_with_422_and_the_lists_still_work(api, label):
    wf = api.post("/api/workflows", json={"name": "Echo", "nodes": [
        {"id": "copy", "type": "set", "values": {"x": "input.get('x')"}}]}).json()
    body = '{"input": {"ticket": {"x": [1, ' + BAD_VALUES[label] + "]}}}"
    response = api.post(f"/api/workflows/{wf['id']}/runs", content=body,
                        headers={"Content-Type": "application/json"})
    assert response.status_code == 422, response.text
    assert "input.ticket.x[1]" in response.json()["detail"]
    assert api.get("/api/runs").status_code == 200
    assert api.get("/api/runs").json() == []
    assert api.get("/api/workflows").status_code == 200


@pytest.mark.parametrize("label", ["NaN", "a lone surrogate", "a NUL character"])
def test_workflow_body__unstorable_json_is_refused_with_422(api, label):
    body = '{"name": "W", "nodes": [{"id": "a", "type": "set", "values": {"x": ' + BAD_VALUES[label] + "}}]}"
    response = api.post("/api/workflows", content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 422, response.text
    assert "nodes[0].values.x" in response.json()["detail"]
    assert api.get("/api/workflows").status_code == 200


@pytest.mark.parametrize(
    "expression",
    ["float('nan')", "float('inf')", "1e308 * 10", r"'\ud800'", r"'a\x00b'", "[{'k': float('-inf')}]", r"{'\ud800': 1}"],
)
def test_set_node__producing_an_unstorable_value_fails_the_run_with_the_reason(api, expression):
    nodes = [{"id": "bad", "type": "set", "values": {"x": expression}}]
    wf = api.post("/api/workflows", json={"name": "Bad set", "nodes": nodes}).json()
    response = api.post(f"/api/workflows/{wf['id']}/runs", json={"input": {}})
    assert response.status_code == 201, response.text
    run = response.json()
    assert run["status"] == "failed"
    assert run["error"].startswith("node 'bad': value 'x' cannot be stored")
    assert api.get(f"/api/runs/{run['id']}").json()["status"] == "failed"
    listed = api.get("/api/runs")
    assert listed.status_code == 200 and [r["id"] for r in listed.json()] == [run["id"]]


@pytest.mark.parametrize(
    ("method", "path"),
    [("POST", "/api/workflows/a%00b/runs"), ("PATCH", "/api/workflows/a%00b"), ("GET", "/api/runs/a%00"),
     ("GET", "/api/runs?workflow=a%00b"), ("PUT", "/api/prices/gpt%00")],
)
def test_url__a_nul_in_the_path_or_query_is_a_400_with_a_detail(api, method, path):
    response = api.request(method, path, json={})
    assert response.status_code == 400, response.text
    assert "NUL" in response.json()["detail"]
    assert api.get("/api/runs").status_code == 200


def test_run_input__nested_past_the_depth_cap_is_refused_and_just_under_it_is_stored(api):
    wf = api.post("/api/workflows", json={"name": "Deep", "nodes": [
        {"id": "copy", "type": "set", "values": {"x": "input"}}]}).json()
    deep = '{"input": {"x": ' + "[" * 950 + "]" * 950 + "}}"
    response = api.post(f"/api/workflows/{wf['id']}/runs", content=deep, headers={"Content-Type": "application/json"})
    assert response.status_code == 422, response.text
    assert "nested more than 100 levels deep" in response.json()["detail"]
    assert len(response.json()["detail"]) < 300
    fine = '{"input": {"x": ' + "[" * 90 + "]" * 90 + "}}"
    response = api.post(f"/api/workflows/{wf['id']}/runs", content=fine, headers={"Content-Type": "application/json"})
    assert response.status_code == 201 and response.json()["status"] == "success"
    assert api.get("/api/runs").status_code == 200
