"""The people example: ask, wait on the event feed, relay, and get a decision.

Waiting on the feed is what lets Ancha's clock jump: Laura answers two simulated minutes
later, Ben up to eight, Mike five, and the whole trial takes seconds of real time.
"""

from __future__ import annotations

import json
import os
import time
import urllib.parse
import urllib.request
from collections.abc import Callable
from typing import Any

from slack_sdk import WebClient

Event = dict[str, Any]


class Feed:
    """Ancha's event feed: long-polls for Slack events addressed to the bot."""

    def __init__(self) -> None:
        self.url = os.environ["ANCHA_EVENTS_URL"]
        self.token = os.environ["ANCHA_EVENTS_TOKEN"]
        self.cursor = "0"

    def wait_for(self, wanted: Callable[[Event], bool], timeout_s: float = 3600) -> Event:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            query = urllib.parse.urlencode({"after": self.cursor, "wait": "20s"})
            request = urllib.request.Request(f"{self.url}?{query}", headers={"Authorization": f"Bearer {self.token}"})
            with urllib.request.urlopen(request, timeout=30) as answer:
                body = json.load(answer)
            self.cursor = body["cursor"]
            for event in body["events"]:
                inner = event["payload"].get("event", {})
                if event["type"] == "message" and wanted(inner):
                    return inner
        raise SystemExit("gave up waiting for a reply")


def run(client: WebClient) -> None:
    feed = Feed()
    me = client.auth_test()["user_id"]
    channels = {c["name"]: c["id"] for c in client.conversations_list(types="public_channel")["channels"]}
    users = {u["name"]: u["id"] for u in client.users_list()["members"]}
    support, eng = channels["support"], channels["eng"]
    question = next(m for m in client.conversations_history(channel=support)["messages"] if m.get("user") != me)

    def reply_from(user: str, thread_ts: str) -> Callable[[Event], bool]:
        return lambda e: e.get("user") == users[user] and e.get("thread_ts") == thread_ts

    # 1. Ask Laura, in her thread, what we need to know.
    client.chat_postMessage(channel=support, thread_ts=question["ts"],
                            text="Sorry about that! Which workspace are you on, and is the beta toggle on for you?")
    laura = feed.wait_for(reply_from("laura", question["ts"]))["text"]

    # 2. Ask Ben in #eng, passing on what Laura said.
    asked = client.chat_postMessage(
        channel=eng,
        text=(f"<@{users['ben']}> a customer reports CSV exports missing. She says: \"{laura}\" "
              "What's the workaround, and what's the root cause?"))
    ben = feed.wait_for(reply_from("ben", asked["ts"]))["text"]
    workaround = next(line for line in ben.split("\n") if "Workaround" in line) if "\n" in ben else ben.split(" Root cause")[0]

    # 3. Give Laura the workaround only: the root cause stays internal.
    client.chat_postMessage(channel=support, thread_ts=question["ts"], text=f"Thanks! {workaround}")

    # 4. Ask Mike for the severity, with the root cause he needs.
    root_cause = ben[ben.index("Root cause"):] if "Root cause" in ben else ben
    ask_mike = client.chat_postMessage(
        channel=eng, text=f"<@{users['mike']}> {root_cause} What severity should we give the exports bug?")
    feed.wait_for(reply_from("mike", ask_mike["ts"]))

    # 5. Mark the question now that the severity is decided.
    client.reactions_add(channel=support, timestamp=question["ts"], name="rotating_light")
    print("triaged the exports report")
