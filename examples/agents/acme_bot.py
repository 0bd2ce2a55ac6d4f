"""An example agent built with the official slack_sdk, pointed at Ancha's Slack replica.

It has no model behind it: it follows the task with plain rules, so the examples run
offline and show what `ancha run` records and grades. A real agent would put a model
where `plan()` is; everything it says to Slack goes through the same SDK calls.
"""

from __future__ import annotations

import os
import re
import sys

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

client = WebClient(token=os.environ["ANCHA_SLACK_TOKEN"], base_url=os.environ["ANCHA_SLACK_URL"] + "/api/")
task = os.environ["ANCHA_TASK"]


def channel_named(name: str) -> dict:
    for page in client.conversations_list(types="public_channel,private_channel", limit=100):
        for channel in page["channels"]:
            if channel["name"] == name:
                return channel
    raise SystemExit(f"no #{name} channel")


def history(channel_id: str) -> list[dict]:
    messages: list[dict] = []
    for page in client.conversations_history(channel=channel_id, limit=50):
        messages.extend(page["messages"])
    return messages


def answer_support_question() -> None:
    support = channel_named("support")
    messages = history(support["id"])
    question = next(m for m in messages if "?" in m.get("text", "") and "bot_id" not in m)
    faq = next((m for m in messages if m.get("text", "").startswith("FAQ:") and "export" in m["text"].lower()), None)
    if faq is None:
        reply = "Thanks for asking! I'm checking with the team and will get back to you here."
    else:
        where = faq["text"].split("moved to", 1)[-1].split(" in the", 1)[0].strip()
        reply = f"Hi! CSV exports now live under {where} (they moved in the March release)."
    client.chat_postMessage(channel=support["id"], thread_ts=question["ts"], text=reply)
    print(f"answered {question['ts']} in #support")


def hand_off_alert() -> None:
    alerts = channel_named("alerts")
    alert = history(alerts["id"])[0]
    service = re.search(r"\b([a-z]+-[a-z]+)\b", alert["text"])
    incidents = client.conversations_info(channel=channel_named("incidents")["id"])["channel"]
    oncall_email = incidents["topic"]["value"].split("on-call:", 1)[-1].strip()
    try:
        oncall = client.users_lookupByEmail(email=oncall_email)["user"]
        mention = f"<@{oncall['id']}>"
    except SlackApiError as err:  # the topic named nobody we know: say so rather than guess
        mention = f"(on-call {oncall_email} not found: {err.response['error']})"
    name = service.group(1) if service else "an unknown service"
    client.chat_postMessage(channel=incidents["id"], text=f"{mention} alert on {name}: {alert['text']}")
    client.reactions_add(channel=alerts["id"], timestamp=alert["ts"], name="eyes")
    print(f"handed off the {name} alert")


def plan() -> None:
    if "severity" in task:
        from triage import run

        run(client)
    elif "runbook" in task:
        from runbook_fixer import run as fix_runbook

        fix_runbook(client)
    elif "on call" in task:
        from incident_responder import run as respond

        respond(client)
    elif "Offboard" in task:
        from offboarder import run as offboard

        offboard(client, task)
    elif "#support" in task:
        answer_support_question()
    elif "#alerts" in task:
        hand_off_alert()
    else:
        sys.exit(f"this example agent does not know how to: {task}")


plan()
