"""A client agent for real hostnames: a Bolt app in Socket Mode, built only from its tokens
(App(token=...) calls https://slack.com/api/..., SocketModeHandler opens the socket Slack's
apps.connections.open hands out). It answers the first message someone else posts in a
channel it is in, in that message's thread, then exits.

Run it with ``agent.slack_transport: socket``: the scene's world rule has Ana write in
#general a while after the start, and the clock jumps to her message while the app waits
on its socket."""

from __future__ import annotations

import os
import sys
import threading

from slack_bolt import App
from slack_bolt.adapter.socket_mode import SocketModeHandler

REPLY = "Bolt heard you over Socket Mode"
WAIT_S = 300.0
"""Wall-clock time to wait for the message (the world's clock jumps to it when the app is idle)."""


def main() -> int:
    app = App(token=os.environ["ANCHA_SLACK_TOKEN"])
    answered = threading.Event()

    @app.event("message")
    def answer(event: dict, say) -> None:  # type: ignore[no-untyped-def]
        if event.get("bot_id") or event.get("subtype"):
            return
        say(text=f"{REPLY}, <@{event['user']}>", thread_ts=event["ts"])
        print(f"slack_bolt_socket: answered {event['user']}'s message {event['ts']} in {event['channel']}", flush=True)
        answered.set()

    handler = SocketModeHandler(app, os.environ["ANCHA_SLACK_APP_TOKEN"])
    handler.connect()
    print("slack_bolt_socket: connected over Socket Mode", flush=True)
    try:
        if not answered.wait(WAIT_S):
            print(f"slack_bolt_socket: no message arrived within {WAIT_S:.0f} s", file=sys.stderr)
            return 1
    finally:
        handler.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
