"""Runs over HTTP: fields, evals, node kinds, providers (mock, OpenAI and Anthropic stand-ins)."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest

RUN_FIELDS = {"id", "workflow_id", "workflow_version", "status", "input", "state", "error", "cost_usd",
              "duration_ms", "started_at", "finished_at", "evals"}


def test_run__success_carries_the_evals_summary_of_the_six_checks(api, support_workflow):
    response = api.post(f"/api/workflows/{support_workflow['id']}/runs",
                        json={"input": {"ticket": "I was double charged", "order_id": "GB204815"}})
    assert response.status_code == 201
    run = response.json()
    assert set(run) == RUN_FIELDS
    assert len(run["id"]) == 12
    assert (run["status"], run["error"], run["workflow_version"]) == ("success", None, 1)
    assert run["state"] == {"category": "refund", "order_id": "GB204815",
                            "draft_reply": "We'll process your refund today."}
    # gpt-4o-mini: 1240 input and 301 output tokens at $0.15 / $0.60 per million
    assert run["cost_usd"] == pytest.approx((1240 * 0.15 + 301 * 0.60) / 1e6)
    assert run["started_at"].endswith("Z") and run["finished_at"] >= run["started_at"]
    evals = run["evals"]
    assert set(evals) == {"passed", "total", "results"}
    assert (evals["passed"], evals["total"]) == (5, 6)
    assert [set(r) for r in evals["results"]] == [{"id", "name", "type", "passed", "detail"}] * 6
    details = {r["name"]: (r["passed"], r["detail"]) for r in evals["results"]}
    assert details["Mentions the refund"] == (True, "'draft_reply' contains 'refund'")
    assert details["No internal error leaked"] == (True, "'draft_reply' does not contain 'Traceback'")
    assert details["Category is known"] == (True, "'category' matches /^(billing|refund|technical)$/")
    assert details["Under budget"][0] is True and details["Under budget"][1].endswith("<= 0.05")
    assert details["Under 8 seconds"][1] == f"duration_ms {run['duration_ms']} <= 8000"
    assert details["Reply is substantial"] == (False, "expression did not hold")
    assert api.get(f"/api/runs/{run['id']}").json() == run


def test_run__without_checks_has_null_evals(api, support_nodes):
    wf = api.post("/api/workflows", json={"name": "No checks", "nodes": support_nodes}).json()
    run = api.post(f"/api/workflows/{wf['id']}/runs", json={"input": {"ticket": "hi"}}).json()
    assert run["status"] == "success" and run["evals"] is None


def test_run__failed_run_has_null_evals_and_the_error(api, six_checks):
    nodes = [{"id": "boom", "type": "set", "values": {"x": "missing_var + 1"}}]
    wf = api.post("/api/workflows", json={"name": "Fails", "nodes": nodes, "checks": six_checks}).json()
    run = api.post(f"/api/workflows/{wf['id']}/runs", json={"input": {}}).json()
    assert run["status"] == "failed" and run["evals"] is None
    assert run["error"] == "node 'boom': expression error: Unknown variable 'missing_var'"


def test_run__a_raising_check_fails_without_breaking_the_run(api, support_nodes):
    checks = [{"name": "typo'd variable", "type": "expression", "value": "reploy != ''"}]
    wf = api.post("/api/workflows", json={"name": "Typo", "nodes": support_nodes, "checks": checks}).json()
    run = api.post("/api/workflows/Typo/runs", json={"input": {"ticket": "x"}}).json()
    assert run["status"] == "success" and wf["id"] == run["workflow_id"]
    assert run["evals"]["results"][0]["passed"] is False
    assert run["evals"]["results"][0]["detail"] == "expression error: Unknown variable 'reploy'"


def test_run__condition_set_and_next_route_through_the_graph(api):
    nodes = [
        {"id": "route", "type": "condition", "expression": "input['amount'] > 100", "then": "big", "else": "small"},
        {"id": "big", "type": "set", "values": {"size": "'big'"}, "next": "done"},
        {"id": "small", "type": "set", "values": {"size": "'small'"}},
        {"id": "done", "type": "set", "values": {"label": "size + '!'"}},
    ]
    api.post("/api/workflows", json={"name": "Router", "nodes": nodes})
    big = api.post("/api/workflows/Router/runs", json={"input": {"amount": 500}}).json()
    small = api.post("/api/workflows/Router/runs", json={"input": {"amount": 5}}).json()
    assert big["state"] == {"size": "big", "label": "big!"}
    assert small["state"] == {"size": "small", "label": "small!"}


def test_run__http_node_stores_the_json_answer(api, model_stub):
    nodes = [{"id": "lookup", "type": "http", "method": "POST", "url": model_stub.url + "/orders/{{input.order}}",
              "body": {"who": "{{input.customer}}"}, "output": "order"}]
    api.post("/api/workflows", json={"name": "Http", "nodes": nodes})
    run = api.post("/api/workflows/Http/runs", json={"input": {"order": "GB1", "customer": "ada"}}).json()
    assert run["status"] == "success"
    assert run["state"]["order"] == {"order_id": "GB1", "status": "shipped", "echo": {"who": "ada"}}


def test_openai_provider__speaks_chat_completions_and_prices_usage(api, model_stub):
    nodes = [{"id": "draft", "type": "llm", "provider": "openai", "model": "gpt-4o", "system": "Be kind.",
              "prompt": "Reply to {{input.ticket}}", "output": "draft_reply", "temperature": 0.2,
              "max_tokens": 64}]
    api.post("/api/workflows", json={"name": "OpenAI", "nodes": nodes})
    run = api.post("/api/workflows/OpenAI/runs", json={"input": {"ticket": "refund please"}}).json()
    assert run["status"] == "success", run["error"]
    assert run["state"] == {"draft_reply": "We'll process your refund today."}
    assert run["cost_usd"] == pytest.approx((1000 * 2.50 + 500 * 10.00) / 1e6)
    sent = model_stub.requests[-1]
    assert sent["path"] == "/v1/chat/completions"
    assert sent["headers"]["authorization"] == "Bearer sk-test-openai"
    assert sent["body"] == {"model": "gpt-4o", "temperature": 0.2, "max_tokens": 64, "messages": [
        {"role": "system", "content": "Be kind."}, {"role": "user", "content": "Reply to refund please"}]}


def test_anthropic_provider__speaks_messages_and_prices_usage(api, model_stub):
    nodes = [{"id": "draft", "type": "llm", "provider": "anthropic", "model": "claude-3-5-sonnet-20241022",
              "system": "Be kind.", "prompt": "Reply to {{input.ticket}}", "output": "draft_reply"}]
    api.post("/api/workflows", json={"name": "Claude", "nodes": nodes})
    run = api.post("/api/workflows/Claude/runs", json={"input": {"ticket": "refund"}}).json()
    assert run["status"] == "success", run["error"]
    assert run["cost_usd"] == pytest.approx((2000 * 3.00 + 100 * 15.00) / 1e6)
    sent = model_stub.requests[-1]
    assert sent["path"] == "/v1/messages"
    assert sent["headers"]["x-api-key"] == "sk-ant-test"
    assert sent["headers"]["anthropic-version"] == "2023-06-01"
    assert sent["body"] == {"model": "claude-3-5-sonnet-20241022", "max_tokens": 1024, "system": "Be kind.",
                            "messages": [{"role": "user", "content": "Reply to refund"}]}


def test_provider_error__fails_the_run_with_the_providers_message_and_service_keeps_serving(
    api, model_stub, six_checks
):
    model_stub.fail_with = (429, {"error": {"message": "Rate limit reached for gpt-4o", "type": "requests",
                                            "code": "rate_limit_exceeded"}})
    nodes = [{"id": "draft", "type": "llm", "provider": "openai", "model": "gpt-4o", "prompt": "hi",
              "output": "draft_reply"}]
    api.post("/api/workflows", json={"name": "Limited", "nodes": nodes, "checks": six_checks})
    run = api.post("/api/workflows/Limited/runs", json={"input": {}}).json()
    assert run["status"] == "failed" and run["evals"] is None
    assert "Rate limit reached for gpt-4o" in run["error"]
    assert run["error"] == "llm node 'draft' (openai): HTTP 429: Rate limit reached for gpt-4o"
    model_stub.fail_with = (529, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    nodes[0].update(provider="anthropic", model="claude-3-5-haiku-latest")
    api.patch("/api/workflows/Limited", json={"nodes": nodes})
    run = api.post("/api/workflows/Limited/runs", json={"input": {}}).json()
    assert run["error"] == "llm node 'draft' (anthropic): HTTP 529: Overloaded"
    model_stub.fail_with = None
    assert api.post("/api/workflows/Limited/runs", json={"input": {}}).json()["status"] == "success"


def test_workspace_price_override__changes_the_cost(api, support_workflow):
    put = api.put("/api/prices/gpt-4o-mini", json={"input_per_mtok": 1000.0, "output_per_mtok": 0.0})
    assert put.status_code == 200
    run = api.post("/api/workflows/Support Triage Crew/runs", json={"input": {"ticket": "x"}}).json()
    assert run["cost_usd"] == pytest.approx(1240 * 1000.0 / 1e6)
    budget = next(r for r in run["evals"]["results"] if r["name"] == "Under budget")
    assert budget["passed"] is False


def test_run_without_wait__is_queued_then_finishes(api, support_workflow):
    run = api.post("/api/workflows/Support Triage Crew/runs", json={"input": {"ticket": "x"}, "wait": False})
    assert run.status_code == 201
    assert run.json()["status"] == "queued" and run.json()["evals"] is None
    deadline = time.monotonic() + 10
    while (current := api.get(f"/api/runs/{run.json()['id']}").json())["status"] not in ("success", "failed"):
        assert time.monotonic() < deadline
        time.sleep(0.02)
    assert current["status"] == "success" and current["evals"]["total"] == 6


def test_list_runs__filters_by_workflow_name_and_status(api, support_workflow):
    nodes = [{"id": "boom", "type": "set", "values": {"x": "nope"}}]
    api.post("/api/workflows", json={"name": "Broken", "nodes": nodes})
    ok = api.post("/api/workflows/Support Triage Crew/runs", json={"input": {"ticket": "a"}}).json()
    bad = api.post("/api/workflows/Broken/runs", json={"input": {}}).json()
    assert {r["id"] for r in api.get("/api/runs").json()} == {ok["id"], bad["id"]}
    assert [r["id"] for r in api.get("/api/runs", params={"workflow": "Broken"}).json()] == [bad["id"]]
    assert [r["id"] for r in api.get("/api/runs", params={"status": "success"}).json()] == [ok["id"]]
    assert api.get("/api/runs", params={"status": "bogus"}).status_code == 422
    unknown = api.get("/api/runs", params={"workflow": "Nope"})
    assert unknown.status_code == 404 and unknown.json() == {"detail": "Workflow 'Nope' not found"}
    missing = api.get("/api/runs/000000000000")
    assert missing.status_code == 404 and missing.json() == {"detail": "Run '000000000000' not found"}


def test_run__instant_runs_posted_while_a_slow_run_waits_all_finish_and_are_stored_as_answered(
    api, support_workflow
):
    slow = api.post("/api/workflows", json={"name": "Slow", "nodes": [
        {"id": "think", "type": "llm", "provider": "mock", "model": "gpt-4o-mini", "prompt": "Think",
         "output": "thought", "responses": [{"text": "done", "delay_ms": 300}]},
    ]}).json()
    quick_path = f"/api/workflows/{support_workflow['id']}/runs"
    with ThreadPoolExecutor(6) as pool:
        slow_run = pool.submit(api.post, f"/api/workflows/{slow['id']}/runs", json={"input": {}})
        quick_runs = [pool.submit(api.post, quick_path, json={"input": {"ticket": f"t{i}"}}) for i in range(10)]
        answers = [future.result() for future in [slow_run, *quick_runs]]
    assert [a.status_code for a in answers] == [201] * 11
    assert answers[0].json()["state"] == {"thought": "done"}
    for answer in answers:
        run = answer.json()
        assert run["status"] == "success"
        assert api.get(f"/api/runs/{run['id']}").json() == run
    assert {a.json()["input"]["ticket"] for a in answers[1:]} == {f"t{i}" for i in range(10)}
