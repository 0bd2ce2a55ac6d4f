"""Socket Mode: the official clients (slack_sdk's SocketModeClient, Bolt's SocketModeHandler)
connect to the replica with the app-level token, receive events as Slack's envelopes,
acknowledge them, get unacknowledged ones again, and reconnect when asked to refresh."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import jsonschema
import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.socket_mode import SocketModeClient
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.socket_mode.response import SocketModeResponse

from ancha.server.embedded import EmbeddedServer
from ancha.world.environment import Environment
from ancha.world.kernel import vendor_data
from ancha.world.tools.slack.replica import SlackReplica
from ancha.world.tools.slack.socket_mode import SocketMode

DEADLINE_S = 30.0


def wait_for(condition: Callable[[], Any], what: str, timeout: float = DEADLINE_S) -> Any:
    """Poll ``condition`` until it is truthy; fail naming ``what`` past the deadline."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = condition()
        if value:
            return value
        time.sleep(0.02)
    pytest.fail(f"timed out waiting for {what}")


@dataclass
class World:
    server: EmbeddedServer
    context: dict[str, Any]
    env: Environment

    @property
    def slack(self) -> dict[str, Any]:
        return dict(self.context["tools"]["slack"])

    @property
    def replica(self) -> SlackReplica:
        replica = self.env.tools["slack"]
        assert isinstance(replica, SlackReplica)
        return replica

    @property
    def socket_mode(self) -> SocketMode:
        return self.replica.socket_mode

    def web(self, token: str | None = None) -> WebClient:
        return WebClient(token=token or self.slack["token"], base_url=self.slack["url"] + "/api/")

    def as_person(self, ref: str) -> WebClient:
        return self.web(self.replica.issue_user_token(self.env.refs[ref].id, f"person:{ref}"))

    def on_loop(self, action: Callable[[], Any]) -> None:
        loop = self.socket_mode._loop
        assert loop is not None, "no connection yet"
        loop.call_soon_threadsafe(action)


@pytest.fixture(scope="module")
def server() -> Iterator[EmbeddedServer]:
    with EmbeddedServer() as running:
        yield running


@pytest.fixture
def world(server: EmbeddedServer, slack_scene: dict[str, Any]) -> Iterator[World]:
    scene = {**slack_scene, "clock": {"start": "2026-03-02T09:00:00Z", "limit": 86400}}
    body = {"scene": {"name": "socket-scene", **scene},
            "trial": 1, "agent": {"slack_transport": "socket", "idle": "1h"}}
    answer = httpx.post(f"{server.url}/envs", json=body, timeout=30)
    assert answer.status_code == 201, answer.text
    context = answer.json()
    yield World(server, context, server.app.registry.envs[context["env_id"]])
    httpx.delete(f"{server.url}/envs/{context['env_id']}", timeout=30)


@pytest.fixture
def clients() -> Iterator[list[SocketModeClient]]:
    made: list[SocketModeClient] = []
    yield made
    for client in made:
        client.close()


def socket_client(world: World, made: list[SocketModeClient]) -> SocketModeClient:
    client = SocketModeClient(app_token=world.slack["app_token"], web_client=world.web())
    made.append(client)
    return client


def _wrapper_schema() -> dict[str, Any]:
    schema: dict[str, Any] = vendor_data.read("slack", "events")["wrapper"]
    return schema


# --- apps.connections.open ---------------------------------------------------------------


def test_connections_open__app_token_gets_a_websocket_url(world):
    answer = world.web(world.slack["app_token"]).apps_connections_open(app_token=world.slack["app_token"])
    assert answer["ok"] is True
    url = answer["url"]
    assert url.startswith("ws://127.0.0.1:") and "/envs/" in url and "/slack/link/?ticket=" in url
    assert f"app_id={world.replica.bot.app_id}" in url


def test_connections_open__bot_token_is_not_allowed(world):
    with pytest.raises(SlackApiError) as caught:
        world.web().apps_connections_open(app_token=world.slack["token"])
    assert caught.value.response["error"] == "not_allowed_token_type"


def test_app_token__other_methods_refuse_it(world):
    with pytest.raises(SlackApiError) as caught:
        world.web(world.slack["app_token"]).chat_postMessage(channel="#support", text="hi")
    assert caught.value.response["error"] == "not_allowed_token_type"


def test_connection__unknown_or_used_ticket_is_refused(world):
    import websockets.sync.client as ws_client
    from websockets.exceptions import InvalidStatus

    url = world.web(world.slack["app_token"]).apps_connections_open(app_token=world.slack["app_token"])["url"]
    with ws_client.connect(url) as first:
        hello = json.loads(first.recv(timeout=DEADLINE_S))
        assert hello["type"] == "hello" and hello["connection_info"]["app_id"] == world.replica.bot.app_id
        assert hello["num_connections"] == 1 and "debug_info" in hello
    with pytest.raises(InvalidStatus), ws_client.connect(url):
        pass


# --- delivery with slack_sdk's SocketModeClient ----------------------------------------


