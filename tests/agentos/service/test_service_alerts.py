"""Alerts on a check's production pass rate: rules over the API, and the pages they send,
to Ancha's PagerDuty replica and a Slack incoming webhook of Ancha's Slack replica (an
embedded Ancha server), and to a generic webhook (a local receiver)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from ancha.server.embedded import EmbeddedServer

CHECK = "Answer is ok"
WORKFLOW = {"name": "Answerer", "nodes": [{"id": "answer", "type": "set", "values": {"answer": "input['answer']"}}],
            "checks": [{"name": CHECK, "type": "expression", "value": "answer == 'ok'"}]}
SCENE = {
    "name": "agentos-alerts",
    "world": {"slack": {
        "users": [{"ref": "slack_laura", "name": "laura"}],
        "channels": [{"ref": "slack_alerts", "name": "alerts", "members": ["slack_laura", "slack_bot"]}],
        "incoming_webhooks": [{"ref": "hook_alerts", "channel": "slack_alerts", "app": "AgentOS Alerts"}],
    }, "pagerduty": {
        "agent": {"ref": "pagerduty_agent", "name": "Ancha Agent", "email": "ancha-agent@acme.test"},
        "users": [{"ref": "pd_laura", "name": "Laura Diaz", "email": "laura@acme.test"}],
        "escalation_policies": [{"ref": "pd_policy", "name": "Answerer", "rules": [
            {"delay": 600.0, "targets": ["pd_laura"]}]}],
        "services": [{"ref": "pagerduty_answerer", "name": "Answerer", "escalation_policy": "pd_policy"}],
    }},
}


def wait_for(condition: Callable[[], Any], what: str, deadline_s: float = 20.0) -> Any:
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


class Receiver:
    """A local HTTP endpoint keeping every JSON body posted to it, by path (/hook)."""

    def __init__(self) -> None:
        self.posts: dict[str, list[dict[str, Any]]] = {"slack": [], "hook": []}

        async def keep(request: Request) -> JSONResponse:
            self.posts[request.path_params["name"]].append(await request.json())
            return JSONResponse({"ok": True})

        self.app = Starlette(routes=[Route("/{name}", keep, methods=["POST"])])


@pytest.fixture(scope="module")
def ancha() -> Iterator[EmbeddedServer]:
    with EmbeddedServer() as server:
        yield server


@pytest.fixture
def on_call(ancha: EmbeddedServer) -> Iterator[dict[str, Any]]:
    created = httpx.post(f"{ancha.url}/envs", json={"scene": SCENE, "trial": 1}, timeout=60)
    assert created.status_code == 201, created.text
    context = created.json()
    yield context
    httpx.delete(f"{ancha.url}/envs/{context['env_id']}", timeout=30)


def incident_status(ancha: EmbeddedServer, env_id: str, status: str) -> bool:
    """Ancha's own grading: the service's first incident has `status` in the live world."""
    graded = httpx.post(f"{ancha.url}/envs/{env_id}/checks", timeout=30, json={"checks": [
        {"id": "paged", "state": {"pagerduty.incident": {"service": "$pagerduty_answerer", "first": True},
                                  "status": status}}]})
    assert graded.status_code == 200, graded.text
    return bool(graded.json()["results"][0]["passed"])


def alerts_channel(context: dict[str, Any]) -> list[str]:
    """The texts in #alerts of the live world, newest first, read with Slack's Web API."""
    slack = context["tools"]["slack"]
    listed = httpx.get(f"{slack['url']}/api/conversations.list", headers={"authorization": f"Bearer {slack['token']}"})
    channel = next(c["id"] for c in listed.json()["channels"] if c["name"] == "alerts")
    history = httpx.get(f"{slack['url']}/api/conversations.history", params={"channel": channel},
                        headers={"authorization": f"Bearer {slack['token']}"})
    return [m.get("text", "") for m in history.json()["messages"]]


def _runs(api: Any, answer: str, count: int) -> None:
    for _ in range(count):
        response = api.post("/api/workflows/Answerer/runs", json={"input": {"answer": answer}})
        assert response.status_code in (200, 201) and response.json()["status"] == "success", response.text


def _baseline(api: Any, passed: int, total: int) -> None:
    results = [{"item": f"i{i}", "status": "success", "checks": [{"name": CHECK, "passed": i < passed}]}
               for i in range(total)]
    response = api.post("/api/workflows/Answerer/evaluations", json={"name": "baseline", "results": results})
    assert response.status_code == 201, response.text


