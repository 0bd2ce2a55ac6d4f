"""Evaluations (dataset and reported), comparisons, and the release gate."""

from __future__ import annotations

from typing import Any

import pytest

DATASET = [
    {"input": {"ticket": "I was double charged", "order_id": "GB204815"}},
    {"input": {"ticket": "App crash on login"}},
    {"input": {"ticket": "Where is my refund?"}},
]


def reported(passed: int, total: int) -> list[dict[str, Any]]:
    """`total` checks over ten items, `passed` of them passing."""
    results = [{"item": f"trial-{i}", "status": "success", "checks": []} for i in range(10)]
    for n in range(total):
        results[n % 10]["checks"].append({"name": f"check-{n // 10}", "passed": n < passed})
    return results


def test_dataset_evaluation__runs_the_current_version_once_per_item(api, support_workflow):
    response = api.post("/api/workflows/Support Triage Crew/evaluations", json={"name": "nightly",
                                                                                "dataset": DATASET})
    assert response.status_code == 201
    ev = response.json()
    assert (ev["status"], ev["source"], ev["workflow_version"], ev["items_total"]) == (
        "completed", "dataset", 1, 3)
    # items 1 and 3: 5 of 6 checks; the crash item leaks a Traceback, mentions no refund: 3 of 6
    assert (ev["checks_passed"], ev["checks_total"]) == (13, 18)
    assert ev["check_pass_rate"] == pytest.approx(13 / 18, abs=1e-6)
    assert ev["success_rate"] == 1.0
    assert ev["cost_usd"] > 0
    per_check = {c["name"]: c for c in ev["per_check"]}
    assert per_check["Mentions the refund"] == {"name": "Mentions the refund", "passed": 2, "total": 3,
                                                "pass_rate": pytest.approx(2 / 3, abs=1e-6)}
    assert per_check["Reply is substantial"]["passed"] == 0
    runs = api.get("/api/runs", params={"workflow": "Support Triage Crew"}).json()
    assert sorted(r["id"] for r in runs) == sorted(item["run_id"] for item in ev["items"])
    assert api.get(f"/api/evaluations/{ev['id']}").json() == ev
    assert [e["id"] for e in api.get("/api/workflows/Support Triage Crew/evaluations").json()] == [ev["id"]]


def test_reported_evaluation__is_completed_immediately(api, support_workflow):
    results = [
        {"item": "scene-a#1", "status": "success", "checks": [{"name": "fixed", "passed": True},
                                                              {"name": "told", "passed": False}],
         "cost_usd": 0.01, "duration_ms": 1200},
        {"item": "scene-a#2", "status": "failed", "checks": [{"name": "fixed", "passed": False}]},
    ]
    ev = api.post(f"/api/workflows/{support_workflow['id']}/evaluations",
                  json={"name": "ancha run", "results": results}).json()
    assert (ev["status"], ev["source"]) == ("completed", "reported")
    assert ev["check_pass_rate"] == pytest.approx(1 / 3, abs=1e-6)
    assert ev["success_rate"] == 0.5 and ev["cost_usd"] == pytest.approx(0.01)


def test_evaluation__invalid_bodies_are_422_and_unknown_ids_404(api, support_workflow):
    both = api.post("/api/workflows/Support Triage Crew/evaluations", json={"name": "x", "dataset": DATASET,
                                                                           "results": []})
    assert both.status_code == 422
    bad = api.post("/api/workflows/Support Triage Crew/evaluations",
                   json={"name": "x", "results": [{"item": "a", "status": "meh", "checks": [{"name": 1}]}]})
    assert bad.status_code == 422
    assert bad.json()["detail"] == (
        "Invalid evaluation: result 1: 'status' must be 'success' or 'failed'; "
        "result 1: 'checks' must be a list of {\"name\": str, \"passed\": bool}"
    )
    missing = api.get("/api/evaluations/abcdefabcdef")
    assert missing.status_code == 404 and missing.json() == {"detail": "Evaluation 'abcdefabcdef' not found"}


