"""With ``agent.hostnames: real`` the agent reaches Slack's replica through Slack's own hosts:
every URL in an answer names the host Slack would use (``files.slack.com``, the workspace's
``acme.slack.com``, ``wss-primary.slack.com``, Slack's image hosts), never the replica's
Ancha address, and each leads back to the replica through ``real_hosts`` and answers there.

These drive an ``Environment`` in-process, with the headers the server's interceptor sets."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

from ancha.scene.model import Scene
from ancha.world.environment import Environment
from ancha.world.kernel.hostnames import REAL_BASE, REAL_HOST
from ancha.world.kernel.tool import ToolRequest, ToolResponse
from ancha.world.tools.slack.replica import SlackReplica
from ancha.world.tools.slack.socket_mode import LINK_PATH
from ancha.world.tools.slack.spec import TOOL

SLACK_HOSTS = ("slack.com", "slack-files.com", "slack-edge.com", "gravatar.com")
"""Where Slack's own links live (the hosts, and their subdomains)."""


def _env(scene: dict[str, Any]) -> tuple[Environment, SlackReplica]:
    env = Environment("env_test", Scene.model_validate({"name": "s", **scene}), 1)
    replica = env.tools["slack"]
    assert isinstance(replica, SlackReplica)
    return env, replica


def _follow(env: Environment, replica: SlackReplica, method: str, url: str, token: str | None = None,
            body: bytes = b"", content_type: str = "") -> ToolResponse:
    """Send ``url`` (on one of Slack's hosts) to the replica as the interceptor would."""
    parts = urlsplit(url)
    assert TOOL.real_hosts is not None
    route = TOOL.real_hosts(replica)[parts.hostname or ""]
    headers = {"host": parts.netloc, REAL_BASE: route.base, REAL_HOST: parts.hostname or "",
               "x-forwarded-proto": "https"}
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    if content_type:
        headers["content-type"] = content_type
    return env.dispatch("slack", ToolRequest(method, route.tool_path(parts.path or "/"), parts.query, headers, body))


def _call(env: Environment, replica: SlackReplica, method: str, token: str | None = None,
          **args: object) -> dict[str, Any]:
    answer = _follow(env, replica, "POST", f"https://slack.com/api/{method}", token or replica.bot_token,
                     json.dumps(args).encode(), "application/json; charset=utf-8")
    body: dict[str, Any] = json.loads(answer.body)
    assert body["ok"], body
    return body


def _urls(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for item in value.values():
            yield from _urls(item)
    elif isinstance(value, list):
        for item in value:
            yield from _urls(item)
    elif isinstance(value, str) and value.startswith(("http://", "https://", "ws://", "wss://")):
        yield value


def _on_slack(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    return url.startswith(("https://", "wss://")) and any(host == h or host.endswith("." + h) for h in SLACK_HOSTS)


def test_real_hostnames__every_url_names_slacks_hosts_and_leads_back(slack_scene):
    env, replica = _env(slack_scene)
    support = env.refs["support"].id
    posted = _call(env, replica, "chat.postMessage", channel=support, text="find the export link")
    upload = _call(env, replica, "files.getUploadURLExternal", filename="export.csv", length=3)
    assert upload["upload_url"].startswith("https://files.slack.com/upload/v1/")
    sent = _follow(env, replica, "POST", upload["upload_url"], body=b"a,b")
    assert sent.status == 200 and sent.body == b"OK - 3"
    _call(env, replica, "files.completeUploadExternal", files=[{"id": upload["file_id"]}], channel_id=support)
    remote = _call(env, replica, "files.remote.add", external_id="d", external_url="https://docs.example.com/d",
                   title="Doc")
    answers = [
        posted, upload, remote,
        _call(env, replica, "auth.test"),
        _call(env, replica, "team.info"),
        _call(env, replica, "bots.info", bot=replica.bot.bot_id),
        _call(env, replica, "chat.getPermalink", channel=support, message_ts=posted["ts"]),
        _call(env, replica, "files.info", file=upload["file_id"]),
        _call(env, replica, "conversations.history", channel=support),
        _call(env, replica, "users.list"),
    ]
    urls = {url for answer in answers for url in _urls(answer) if not url.startswith("https://docs.example.com/")}
    assert not [url for url in urls if "/envs/" in url or not _on_slack(url)], sorted(urls)
    hosts = {urlsplit(url).hostname for url in urls}
    assert {"acme.slack.com", "files.slack.com", "slack-files.com", "a.slack-edge.com",
            "secure.gravatar.com"} <= hosts, hosts
    for url in urls - {upload["upload_url"]}:  # the upload URL is one use, and used above
        answer = _follow(env, replica, "GET", url, replica.bot_token)
        assert answer.status == 200, url


def test_real_hostnames__ancha_address_keeps_every_link_below_the_replica(slack_scene):
    env, replica = _env(slack_scene)
    headers = {"host": "127.0.0.1:8765", "authorization": f"Bearer {replica.bot_token}",
               "content-type": "application/json; charset=utf-8"}
    answer = env.dispatch("slack", ToolRequest("POST", "/api/auth.test", "", headers, b"{}"))
    assert json.loads(answer.body)["url"] == "http://127.0.0.1:8765/envs/env_test/slack/"


def test_real_hostnames__url_private_without_a_token_redirects_to_the_workspace(slack_scene):
    env, replica = _env(slack_scene)
    upload = _call(env, replica, "files.getUploadURLExternal", filename="a.txt", length=2)
    _follow(env, replica, "POST", upload["upload_url"], body=b"hi")
    file = _call(env, replica, "files.completeUploadExternal", files=[{"id": upload["file_id"]}])["files"][0]
    answer = _follow(env, replica, "GET", file["url_private"])
    assert answer.status == 302
    assert answer.headers["location"].startswith("https://acme.slack.com/?redir=%2Ffiles-pri%2F")


def test_apps_connections_open__real_hostnames_hand_out_wss_primary(slack_scene):
    env, replica = _env(slack_scene)
    url = _call(env, replica, "apps.connections.open", replica.app_token)["url"]
    parts = urlsplit(url)
    assert url.startswith("wss://wss-primary.slack.com/link/?ticket=")
    assert f"app_id={replica.bot.app_id}" in parts.query
    assert TOOL.real_hosts is not None
    path = TOOL.real_hosts(replica)["wss-primary.slack.com"].tool_path(parts.path)
    assert path == LINK_PATH
    assert _handshake(replica, path, parts.query)["type"] == "hello"


def _handshake(replica: SlackReplica, path: str, query: str) -> dict[str, Any]:
    """Open the Socket Mode WebSocket at ``path`` through the tool's handler; its first message."""
    assert TOOL.websocket is not None
    handler = TOOL.websocket
    sent: list[dict[str, Any]] = []

    async def run() -> None:
        said = asyncio.Event()
        incoming = iter([{"type": "websocket.connect"}])

        async def receive() -> dict[str, Any]:
            message = next(incoming, None)
            if message is not None:
                return message
            await said.wait()
            return {"type": "websocket.disconnect", "code": 1000}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)
            if message["type"] == "websocket.send":
                said.set()

        scope = {"type": "websocket", "path": path, "query_string": query.encode(), "headers": []}
        await asyncio.wait_for(handler(replica, path, scope, receive, send), timeout=10)

    asyncio.run(run())
    assert sent[0]["type"] == "websocket.accept", sent
    hello: dict[str, Any] = json.loads(next(m["text"] for m in sent if m["type"] == "websocket.send"))
    return hello
