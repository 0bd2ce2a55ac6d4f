"""The agent's view of one environment for the living world's tests: its official Slack
client, its event feed (long-polled over HTTP), and the control API; the reference's
laura/ben/mike scene."""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any

import httpx
from slack_sdk import WebClient

START = "2026-03-02T09:00:00Z"
START_S = datetime.fromisoformat(START.replace("Z", "+00:00")).timestamp()

# The reference's example: Laura (customer, #support), Ben (engineer, #eng), Mike (decides severity).
PEOPLE_SCENE: dict[str, Any] = {
    "clock": {"start": START, "limit": 7200},
    "world": {"slack": {
        "users": [
            {"ref": "slack_laura", "name": "laura", "real_name": "Laura Diaz"},
            {"ref": "slack_ben", "name": "ben", "real_name": "Ben Okafor"},
            {"ref": "slack_mike", "name": "mike", "real_name": "Mike Chen"},
        ],
        "channels": [
            {"ref": "slack_support", "name": "support",
             "members": ["slack_bot", "slack_laura", "slack_ben", "slack_mike"]},
            {"ref": "slack_eng", "name": "eng", "members": ["slack_bot", "slack_ben", "slack_mike"]},
            {"ref": "slack_random", "name": "random",
             "members": ["slack_bot", "slack_laura", "slack_ben", "slack_mike"]},
            {"ref": "slack_quiet", "name": "quiet", "members": ["slack_laura"]},
        ],
        "messages": [
            {"ref": "slack_question", "channel": "slack_support", "from": "slack_laura",
             "text": "CSV exports stopped working for us"},
            {"ref": "slack_ben_note", "channel": "slack_random", "from": "slack_ben",
             "text": "Lunch is at noon"},
        ],
    }},
    "people": {
        "laura": {
            "name": "Laura Diaz", "accounts": {"slack": "slack_laura"}, "listens": ["slack_support"],
            "replies_after": [120, 120],
            "facts": {
                "workspace": {"text": "We're on acme-prod.", "asked_by": ["workspace"], "match": ["acme-prod"]},
                "beta_on": {"text": "The exports beta is on.", "asked_by": ["beta"], "match": ["beta is on"]},
            },
        },
        "ben": {
            "name": "Ben Okafor", "accounts": {"slack": "slack_ben"}, "listens": ["slack_eng"],
            "replies_after": [300, 300],
            "facts": {
                "root_cause": {"text": "The beta writer drops rows.", "asked_by": ["root cause"],
                               "match": ["drops rows"]},
            },
        },
        "mike": {
            "name": "Mike Chen", "accounts": {"slack": "slack_mike"}, "listens": ["slack_eng"],
            "replies_after": [60, 60],
            "decisions": {
                "severity": {"asked_by": ["severity", "priority"], "options": ["p1", "p2", "p3"],
                             "chooses": "p1", "needs": ["ben.root_cause"], "text": "Let's treat it as {option}.",
                             "pending": "I can't call it until I know the root cause."},
            },
        },
    },
}


class World:
    """One environment as the agent sees it (Slack client, event feed) plus the control API."""

    def __init__(self, base: str, context: dict[str, Any]) -> None:
        self.base = base
        self.context = context
        self.id: str = context["env_id"]
        slack = context["tools"]["slack"]
        self.slack = WebClient(token=slack["token"], base_url=slack["url"] + "/api/")
        self.bot_id: str = slack["bot_user_id"]
        self.http = httpx.Client(base_url=base, timeout=30)
        self.cursor = "0"
        state = self.state()
        self.ids: dict[str, str] = {u["ref"]: u["id"] for u in state["users"] if u.get("ref")}
        self.ids.update({c["ref"]: c["id"] for c in state["channels"] if c.get("ref")})
        for messages in state["messages"].values():
            for message in messages:
                if message["text"] == "CSV exports stopped working for us":
                    self.ids["slack_question"] = message["ts"]
                if message["text"] == "Lunch is at noon":
                    self.ids["slack_ben_note"] = message["ts"]

    # --- the agent's side ---------------------------------------------------------------

    def poll(self, wait: str = "20s") -> list[dict[str, Any]]:
        """Long-poll the feed from the last cursor (what waiting on the feed looks like)."""
        answer = self.http.get(self.context["events"]["url"], params={"after": self.cursor, "wait": wait},
                               headers={"authorization": f"Bearer {self.context['events']['token']}"})
        assert answer.status_code == 200, answer.text
        body = answer.json()
        self.cursor = body["cursor"]
        events: list[dict[str, Any]] = body["events"]
        return events

    def post(self, channel: str, text: str, thread_ts: str | None = None) -> dict[str, Any]:
        answer = self.slack.chat_postMessage(channel=self.ids.get(channel, channel), text=text,
                                             thread_ts=thread_ts)
        return dict(answer.data)  # type: ignore[arg-type]

    def dm(self, user_ref: str) -> str:
        return str(self.slack.conversations_open(users=self.ids[user_ref])["channel"]["id"])

    def done(self) -> dict[str, Any]:
        answer = self.http.post(self.context["done_url"], json={},
                                headers={"authorization": f"Bearer {self.context['trial_token']}"})
        assert answer.status_code == 200, answer.text
        return dict(answer.json())

    # --- the control API ----------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        return dict(self.http.get(f"/envs/{self.id}").json())

    def state(self) -> dict[str, Any]:
        return dict(self.http.get(f"/envs/{self.id}/state").json()["slack"])

    def records(self, kind: str | None = None) -> list[dict[str, Any]]:
        import json

        lines = self.http.get(f"/envs/{self.id}/records").text.splitlines()
        records = [json.loads(line) for line in lines if line]
        return [r for r in records if kind is None or r["kind"] == kind]

    def set_waiting(self, waiting: bool) -> dict[str, Any]:
        answer = self.http.post(f"/envs/{self.id}/waiting", json={"waiting": waiting})
        assert answer.status_code == 200, answer.text
        return dict(answer.json())

    def wait_until_ended(self, timeout: float = 10.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            status = self.status()
            if status["status"] != "running" or time.monotonic() > deadline:
                return status
            time.sleep(0.01)

    def elapsed(self) -> float:
        return float(self.status()["clock"]["elapsed_s"])


def seconds(iso: str) -> float:
    """Seconds after the scene's start of an ISO time."""
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() - START_S
