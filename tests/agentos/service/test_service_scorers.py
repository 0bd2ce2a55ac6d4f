"""Evaluation scorers (exact, similarity, rubric) on each item's final state, and the gate on their means."""

from __future__ import annotations

from typing import Any

import pytest
from rapidfuzz import fuzz
from tests.agentos.service.conftest import REPLY

EVALUATIONS = "/api/workflows/Support Triage Crew/evaluations"
DATASET = [
    {"item": "double charge", "input": {"ticket": "I was double charged"},
     "expected": {"category": "Refund", "draft_reply": "We will process your refund today."}},
    {"item": "crash", "input": {"ticket": "App crash on login"},
     "expected": {"category": "technical", "draft_reply": "Sorry about the crash, we are on it."}},
    {"item": "where", "input": {"ticket": "Where is my refund?"}, "expected": "refund"},
]
EXACT = {"name": "category", "type": "exact", "target": "category"}
SIMILAR = {"name": "reply", "type": "similarity", "target": "draft_reply", "min": 0.9}
TONE_GRADES = [
    {"match": "traceback", "text": "0.1 - a stack trace is no reply", "input_tokens": 2000, "output_tokens": 10},
    {"text": "0.9 - polite and on topic", "input_tokens": 1000, "output_tokens": 10},
]
TONE = {"name": "tone", "type": "rubric", "target": "draft_reply", "rubric": "Polite, and answers the ticket",
        "model": "mock/gpt-4o-mini", "responses": TONE_GRADES}


def evaluate(api: Any, scorers: list[dict[str, Any]], dataset: list[dict[str, Any]] = DATASET) -> Any:
    response = api.post(EVALUATIONS, json={"name": "scored", "dataset": dataset, "scorers": scorers})
    assert response.status_code == 201, response.text
    return response.json()


def test_exact_and_similarity_scorers__score_each_item_against_its_expected_output(api, support_workflow):
    ev = evaluate(api, [EXACT, SIMILAR])
    by_item = {item["item"]: {s["name"]: s for s in item["scores"]} for item in ev["items"]}
    # exact folds case: "refund" equals "Refund"; the third item's expected is the whole value
    assert [by_item[i]["category"]["score"] for i in ("double charge", "crash", "where")] == [1.0, 1.0, 1.0]
    # the crash item's reply is a traceback, and the third item's expected names no draft_reply
    first = fuzz.ratio(REPLY.casefold(), "we will process your refund today.") / 100
    crash = fuzz.ratio("traceback (most recent call last): oops", "sorry about the crash, we are on it.") / 100
    third = fuzz.ratio(REPLY.casefold(), "refund") / 100
    scores = [by_item[i]["reply"]["score"] for i in ("double charge", "crash", "where")]
    assert scores == pytest.approx([first, crash, third], abs=1e-6)
    assert [by_item[i]["reply"]["passed"] for i in ("double charge", "crash", "where")] == [
        first >= 0.9, False, False]
    assert ev["scores"] == [
        {"name": "category", "type": "exact", "mean": 1.0, "passed": 3, "total": 3},
        {"name": "reply", "type": "similarity", "mean": pytest.approx((first + crash + third) / 3, abs=1e-6),
         "passed": 1 if first >= 0.9 else 0, "total": 3},
    ]
    assert ev["checks_total"] == 18, "the workflow's checks run as before"
    assert api.get(f"/api/evaluations/{ev['id']}").json() == ev


def test_evaluation_without_scorers__keeps_the_reference_shape(api, support_workflow):
    ev = evaluate_plain = api.post(EVALUATIONS, json={"name": "plain", "dataset": DATASET}).json()
    assert "scores" not in evaluate_plain
    assert all("scores" not in item for item in ev["items"])


def test_rubric_scorer__grades_through_the_model_and_counts_its_cost(api, support_workflow):
    plain = api.post(EVALUATIONS, json={"name": "plain", "dataset": DATASET}).json()
    ev = evaluate(api, [TONE])
    grades = {item["item"]: item["scores"][0] for item in ev["items"]}
    assert grades["crash"]["score"] == 0.1 and grades["crash"]["passed"] is False
    assert grades["where"]["score"] == 0.9 and grades["where"]["detail"] == "0.9 - polite and on topic"
    # gpt-4o-mini: $0.15 in, $0.60 out per million tokens
    assert grades["crash"]["cost_usd"] == pytest.approx((2000 * 0.15 + 10 * 0.60) / 1e6)
    assert grades["where"]["cost_usd"] == pytest.approx((1000 * 0.15 + 10 * 0.60) / 1e6)
    grading = sum(g["cost_usd"] for g in grades.values())
    assert ev["cost_usd"] == pytest.approx(plain["cost_usd"] + grading, abs=1e-8)
    assert ev["scores"] == [{"name": "tone", "type": "rubric", "mean": pytest.approx(1.9 / 3, abs=1e-6),
                             "passed": 2, "total": 3}]


def test_rubric_scorer__the_same_evaluation_again_reads_kept_grades_without_calling_the_model(
    api, support_workflow, model_stub, monkeypatch
):
    monkeypatch.setattr(model_stub, "reply", "0.75 - fine")
    tone = {"name": "tone", "type": "rubric", "target": "draft_reply", "rubric": "Polite",
            "model": "openai/gpt-4o-mini"}
    first = evaluate(api, [tone])
    assert len(model_stub.requests) == 3, "one grading call per item (their prompts differ by expected output)"
    assert model_stub.requests[0]["body"]["model"] == "gpt-4o-mini"
    assert "Polite" in model_stub.requests[0]["body"]["messages"][-1]["content"]
    again = evaluate(api, [tone])
    assert len(model_stub.requests) == 3, "no second call for the same prompt"
    assert again["scores"] == first["scores"] == [
        {"name": "tone", "type": "rubric", "mean": 0.75, "passed": 3, "total": 3}]
    assert first["cost_usd"] - again["cost_usd"] == pytest.approx(3 * (1000 * 0.15 + 500 * 0.60) / 1e6)