def test_socket_mode_client__receives_an_event_and_acks_it(world, clients):
    received: list[SocketModeRequest] = []

    def listener(client: SocketModeClient, request: SocketModeRequest) -> None:
        received.append(request)
        client.send_socket_mode_response(SocketModeResponse(envelope_id=request.envelope_id))

    client = socket_client(world, clients)
    client.socket_mode_request_listeners.append(listener)
    client.connect()
    wait_for(lambda: world.socket_mode.live, "the connection")
    support = world.env.refs["support"].id
    world.as_person("laura").chat_postMessage(channel=support, text=f"<@{world.replica.bot.id}> are exports down?")
    wait_for(lambda: len(received) >= 2 and not world.socket_mode.envelopes, "two events, acknowledged")
    kinds = sorted(r.payload["event"]["type"] for r in received)
    assert kinds == ["app_mention", "message"]
    first = received[0]
    assert first.type == "events_api" and first.retry_attempt == 0 and not first.accepts_response_payload
    payload = first.payload
    assert payload["type"] == "event_callback" and payload["api_app_id"] == world.replica.bot.app_id
    assert payload["team_id"] == world.slack["team_id"] and payload["event"]["channel"] == support
    assert world.socket_mode.acked == [r.envelope_id for r in received] or \
        sorted(world.socket_mode.acked) == sorted(r.envelope_id for r in received)
    assert received
    for request in received:
        jsonschema.validate(request.payload, _wrapper_schema())


def test_socket_mode__delivery_stops_once_the_trial_ended_and_the_app_left(world, clients):
    client = socket_client(world, clients)
    client.connect()
    wait_for(lambda: world.socket_mode.live, "the connection")
    world.on_loop(lambda: world.env.finish("done", "the agent said so"))
    wait_for(lambda: world.env.status == "done", "the trial's end")
    client.close()
    wait_for(lambda: world.socket_mode._pump is not None and world.socket_mode._pump.done(),
             "the delivery task to end, not left pending for the server's shutdown")


def test_socket_mode_client__an_unacked_event_comes_again_with_retry_attempt_1(world, clients):
    received: list[SocketModeRequest] = []

    def listener(client: SocketModeClient, request: SocketModeRequest) -> None:
        received.append(request)
        if request.retry_attempt:  # only the retry is acknowledged
            client.send_socket_mode_response(SocketModeResponse(envelope_id=request.envelope_id))

    world.socket_mode.ack_timeout = 0.3
    client = socket_client(world, clients)
    client.socket_mode_request_listeners.append(listener)
    client.connect()
    wait_for(lambda: world.socket_mode.live, "the connection")
    dm = world.as_person("ben").conversations_open(users=world.replica.bot.id)["channel"]["id"]
    world.as_person("ben").chat_postMessage(channel=dm, text="ping")
    wait_for(lambda: not world.socket_mode.envelopes and len(received) >= 2, "the retry, acknowledged")
    first, retry = received[0], received[1]
    assert retry.envelope_id == first.envelope_id and retry.payload == first.payload
    assert (first.retry_attempt, first.retry_reason) == (0, "")
    assert (retry.retry_attempt, retry.retry_reason) == (1, "timeout")


def test_socket_mode_client__reconnects_on_refresh_and_delivery_goes_on(world, clients):
    received: list[SocketModeRequest] = []
    raw: list[dict[str, Any]] = []

    def listener(client: SocketModeClient, request: SocketModeRequest) -> None:
        received.append(request)
        client.send_socket_mode_response(SocketModeResponse(envelope_id=request.envelope_id))

    client = socket_client(world, clients)
    client.socket_mode_request_listeners.append(listener)
    client.on_message_listeners.append(lambda text: raw.append(json.loads(text)))
    client.connect()
    first = wait_for(lambda: world.socket_mode.live, "the connection")[0]
    world.on_loop(world.socket_mode.refresh)
    wait_for(lambda: any(m.get("type") == "disconnect" for m in raw), "the disconnect message")
    disconnect = next(m for m in raw if m.get("type") == "disconnect")
    assert disconnect["reason"] == "refresh_requested"
    wait_for(lambda: [c for c in world.socket_mode.live if c is not first], "the new connection")
    wait_for(lambda: first not in world.socket_mode.connections, "the old connection to close")
    wait_for(lambda: sum(1 for m in raw if m.get("type") == "hello") == 2, "a hello on the new connection")
    support = world.env.refs["support"].id
    world.as_person("laura").chat_postMessage(channel=support, text="still there?")
    wait_for(lambda: received and not world.socket_mode.envelopes, "the event after the refresh")
    assert received[-1].payload["event"]["text"] == "still there?"


# --- Bolt, unchanged ------------------------------------------------------------------


def test_bolt_socket_mode_handler__answers_a_mention_by_posting(world):
    from slack_bolt import App
    from slack_bolt.adapter.socket_mode import SocketModeHandler

    app = App(client=world.web())

    @app.event("app_mention")
    def answer(event: dict[str, Any], say: Callable[..., Any]) -> None:
        say(text=f"On it, <@{event['user']}>", thread_ts=event["ts"])

    @app.event("message")
    def ignore(body: dict[str, Any]) -> None:
        pass

    handler = SocketModeHandler(app, world.slack["app_token"])
    thread = threading.Thread(target=handler.connect, daemon=True)
    thread.start()
    try:
        wait_for(lambda: world.socket_mode.live, "Bolt's connection")
        support = world.env.refs["support"].id
        asked = world.as_person("laura").chat_postMessage(channel=support, text=f"<@{world.replica.bot.id}> help")

        def reply() -> dict[str, Any] | None:
            replies = world.web().conversations_replies(channel=support, ts=asked["ts"])["messages"]
            return next((m for m in replies if m.get("user") == world.replica.bot.id), None)

        answered = wait_for(reply, "Bolt's reply in the thread")
        assert answered["text"].startswith("On it, <@")
        wait_for(lambda: not world.socket_mode.envelopes, "Bolt's acknowledgements")
    finally:
        handler.close()
