"""A starter agent: reads its task and Slack credentials from the environment Ancha
gives it, finds #general and says hello. Standard library only."""

import json
import os
import urllib.parse
import urllib.request

SLACK = os.environ["ANCHA_SLACK_URL"] + "/api/"
TOKEN = os.environ["ANCHA_SLACK_TOKEN"]


def slack(method: str, **params: str) -> dict:
    request = urllib.request.Request(
        SLACK + method,
        data=urllib.parse.urlencode(params).encode(),
        headers={"Authorization": f"Bearer {TOKEN}"},
    )
    with urllib.request.urlopen(request) as answer:
        body = json.load(answer)
    if not body.get("ok"):
        raise SystemExit(f"{method} failed: {body.get('error')}")
    return body


channels = slack("conversations.list", types="public_channel")["channels"]
general = next(c for c in channels if c["name"] == "general")
slack("chat.postMessage", channel=general["id"], text="Hello team! Ancha sent me to say hi.")
print("said hello in #general")