def test_compare__names_regressed_and_improved_checks_item_by_item(api, support_workflow):
    base = api.post("/api/workflows/Support Triage Crew/evaluations", json={"name": "base", "results": [
        {"item": "a", "status": "success", "checks": [{"name": "refund", "passed": True},
                                                      {"name": "tone", "passed": False}]},
        {"item": "b", "status": "success", "checks": [{"name": "refund", "passed": True}]},
    ]}).json()
    candidate = api.post("/api/workflows/Support Triage Crew/evaluations", json={"name": "cand", "results": [
        {"item": "a", "status": "success", "checks": [{"name": "refund", "passed": False},
                                                      {"name": "tone", "passed": True}]},
        {"item": "c", "status": "success", "checks": [{"name": "refund", "passed": True}]},
    ]}).json()
    diff = api.get(f"/api/evaluations/{base['id']}/compare/{candidate['id']}").json()
    assert diff["items"] == [{"item": "a", "base_status": "success", "candidate_status": "success",
                              "regressed": ["refund"], "improved": ["tone"]}]
    assert (diff["regressions"], diff["improvements"]) == (1, 1)
    assert diff["only_in_base"] == ["b"] and diff["only_in_candidate"] == ["c"]
    assert diff["base"]["id"] == base["id"] and diff["candidate"]["id"] == candidate["id"]
    assert diff["check_pass_rate_delta"] == pytest.approx(2 / 3 - 2 / 3, abs=1e-6)


def test_release__gate_blocks_with_the_exact_reference_text_and_records_the_attempt(api, support_workflow):
    wf = api.put("/api/workflows/Support Triage Crew/gate", json={"min_pass_rate": 0.9}).json()
    assert wf["version"] == 2
    none_yet = api.post("/api/workflows/Support Triage Crew/release", json={"environment": "production"})
    assert none_yet.status_code == 422
    assert none_yet.json() == {"detail": "eval gate: no completed evaluation of version 2 — deployment blocked"}
    ev = api.post(f"/api/workflows/{wf['id']}/evaluations", json={"name": "weak", "results": reported(41, 100)})
    assert ev.json()["check_pass_rate"] == pytest.approx(0.41)
    blocked = api.post(f"/api/workflows/{wf['id']}/release", json={"environment": "production"})
    assert blocked.status_code == 422
    assert blocked.json() == {
        "detail": "eval gate: check pass-rate 41.0% is below the required 90.0% — deployment blocked"
    }
    good = api.post(f"/api/workflows/{wf['id']}/evaluations", json={"name": "strong",
                                                                    "results": reported(95, 100)}).json()
    released = api.post(f"/api/workflows/{wf['id']}/release", json={"environment": "production"})
    assert released.status_code == 201
    body = released.json()
    assert {"id", "environment", "version", "evaluation_id", "created_at", "status"} <= set(body)
    assert (body["environment"], body["version"], body["evaluation_id"], body["status"]) == (
        "production", 2, good["id"], "released")
    history = api.get(f"/api/workflows/{wf['id']}/releases").json()
    assert [r["status"] for r in history] == ["released", "blocked", "blocked"]
    assert history[1]["detail"] == blocked.json()["detail"]
    assert history[1]["evaluation_id"] == ev.json()["id"]


def test_release__gate_reads_only_evaluations_of_the_current_version(api, support_workflow):
    api.put("/api/workflows/Support Triage Crew/gate", json={"min_pass_rate": 0.5})
    api.post("/api/workflows/Support Triage Crew/evaluations", json={"name": "v2", "results": reported(90, 100)})
    assert api.post("/api/workflows/Support Triage Crew/release", json={}).status_code == 201
    api.put("/api/workflows/Support Triage Crew/checks", json={"checks": []})  # version 3
    stale = api.post("/api/workflows/Support Triage Crew/release", json={"environment": "staging"})
    assert stale.json() == {"detail": "eval gate: no completed evaluation of version 3 — deployment blocked"}


def test_release__without_a_gate_is_always_allowed(api, support_workflow):
    response = api.post("/api/workflows/Support Triage Crew/release", json={"environment": "staging"})
    assert response.status_code == 201
    assert (response.json()["evaluation_id"], response.json()["version"]) == (None, 1)


