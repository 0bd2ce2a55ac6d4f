"""Event-to-agent delivery latency for each way Slack events reach an agent.

    .venv/bin/python bench/agent_modes.py [--events 200]

One in-process server (``EmbeddedServer``), one trial per transport. The scene's world
rules post a message as Ana in #general every simulated minute; the agent only listens, so
it waits between events and the clock jumps to the next one. The latency of an event is
the real time from the world making it (its ``message_posted`` on the environment's bus)
to the agent holding it:

- ``feed``: an httpx client long-polling the event feed (``GET`` with ``wait=30s``);
- ``socket``: slack_sdk's ``SocketModeClient`` (the built-in one ``SocketModeHandler``
  uses), timed in its listener, which then acknowledges the envelope;
- ``http``: a small ``ThreadingHTTPServer`` as the endpoint agent (``slack_transport:
  http``), timed once the Events API POST's body is read; it answers 200.

Prints a markdown table: p50, p99 and max in milliseconds per transport (after a few
warm-up events), how many of the events arrived, and the trial's wall time. Socket Mode's
wall time is mostly the half second of real quiet (``socket_mode.QUIET_S``) it waits for
before the clock may jump to the next event; that wait is not in the latency. No peer
exists, so no ratio. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import statistics
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
from slack_sdk import WebClient
from slack_sdk.socket_mode import SocketModeClient
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.socket_mode.response import SocketModeResponse

from ancha.server.embedded import EmbeddedServer
from ancha.world.kernel.bus import DomainEvent

WARMUP = 5
EVERY_S = 60
TRANSPORTS = ("feed", "socket", "http")


def scene(events: int) -> dict[str, Any]:
    return {
        "name": "bench-agent-modes",
        "clock": {"start": "2026-03-02T09:00:00Z", "limit": (events + 10) * EVERY_S},
        "world": {"slack": {
            "users": [{"ref": "slack_ana", "name": "ana"}],
            "channels": [{"ref": "slack_general", "name": "general", "members": ["slack_ana", "slack_bot"]}],
        }},
        "world_rules": {"events": [
            {"at": EVERY_S * i, "do": [{"slack.message": {"channel": "slack_general", "from": "slack_ana",
                                                          "text": f"event {i}"}}]}
            for i in range(1, events + 1)]},
    }


class Stopwatch:
    """When each event was made (on the world's bus) and when the agent got it, by its number."""

    def __init__(self) -> None:
        self.made: dict[int, float] = {}
        self.got: dict[int, float] = {}
        self.lock = threading.Lock()

    def on_posted(self, event: DomainEvent) -> None:
        now = time.perf_counter()
        text = str(event.data.get("text", ""))
        if event.data.get("actor") != "agent" and text.startswith("event "):
            with self.lock:
                self.made.setdefault(int(text.split()[1]), now)

    def received(self, callback: dict[str, Any]) -> None:
        now = time.perf_counter()
        text = str(callback.get("event", {}).get("text", ""))
        if text.startswith("event "):
            with self.lock:
                self.got.setdefault(int(text.split()[1]), now)

    def latencies_ms(self) -> list[float]:
        return [(self.got[n] - self.made[n]) * 1000 for n in sorted(self.got) if n > WARMUP and n in self.made]


def open_trial(server: EmbeddedServer, http: httpx.Client, events: int, transport: str,
               watch: Stopwatch) -> dict[str, Any]:
    agent = {"mode": "endpoint" if transport == "http" else "command", "slack_transport": transport, "idle": 10}
    context: dict[str, Any] = http.post("/envs", json={"scene": scene(events), "trial": 1, "agent": agent}).json()
    env = server.app.registry.get(context["env_id"])
    assert env is not None, context
    env.bus.subscribe("message_posted", watch.on_posted)
    return context


def ended(http: httpx.Client, env_id: str) -> bool:
    return bool(http.get(f"/envs/{env_id}").json()["status"] != "running")


def run_feed(http: httpx.Client, context: dict[str, Any], watch: Stopwatch) -> None:
    feed, headers = context["events"]["url"], {"authorization": f"Bearer {context['events']['token']}"}
    cursor = "0"
    while True:
        answer = http.get(feed, params={"after": cursor, "wait": "30s"}, headers=headers)
        if answer.status_code != 200:
            return
        body = answer.json()
        for event in body["events"]:
            watch.received(event["payload"])
        cursor = body["cursor"]
        if not body["events"] and ended(http, context["env_id"]):
            return


def run_socket(http: httpx.Client, context: dict[str, Any], watch: Stopwatch) -> None:
    slack = context["tools"]["slack"]
    client = SocketModeClient(app_token=slack["app_token"],
                              web_client=WebClient(token=slack["token"], base_url=slack["url"] + "/api/"))

    def listen(socket: SocketModeClient, request: SocketModeRequest) -> None:
        if request.type == "events_api":
            watch.received(request.payload)
            socket.send_socket_mode_response(SocketModeResponse(envelope_id=request.envelope_id))

    client.socket_mode_request_listeners.append(listen)
    client.connect()
    try:
        until_ended(http, context["env_id"])
    finally:
        client.close()


def run_http(http: httpx.Client, context: dict[str, Any], watch: Stopwatch) -> None:
    class Endpoint(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            watch.received(body)
            answer = json.dumps({"challenge": body["challenge"]}).encode() if "challenge" in body else b""
            self.send_response(200)
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

    endpoint = ThreadingHTTPServer(("127.0.0.1", 0), Endpoint)
    serving = threading.Thread(target=endpoint.serve_forever, daemon=True)
    serving.start()
    try:
        url = f"http://127.0.0.1:{endpoint.server_address[1]}/slack/events"
        started = http.post(f"/envs/{context['env_id']}/endpoint", json={"url": url, "startup_timeout": 10})
        assert started.status_code == 200, started.text
        until_ended(http, context["env_id"])
    finally:
        endpoint.shutdown()
        endpoint.server_close()


def until_ended(http: httpx.Client, env_id: str, timeout_s: float = 600) -> None:
    deadline = time.monotonic() + timeout_s
    while not ended(http, env_id):
        if time.monotonic() > deadline:
            raise SystemExit(f"{env_id} still running after {timeout_s:g}s")
        time.sleep(0.2)


RUNNERS: dict[str, Callable[[httpx.Client, dict[str, Any], Stopwatch], None]] = {
    "feed": run_feed, "socket": run_socket, "http": run_http}


def measure(server: EmbeddedServer, transport: str, events: int) -> tuple[list[float], int, float]:
    """The latencies (ms) of one trial's events after the warm-up, how many arrived, and the wall time."""
    watch = Stopwatch()
    with httpx.Client(base_url=server.url, timeout=60) as http:
        context = open_trial(server, http, events + WARMUP, transport, watch)
        began = time.perf_counter()
        RUNNERS[transport](http, context, watch)
        wall = time.perf_counter() - began
        http.delete(f"/envs/{context['env_id']}")
    return watch.latencies_ms(), len(watch.got), wall


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=200)
    args = parser.parse_args()
    rows = []
    with EmbeddedServer() as server:
        for transport in TRANSPORTS:
            latencies, arrived, wall = measure(server, transport, args.events)
            rows.append(f"| {transport} | {arrived}/{args.events + WARMUP} | {percentile(latencies, 0.5):.2f} | "
                        f"{percentile(latencies, 0.99):.2f} | {max(latencies):.2f} | "
                        f"{statistics.fmean(latencies):.2f} | {wall:.1f} |")
    print(f"Event-to-agent delivery latency, {args.events} events per transport after {WARMUP} warm-up, "
          "one in-process server\n")
    print("| transport | events arrived | p50 ms | p99 ms | max ms | mean ms | wall s |")
    print("|---|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