def _state(api: Any) -> str:
    return str(api.get("/api/workflows/Answerer/alerts").json()["alerts"][0]["state"])


def test_alert__pages_ancha_pagerduty_once_when_the_rate_drops_and_resolves_when_it_recovers(
        api, ancha, on_call, serve_app):
    pagerduty = on_call["tools"]["pagerduty"]
    receiver = Receiver()
    with serve_app(receiver.app) as local:
        assert api.post("/api/workflows", json=WORKFLOW).status_code == 201
        _baseline(api, 9, 10)
        rule = api.post("/api/workflows/Answerer/alerts", json={"check": CHECK, "window": 10, "notify": [
            {"type": "pagerduty", "routing_key": pagerduty["routing_key"], "url": f"{pagerduty['url']}/v2/enqueue"},
            {"type": "slack", "url": on_call["tools"]["slack"]["url"] + on_call["tools"]["slack"]["webhooks"]["hook_alerts"]},
            {"type": "webhook", "url": f"{local.url}/hook"},
        ]})
        assert rule.status_code == 201, rule.text
        assert (rule.json()["window"], rule.json()["alpha"], rule.json()["state"]) == (10, 0.01, "resolved")

        _runs(api, "ok", 2)
        _runs(api, "wrong", 6)
        wait_for(lambda: _state(api) == "firing", "the alert to fire")
        wait_for(lambda: incident_status(ancha, on_call["env_id"], "triggered"), "Ancha's incident to trigger")
        wait_for(lambda: receiver.posts["hook"] and alerts_channel(on_call), "the webhooks")
        fired = receiver.posts["hook"][0]
        assert (fired["state"], fired["check"], fired["baseline"]) == ("firing", CHECK, 0.9)
        assert fired["pass_rate"] < 0.9 and fired["p_value"] < 0.01
        assert "Answerer" in alerts_channel(on_call)[0]

        _runs(api, "wrong", 2)  # still firing: no second page
        wait_for(lambda: api.get("/api/workflows/Answerer/alerts").json()["alerts"][0]["pass_rate"] == 0.2,
                 "the rule to judge the newest runs")
        assert len(receiver.posts["hook"]) == 1 and _state(api) == "firing"

        _runs(api, "ok", 10)
        wait_for(lambda: _state(api) == "resolved", "the alert to resolve")
        wait_for(lambda: incident_status(ancha, on_call["env_id"], "resolved"), "Ancha's incident to resolve")
        wait_for(lambda: len(receiver.posts["hook"]) == 2, "the resolved webhook")
        assert receiver.posts["hook"][1]["state"] == "resolved"
        wait_for(lambda: len(alerts_channel(on_call)) == 2, "the resolved Slack message")


def test_alert_rules__listed_deleted_and_bad_bodies_422_naming_the_place(api):
    assert api.post("/api/workflows", json=WORKFLOW).status_code == 201
    hook = {"type": "webhook", "url": "http://127.0.0.1:9/hook"}
    for body, place in (
        ({"check": CHECK, "notify": [hook], "colour": "red"}, "colour"),
        ({"check": CHECK, "notify": [{**hook, "secret": 1}]}, "notify.0.webhook.secret"),
        ({"check": CHECK, "notify": [{"type": "email", "to": "x"}]}, "notify.0"),
        ({"check": CHECK, "notify": [{"type": "pagerduty"}]}, "routing_key"),
        ({"check": CHECK, "alpha": 2, "notify": [hook]}, "alpha"),
        ({"check": "Nope", "notify": [hook]}, "check"),
    ):
        response = api.post("/api/workflows/Answerer/alerts", json=body)
        assert response.status_code == 422 and place in response.json()["detail"], response.text
    created = api.post("/api/workflows/Answerer/alerts", json={"check": CHECK, "notify": [hook]}).json()
    assert created["window"] == 50
    assert [a["id"] for a in api.get("/api/workflows/Answerer/alerts").json()["alerts"]] == [created["id"]]
    assert api.delete(f"/api/workflows/Answerer/alerts/{created['id']}").status_code == 204
    assert api.get("/api/workflows/Answerer/alerts").json()["alerts"] == []
    assert api.delete(f"/api/workflows/Answerer/alerts/{created['id']}").status_code == 404
