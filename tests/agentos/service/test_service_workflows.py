"""Workflows over HTTP: create, read by id or name, versions, checks, gate, errors, isolation."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import httpx

REFERENCE_INVALID_CHECKS = (
    "Invalid checks: check 1: name is required; check 2: unknown type 'looks_good'; "
    "check 3: 'contains' needs a target state variable; check 4: invalid regex (missing ), "
    "unterminated subpattern at position 0); check 5: 'max_cost_usd' needs a numeric value; "
    "check 6: invalid expression (Function 'open' is not allowed)"
)

INVALID_BATCH = [
    {"type": "contains", "target": "draft_reply", "value": "refund"},
    {"name": "vibes", "type": "looks_good"},
    {"name": "no target", "type": "contains", "value": "refund"},
    {"name": "bad regex", "type": "regex", "target": "category", "value": "("},
    {"name": "budget", "type": "max_cost_usd", "value": "cheap"},
    {"name": "sneaky", "type": "expression", "value": "open('/etc/passwd')"},
]


def test_create_workflow__returns_201_with_version_1_and_check_ids(api, support_nodes, six_checks):
    response = api.post("/api/workflows", json={"name": "Support Triage Crew", "nodes": support_nodes,
                                                "checks": six_checks})
    assert response.status_code == 201
    body = response.json()
    assert set(body) == {"id", "name", "version", "nodes", "checks", "gate", "created_at", "updated_at"}
    assert len(body["id"]) == 12 and int(body["id"], 16) >= 0
    assert body["version"] == 1
    assert body["gate"] is None
    assert body["nodes"] == support_nodes
    assert [c["name"] for c in body["checks"]] == [c["name"] for c in six_checks]
    assert all(c["id"].startswith("chk_") and len(c["id"]) == 14 for c in body["checks"])
    budget = next(c for c in body["checks"] if c["type"] == "max_cost_usd")
    assert budget["target"] == "" and budget["case_sensitive"] is False


def test_get_workflow__by_id_and_by_url_encoded_exact_name(api, support_workflow):
    by_id = api.get(f"/api/workflows/{support_workflow['id']}").json()
    by_name = api.get(f"/api/workflows/{quote('Support Triage Crew')}").json()
    assert by_id == by_name == support_workflow
    missing = api.get(f"/api/workflows/{quote('support triage crew')}")
    assert missing.status_code == 404
    assert missing.json() == {"detail": "Workflow 'support triage crew' not found"}


def test_list_workflows__returns_array_of_the_workspace(api, support_workflow):
    api.post("/api/workflows", json={"name": "Second", "nodes": []})
    listed = api.get("/api/workflows").json()
    assert [w["name"] for w in listed] == ["Support Triage Crew", "Second"]


def test_create_workflow__duplicate_name_is_409(api, support_workflow, support_nodes):
    response = api.post("/api/workflows", json={"name": "Support Triage Crew", "nodes": support_nodes})
    assert response.status_code == 409
    assert response.json() == {"detail": "A workflow named 'Support Triage Crew' already exists"}


def test_version__bumps_on_nodes_checks_and_gate_changes_only(api, support_workflow, six_checks):
    wf = support_workflow["id"]
    renamed = api.patch(f"/api/workflows/{wf}", json={"name": "Crew"}).json()
    assert (renamed["name"], renamed["version"]) == ("Crew", 1)
    v2 = api.put(f"/api/workflows/{wf}/checks", json={"checks": six_checks[:2]}).json()
    assert v2["version"] == 2 and len(v2["checks"]) == 2
    same = api.put("/api/workflows/Crew/checks", json={"checks": six_checks[:2]}).json()
    assert same["version"] == 2
    v3 = api.put(f"/api/workflows/{wf}/gate", json={"min_pass_rate": 0.9}).json()
    assert v3["version"] == 3 and v3["gate"] == {"min_pass_rate": 0.9}
    v4 = api.patch(f"/api/workflows/{wf}", json={"nodes": [{"id": "only", "type": "set",
                                                             "values": {"x": "1 + 1"}}]}).json()
    assert v4["version"] == 4
    v5 = api.patch(f"/api/workflows/{wf}", json={"gate": None}).json()
    assert v5["version"] == 5 and v5["gate"] is None
    versions = api.get(f"/api/workflows/{wf}/versions").json()
    assert [v["version"] for v in versions] == [1, 2, 3, 4, 5]
    assert len(versions[0]["checks"]) == 6 and len(versions[1]["checks"]) == 2
    assert versions[2]["gate"] == {"min_pass_rate": 0.9} and versions[4]["gate"] is None
    assert versions[3]["nodes"][0]["id"] == "only"


def test_put_checks__invalid_batch_is_400_with_every_problem_and_saves_nothing(api, support_workflow):
    wf = support_workflow["id"]
    response = api.put(f"/api/workflows/{wf}/checks", json={"checks": INVALID_BATCH})
    assert response.status_code == 400
    assert response.json() == {"detail": REFERENCE_INVALID_CHECKS}
    after = api.get(f"/api/workflows/{wf}").json()
    assert after["version"] == 1 and len(after["checks"]) == 6


def test_create_workflow__invalid_checks_is_400_and_creates_nothing(api, support_nodes):
    response = api.post("/api/workflows", json={"name": "Bad", "nodes": support_nodes, "checks": INVALID_BATCH})
    assert response.status_code == 400
    assert response.json() == {"detail": REFERENCE_INVALID_CHECKS}
    assert api.get("/api/workflows/Bad").status_code == 404


def test_create_workflow__bad_definition_is_422_naming_each_problem(api):
    nodes: list[dict[str, Any]] = [
        {"id": "a", "type": "teleport"},
        {"id": "b", "type": "llm", "provider": "mock", "responses": ["hi"], "prompt": "x", "output": "y"},
        {"id": "c", "type": "condition", "expression": "open('x')", "then": "nowhere"},
        {"id": "c", "type": "set", "values": {"v": "1"}},
        {"id": "d", "type": "set", "values": {"v": "1"}, "next": "zz"},
        {"id": "e", "type": "llm", "provider": "acme", "model": "m", "prompt": "p", "output": "o"},
        {"id": "f", "type": "http", "method": "GET"},
    ]
    response = api.post("/api/workflows", json={"name": "Broken", "nodes": nodes})
    assert response.status_code == 422
    detail = response.json()["detail"]
    assert detail.startswith("Invalid workflow: ")
    for fragment in (
        "node 'a': unknown node type 'teleport'",
        "node 'b': 'model' is required",
        "node 'c': 'expression': invalid expression (Function 'open' is not allowed)",
        "node 'c': 'then' points to unknown node 'nowhere'",
        "node 4: duplicate node id 'c'",
        "node 'd': 'next' points to unknown node 'zz'",
        "node 'e': unknown provider 'acme'",
        "node 'f': 'url' is required",
        "node 'f': 'output' is required",
    ):
        assert fragment in detail
    assert api.get("/api/workflows/Broken").status_code == 404


def test_gate__invalid_value_is_422(api, support_workflow):
    response = api.put(f"/api/workflows/{support_workflow['id']}/gate", json={"min_pass_rate": 1.5})
    assert response.status_code == 422
    assert "min_pass_rate" in response.json()["detail"]


def test_delete_workflow__then_404(api, support_workflow):
    assert api.delete("/api/workflows/Support Triage Crew").status_code == 204
    response = api.get(f"/api/workflows/{support_workflow['id']}")
    assert response.status_code == 404
    assert response.json() == {"detail": f"Workflow '{support_workflow['id']}' not found"}


def test_auth__missing_or_unknown_key_is_401(api, service):
    with httpx.Client(base_url=service.url) as anonymous:
        missing = anonymous.get("/api/workflows")
        assert missing.status_code == 401 and "Authorization: Bearer" in missing.json()["detail"]
        unknown = anonymous.get("/api/workflows", headers={"Authorization": "Bearer aos_live_nope"})
        assert unknown.status_code == 401 and unknown.json()["detail"].startswith("Invalid API key")


def test_workspace_isolation__other_workspace_ids_are_404(new_api, support_nodes):
    alice, bob = new_api(), new_api()
    wf = alice.post("/api/workflows", json={"name": "Private", "nodes": support_nodes}).json()
    run = alice.post(f"/api/workflows/{wf['id']}/runs", json={"input": {"ticket": "x"}}).json()
    for path in (f"/api/workflows/{wf['id']}", "/api/workflows/Private", f"/api/runs/{run['id']}",
                 f"/api/workflows/{wf['id']}/versions"):
        response = bob.get(path)
        assert response.status_code == 404, path
        assert "Private" not in response.text or path.endswith("Private")
    assert bob.post(f"/api/workflows/{wf['id']}/runs", json={"input": {}}).status_code == 404
    assert bob.get("/api/workflows").json() == []
    assert bob.get("/api/runs").json() == []
    assert bob.get("/api/dashboard/metrics").json()["total_runs"] == 0
    # the same name is free in another workspace
    assert bob.post("/api/workflows", json={"name": "Private", "nodes": []}).status_code == 201


def test_unknown_fields_and_bad_json__answer_a_detail_string(api):
    response = api.post("/api/workflows", json={"name": "x", "nodez": []})
    assert response.status_code == 422
    assert isinstance(response.json()["detail"], str) and "nodez" in response.json()["detail"]
    garbled = api.post("/api/workflows", content=b"{", headers={"Content-Type": "application/json"})
    assert garbled.status_code == 422 and isinstance(garbled.json()["detail"], str)


def test_workflow_name_with_a_slash__resolves_url_encoded(api, support_nodes):
    created = api.post("/api/workflows", json={"name": "support/triage v2", "nodes": support_nodes}).json()
    encoded = quote("support/triage v2", safe="")
    assert api.get(f"/api/workflows/{encoded}").json()["id"] == created["id"]
    run = api.post(f"/api/workflows/{encoded}/runs", json={"input": {"ticket": "x"}})
    assert run.status_code == 201 and run.json()["workflow_id"] == created["id"]
