"""A client agent for real hostnames: slack_sdk's WebClient with only its token (so it calls
https://slack.com/api/...) posts a message in #general and reads it back."""

from __future__ import annotations

import os
import sys

from slack_sdk import WebClient

CHANNEL = "general"
TEXT = "Posted by slack_sdk's WebClient at slack.com"


def main() -> int:
    client = WebClient(token=os.environ["ANCHA_SLACK_TOKEN"])
    channels = client.conversations_list(types="public_channel")["channels"]
    channel = next((c["id"] for c in channels if c["name"] == CHANNEL), None)
    if channel is None:
        print(f"slack_web: no #{CHANNEL} among {[c['name'] for c in channels]}", file=sys.stderr)
        return 1
    posted = client.chat_postMessage(channel=channel, text=TEXT)
    history = client.conversations_history(channel=channel, limit=20)["messages"]
    if not any(m.get("ts") == posted["ts"] and m.get("text") == TEXT for m in history):
        print(f"slack_web: message {posted['ts']} not in #{CHANNEL}'s history", file=sys.stderr)
        return 1
    print(f"slack_web: posted {posted['ts']} in #{CHANNEL} ({channel}) and read it back")
    return 0


if __name__ == "__main__":
    sys.exit(main())