def test_dataset_evaluations__a_regressed_version_is_compared_and_blocked(api, support_workflow, support_nodes):
    import time

    base = api.post("/api/workflows/Support Triage Crew/evaluations",
                    json={"name": "v1", "dataset": DATASET[:1] + DATASET[2:]}).json()
    worse = [dict(n) for n in support_nodes]
    worse[2] = {**worse[2], "responses": [{"text": "Traceback: KeyError 'refund_id'"}]}
    api.patch("/api/workflows/Support Triage Crew", json={"nodes": worse, "gate": {"min_pass_rate": 0.8}})
    started = api.post("/api/workflows/Support Triage Crew/evaluations",
                       json={"name": "v2", "dataset": DATASET[:1] + DATASET[2:], "wait": False})
    assert started.status_code == 201 and started.json()["status"] == "running"
    deadline = time.monotonic() + 15
    while (candidate := api.get(f"/api/evaluations/{started.json()['id']}").json())["status"] == "running":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert candidate["status"] == "completed" and candidate["workflow_version"] == 2
    diff = api.get(f"/api/evaluations/{base['id']}/compare/{candidate['id']}").json()
    assert [row["regressed"] for row in diff["items"]] == [["No internal error leaked"]] * 2
    assert diff["regressions"] == 2 and diff["improvements"] == 0
    blocked = api.post("/api/workflows/Support Triage Crew/release", json={"environment": "production"})
    rate = candidate["checks_passed"] / candidate["checks_total"] * 100
    assert blocked.json() == {
        "detail": f"eval gate: check pass-rate {rate:.1f}% is below the required 80.0% — deployment blocked"
    }


def test_a_typo_in_a_dataset_item_is_refused_not_evaluated_as_an_empty_input(api, support_workflow):
    answer = api.post("/api/workflows/Support Triage Crew/evaluations",
                      json={"name": "typo", "dataset": [{"item": "crash", "inputs": {"ticket": "App crash"}}]})
    assert answer.status_code == 422
    assert answer.json()["detail"] == (
        "Invalid evaluation: item 1: unknown field 'inputs' (the fields are input, item, expected); "
        "item 1: 'input' is required (an object)")
    assert api.post("/api/workflows/Support Triage Crew/release").status_code == 201, "no evaluation, no gate: free"


def test_reported_results_and_their_checks_refuse_unknown_fields(api, support_workflow):
    answer = api.post("/api/workflows/Support Triage Crew/evaluations", json={"name": "x", "results": [
        {"item": "a", "status": "success", "score": 0.3, "checks": [{"name": "c", "passed": True, "weight": 2}]}]})
    assert answer.status_code == 422
    assert answer.json()["detail"] == (
        "Invalid evaluation: result 1: unknown field 'score' (the fields are item, status, checks, cost_usd, "
        "duration_ms); result 1: check 1: unknown field 'weight' (the fields are name, passed)")


def test_a_checks_unknown_field_is_refused_and_makes_no_new_version(api, support_workflow):
    before = api.get("/api/workflows/Support Triage Crew").json()["version"]
    answer = api.put("/api/workflows/Support Triage Crew/checks", json={"checks": [
        {"name": "cheap", "type": "max_cost_usd", "value": 0.05, "threshold": 0.8}]})
    # 400, as the reference answers every invalid check ("rejected with 400 and none of the batch is saved").
    assert answer.status_code == 400 and "unknown field 'threshold'" in answer.json()["detail"]
    assert api.get("/api/workflows/Support Triage Crew").json()["version"] == before


def test_a_dataset_item_may_carry_its_expected_output(api, support_workflow):
    answer = api.post("/api/workflows/Support Triage Crew/evaluations", json={"name": "with expected", "dataset": [
        {"item": "refund", "input": {"ticket": "Where is my refund?"}, "expected": {"draft_reply": "refund"}}]})
    assert answer.status_code == 201 and answer.json()["status"] == "completed"


def test_compare_refuses_evaluations_of_two_different_workflows(api, support_workflow, support_nodes):
    other = api.post("/api/workflows", json={"name": "Other Crew", "nodes": support_nodes}).json()
    results = [{"item": "a", "status": "success", "checks": [{"name": "c", "passed": True}]}]
    a = api.post("/api/workflows/Support Triage Crew/evaluations", json={"name": "a", "results": results}).json()
    b = api.post(f"/api/workflows/{other['id']}/evaluations", json={"name": "b", "results": results}).json()
    answer = api.get(f"/api/evaluations/{a['id']}/compare/{b['id']}")
    assert answer.status_code == 422
    assert answer.json()["detail"].startswith(f"Cannot compare evaluation {b['id']} with {a['id']}: they evaluate"
                                              " two different workflows")