def test_gate__blocks_on_a_scorer_mean_below_its_minimum_and_releases_above(api, support_workflow):
    gated = api.put("/api/workflows/Support Triage Crew/gate", json={"scorers": {"tone": 0.8}})
    assert gated.status_code == 200 and gated.json()["gate"] == {"scorers": {"tone": 0.8}}
    evaluate(api, [EXACT])
    lacking = api.post("/api/workflows/Support Triage Crew/release")
    assert lacking.status_code == 422
    assert "has no scorer 'tone'" in lacking.json()["detail"]
    evaluate(api, [TONE])
    low = api.post("/api/workflows/Support Triage Crew/release")
    assert low.status_code == 422
    assert low.json() == {"detail": "eval gate: scorer 'tone' mean 0.63 is below the required 0.80"
                                    " — deployment blocked"}
    kind = [dict(TONE_GRADES[1])]
    evaluate(api, [TONE | {"responses": kind}])
    released = api.post("/api/workflows/Support Triage Crew/release")
    assert released.status_code == 201, released.text
    assert released.json()["status"] == "released"


def test_gate__with_a_pass_rate_and_scorers_needs_both(api, support_workflow):
    api.put("/api/workflows/Support Triage Crew/gate", json={"min_pass_rate": 0.5, "scorers": {"category": 1}})
    evaluate(api, [EXACT])
    assert api.post("/api/workflows/Support Triage Crew/release").status_code == 201
    # a gate change is a new version: release the evaluated one, under the stricter gate
    api.put("/api/workflows/Support Triage Crew/gate", json={"min_pass_rate": 0.9, "scorers": {"category": 1}})
    blocked = api.post("/api/workflows/Support Triage Crew/release", json={"version": 2})
    assert blocked.status_code == 422
    assert blocked.json()["detail"].startswith("eval gate: check pass-rate")
    api.put("/api/workflows/Support Triage Crew/gate", json={"min_pass_rate": 0.5, "scorers": {"reply": 0.5}})
    lacking = api.post("/api/workflows/Support Triage Crew/release", json={"version": 2})
    assert lacking.status_code == 422 and "has no scorer 'reply'" in lacking.json()["detail"]


def test_bad_scorers_and_scorer_gates__are_422_naming_the_place(api, support_workflow):
    fuzzy = api.post(EVALUATIONS, json={"name": "x", "dataset": DATASET, "scorers": [
        EXACT, {"name": "f", "type": "fuzzy", "target": "draft_reply"}]})
    assert fuzzy.status_code == 422
    assert fuzzy.json()["detail"] == (
        "Invalid evaluation: scorer 2: unknown type 'fuzzy' (expected one of exact, similarity, rubric)")
    typo = api.post(EVALUATIONS, json={"name": "x", "dataset": DATASET, "scorers": [
        EXACT | {"threshold": 1}, SIMILAR | {"min": 2}, {"name": "t", "type": "rubric", "target": "draft_reply"}]})
    assert typo.json()["detail"] == (
        "Invalid evaluation: scorer 1: unknown field 'threshold' for an exact scorer (the fields are name, type,"
        " target, case_sensitive); scorer 2: 'min' must be a number from 0 to 1; scorer 3: 'rubric' is required"
        " (the text the output is graded against); scorer 3: 'model' is required (\"provider/model\" such as"
        " \"openai/gpt-4o-mini\", or a model name with 'provider' as llm nodes name them)")
    no_expected = api.post(EVALUATIONS, json={"name": "x", "dataset": [{"input": {"ticket": "hi"}}],
                                              "scorers": [EXACT]})
    assert no_expected.json()["detail"] == (
        "Invalid evaluation: scorer 1: an exact scorer compares with each item's 'expected', and item 1 has none")
    reported = api.post(EVALUATIONS, json={"name": "x", "results": [{"item": "a", "status": "success"}],
                                           "scorers": [EXACT]})
    assert reported.status_code == 422 and "'scorers' score the runs of a 'dataset'" in reported.json()["detail"]
    gate = api.put("/api/workflows/Support Triage Crew/gate", json={"scorers": {"tone": "high"}})
    assert gate.status_code == 422
    assert gate.json()["detail"].startswith("Invalid gate: gate.scorers.tone: must be a number from 0 to 1")
    assert api.put("/api/workflows/Support Triage Crew/gate", json={"scorers": []}).status_code == 422
    assert api.get(EVALUATIONS).json() == [], "nothing was evaluated"


def test_rubric_scorer__items_graded_with_one_prompt_at_once_both_complete(
    api, support_workflow, model_stub, monkeypatch
):
    monkeypatch.setattr(model_stub, "reply", "0.6 - fine")
    tone = {"name": "tone", "type": "rubric", "target": "draft_reply", "rubric": "Polite",
            "model": "gpt-4o-mini", "provider": "openai"}
    twins = [{"item": f"twin {n}", "input": {"ticket": "Where is my refund?"}} for n in range(8)]
    ev = evaluate(api, [tone], twins)
    assert ev["status"] == "completed", ev["error"]
    assert [item["scores"][0]["score"] for item in ev["items"]] == [0.6] * 8
    calls = len(model_stub.requests)
    assert evaluate(api, [tone], twins)["scores"] == ev["scores"]
    assert len(model_stub.requests) == calls, "the kept answer serves every twin the second time"
