"""The Slack examples as one unchanged slack_bolt app, in either of Slack's transports.

Started as a command agent with `slack_transport: socket`, it listens under Bolt's
`SocketModeHandler`; started by `agent.start` (an endpoint agent, `slack_transport: http`),
it serves the Events API on `$ANCHA_AGENT_PORT` at `/slack/events`, with the `/ready`
route Ancha polls. The listeners are the same either way. Like acme_bot.py it has no
model behind it: plain rules answer the export question and triage the beta-exports report.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from slack_bolt import App
from slack_sdk import WebClient

client = WebClient(token=os.environ["ANCHA_SLACK_TOKEN"], base_url=os.environ["ANCHA_SLACK_URL"] + "/api/")
# process_before_response: acknowledge an event only once its listener is done, so the
# world sees the agent busy (and its clock flowing) until the reply is posted.
app = App(client=client, signing_secret=os.environ.get("ANCHA_SLACK_SIGNING_SECRET"), process_before_response=True)
task = os.environ["ANCHA_TASK"]


@dataclass
class Triage:
    """Where the beta-exports report stands: who we asked, in which thread, and what they said."""

    support: str = ""
    eng: str = ""
    users: dict[str, str] = field(default_factory=dict)
    question_ts: str = ""
    waiting_for: str = ""  # laura, ben, mike, or "" once done
    asked_ts: str = ""  # the thread the awaited reply comes in
    laura: str = ""


triage = Triage()


def channels() -> dict[str, str]:
    listed = client.conversations_list(types="public_channel,private_channel", limit=200)
    return {c["name"]: c["id"] for c in listed["channels"]}


def answer_support_question() -> None:
    """The export question: the answer is in #support's FAQ; reply in the customer's thread."""
    support = channels()["support"]
    messages = client.conversations_history(channel=support, limit=50)["messages"]
    question = next(m for m in messages if "?" in m.get("text", "") and "bot_id" not in m)
    faq = next((m for m in messages if m.get("text", "").startswith("FAQ:") and "export" in m["text"].lower()), None)
    if faq is None:
        reply = "Thanks for asking! I'm checking with the team and will get back to you here."
    else:
        where = faq["text"].split("moved to", 1)[-1].split(" in the", 1)[0].strip()
        reply = f"Hi! CSV exports now live under {where} (they moved in the March release)."
    client.chat_postMessage(channel=support, thread_ts=question["ts"], text=reply)
    print(f"answered {question['ts']} in #support", flush=True)


def start_triage() -> None:
    """Beta exports, step 1: ask Laura in her thread; the replies come as events."""
    me = client.auth_test()["user_id"]
    found = channels()
    triage.support, triage.eng = found["support"], found["eng"]
    triage.users = {u["name"]: u["id"] for u in client.users_list()["members"]}
    history = client.conversations_history(channel=triage.support)["messages"]
    triage.question_ts = next(m for m in history if m.get("user") != me)["ts"]
    triage.waiting_for, triage.asked_ts = "laura", triage.question_ts
    client.chat_postMessage(channel=triage.support, thread_ts=triage.question_ts,
                            text="Sorry about that! Which workspace are you on, and is the beta toggle on for you?")


@app.event("message")
def on_message(event: dict[str, Any]) -> None:
    """Each awaited reply moves the triage on: Laura's goes to Ben, Ben's workaround to Laura
    and his root cause to Mike, and Mike's decision marks the question."""
    if not triage.waiting_for or event.get("subtype"):
        return
    if event.get("user") != triage.users.get(triage.waiting_for) or event.get("thread_ts") != triage.asked_ts:
        return
    text = event.get("text", "")
    if triage.waiting_for == "laura":
        triage.laura = text
        asked = client.chat_postMessage(
            channel=triage.eng,
            text=(f"<@{triage.users['ben']}> a customer reports CSV exports missing. She says: \"{text}\" "
                  "What's the workaround, and what's the root cause?"))
        triage.waiting_for, triage.asked_ts = "ben", asked["ts"]
    elif triage.waiting_for == "ben":
        lines = text.split("\n") if "\n" in text else text.split(" Root cause")[:1]
        workaround = next(line for line in lines if "Workaround" in line)  # the root cause stays internal
        client.chat_postMessage(channel=triage.support, thread_ts=triage.question_ts, text=f"Thanks! {workaround}")
        root_cause = text[text.index("Root cause"):] if "Root cause" in text else text
        asked = client.chat_postMessage(
            channel=triage.eng,
            text=f"<@{triage.users['mike']}> {root_cause} What severity should we give the exports bug?")
        triage.waiting_for, triage.asked_ts = "mike", asked["ts"]
    else:
        client.reactions_add(channel=triage.support, timestamp=triage.question_ts, name="rotating_light")
        triage.waiting_for = ""
        print("triaged the exports report", flush=True)


@app.event("app_mention")
def on_mention() -> None:
    """Mentions come as `message` events too, handled above; without a listener Bolt would
    answer this one 404 and Slack (and Ancha) would send it again."""


def serve_http(port: int) -> None:
    """The Events API: Bolt verifies each signed POST; `/ready` tells Ancha which trial this is."""
    import uvicorn
    from slack_bolt.adapter.starlette.handler import SlackRequestHandler
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import PlainTextResponse, Response
    from starlette.routing import Route

    handler = SlackRequestHandler(app)

    async def events(request: Request) -> Response:
        return await handler.handle(request)

    async def ready(request: Request) -> Response:
        return PlainTextResponse("ok", headers={"x-ancha-env-id": os.environ["ANCHA_ENV_ID"]})

    api = Starlette(routes=[Route("/slack/events", events, methods=["POST"]), Route("/ready", ready)])
    uvicorn.run(api, host="127.0.0.1", port=port, log_level="warning")


def main() -> None:
    # Act on the task first: before the app listens it counts as working, so the clock
    # does not jump (or end the trial idle) between these calls; what it asks is answered
    # as events once it listens.
    if "severity" in task:
        start_triage()
    elif "#support" in task:
        answer_support_question()
    else:
        raise SystemExit(f"this example agent does not know how to: {task}")
    if "ANCHA_AGENT_PORT" in os.environ:
        serve_http(int(os.environ["ANCHA_AGENT_PORT"]))
    else:
        from slack_bolt.adapter.socket_mode import SocketModeHandler

        SocketModeHandler(app, os.environ["ANCHA_SLACK_APP_TOKEN"]).start()


if __name__ == "__main__":
    main()
