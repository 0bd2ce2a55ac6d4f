"""``GET /envs/{id}/live``: a trial's calls, records and status as Server-Sent Events."""

from __future__ import annotations

import json
from typing import Any

import httpx
from slack_sdk import WebClient

SCENE: dict[str, Any] = {
    "world": {"slack": {
        "users": [{"ref": "laura", "name": "laura"}],
        "channels": [{"ref": "support", "name": "support", "members": ["slack_bot", "laura"]}],
    }},
    "checks": [{"id": "posted", "trace": {"called": ["POST /api/chat.postMessage"]}}],
}


def _events(client: httpx.Client, url: str, until: str, headers: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """Events read from the stream up to the first of kind ``until``."""
    events: list[dict[str, Any]] = []
    with client.stream("GET", url, headers=headers or {}) as answer:
        assert answer.status_code == 200
        assert answer.headers["content-type"].startswith("text/event-stream")
        event: dict[str, Any] = {}
        for line in answer.iter_lines():
            if line.startswith("id: "):
                event["id"] = line[4:]
            elif line.startswith("event: "):
                event["kind"] = line[7:]
            elif line.startswith("data: "):
                event["data"] = json.loads(line[6:])
            elif not line and event:
                events.append(event)
                if event.get("kind") == until:
                    return events
                event = {}
    return events


def test_live__replays_calls_then_resumes_after_last_event_id(make_env: Any, ancha_server: str) -> None:
    context = make_env(SCENE)
    slack = context["tools"]["slack"]
    agent = WebClient(token=slack["token"], base_url=slack["url"] + "/api/")
    channel = agent.conversations_list()["channels"][0]["id"]
    agent.chat_postMessage(channel=channel, text="first")
    url = f"{ancha_server}/envs/{context['env_id']}/live"
    with httpx.Client(timeout=30) as client:
        first = _events(client, url, until="status")  # the status comes first
        assert first[0]["kind"] == "status" and first[0]["data"]["status"] == "running"
        seen = []
        with client.stream("GET", url) as answer:
            for line in answer.iter_lines():
                if line.startswith("data: ") and '"seq"' in line:
                    seen.append(json.loads(line[6:]))
                if len(seen) == 2:
                    break
        assert [(c["seq"], c["method"], c["path"]) for c in seen] == [
            (1, "POST", "/api/conversations.list"), (2, "POST", "/api/chat.postMessage")]
        assert seen[1]["actor"] == "agent" and seen[1]["status"] == 200 and seen[1]["worked"] is True

        agent.chat_postMessage(channel=channel, text="second")
        httpx.post(f"{ancha_server}/envs/{context['env_id']}/done",
                   headers={"authorization": f"Bearer {context['trial_token']}"})
        resumed = _events(client, url, until="end", headers={"last-event-id": "2.0"})
    calls = [e["data"]["seq"] for e in resumed if e.get("kind") == "call"]
    assert calls == [3]  # only what came after the cursor, once
    assert resumed[-1]["kind"] == "end" and resumed[-1]["data"]["status"] == "done"
    assert all(e["id"].count(".") == 1 for e in resumed if e.get("kind") in ("call", "record"))


def test_live__unknown_environment_and_bad_cursor_are_clear_errors(make_env: Any, ancha_server: str) -> None:
    missing = httpx.get(f"{ancha_server}/envs/env_nope/live")
    assert missing.status_code == 404 and "no environment" in missing.json()["error"]
    context = make_env(SCENE)
    bad = httpx.get(f"{ancha_server}/envs/{context['env_id']}/live?calls=-1")
    assert bad.status_code == 400
    assert bad.json()["hint"] == "use ?calls=N&records=M (what you already have)"
