"""Incoming webhooks: a scene's ``world.slack.incoming_webhooks`` each get a URL path
(``/services/T/B/X``) in the context's ``tools.slack.webhooks``; a JSON POST there posts to the
webhook's channel as its app and answers ``ok`` in plain text, as Slack does, and reached
through ``hooks.slack.com`` (``agent.hostnames: real``) it answers the same."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import httpx
from slack_sdk.webhook import WebhookClient
from tests.world.tools.slack.conftest import SCENE, Slack

from ancha.checks.judge import render_evidence
from ancha.scene.model import Scene
from ancha.world.environment import Environment
from ancha.world.kernel.hostnames import REAL_BASE, REAL_HOST
from ancha.world.kernel.tool import ToolRequest
from ancha.world.tools.slack.replica import SlackReplica
from ancha.world.tools.slack.spec import TOOL


def _scene(**hook: Any) -> dict[str, Any]:
    scene = copy.deepcopy(SCENE)
    scene["world"]["slack"]["incoming_webhooks"] = [
        {"ref": "hook_alerts", "channel": "support", "app": "AgentOS Alerts", **hook},
        {"ref": "hook_old", "channel": "old"},
    ]
    return scene


def _hook_url(slack: Slack, ref: str) -> str:
    return slack.url + slack.context["tools"]["slack"]["webhooks"][ref]


def test_incoming_webhook__json_post_answers_ok_and_shows_in_history_as_the_apps_bot_message(
        make_slack: Callable[..., Slack]):
    slack = make_slack(_scene())
    url = _hook_url(slack, "hook_alerts")
    assert url.startswith(f"{slack.url}/services/{slack.context['tools']['slack']['team_id']}/B")

    answer = httpx.post(url, json={"text": "Checkout latency is over 2s", "blocks": [
        {"type": "section", "text": {"type": "mrkdwn", "text": "*Checkout* latency is over 2s"}}]}, timeout=10)

    assert (answer.status_code, answer.text) == (200, "ok")
    assert answer.headers["content-type"].startswith("text/plain")
    latest = slack.client.conversations_history(channel=slack.channel("support"), limit=1)["messages"][0]
    assert latest["subtype"] == "bot_message" and latest["text"] == "Checkout latency is over 2s"
    assert latest["blocks"][0]["text"]["text"] == "*Checkout* latency is over 2s"
    app = slack.client.users_info(user=latest["user"])["user"]
    assert app["is_bot"] and app["name"] == "AgentOS Alerts"
    assert latest["bot_id"] == app["profile"]["bot_id"] != slack.client.auth_test()["bot_id"]


def test_incoming_webhook__slack_sdks_webhook_client_posts_and_threads_a_reply(make_slack: Callable[..., Slack]):
    slack = make_slack(_scene())
    client = WebhookClient(_hook_url(slack, "hook_alerts"))

    first = client.send(text="Alert fired: checkout pass rate dropped")
    assert (first.status_code, first.body) == (200, "ok")
    support = slack.channel("support")
    parent = slack.client.conversations_history(channel=support, limit=1)["messages"][0]
    reply = client.send_dict({"text": "Alert resolved", "thread_ts": parent["ts"],
                              "attachments": [{"color": "good", "text": "back to 98%"}]})
    assert (reply.status_code, reply.body) == (200, "ok")

    replies = slack.client.conversations_replies(channel=support, ts=parent["ts"])["messages"]
    assert [m["text"] for m in replies] == ["Alert fired: checkout pass rate dropped", "Alert resolved"]
    assert replies[1]["attachments"][0]["text"] == "back to 98%"


def test_incoming_webhook__without_an_app_posts_as_the_scenes_bot(make_slack: Callable[..., Slack]):
    scene = _scene()
    del scene["world"]["slack"]["incoming_webhooks"][0]["app"]
    slack = make_slack(scene)

    assert httpx.post(_hook_url(slack, "hook_alerts"), json={"text": "hi"}, timeout=10).text == "ok"
    latest = slack.client.conversations_history(channel=slack.channel("support"), limit=1)["messages"][0]
    assert latest["bot_id"] == slack.client.auth_test()["bot_id"] and latest["subtype"] == "bot_message"


def test_incoming_webhook__a_form_payload_field_posts_too(make_slack: Callable[..., Slack]):
    slack = make_slack(_scene())

    answer = httpx.post(_hook_url(slack, "hook_alerts"), data={"payload": json.dumps({"text": "from a form"})},
                        timeout=10)

    assert (answer.status_code, answer.text) == (200, "ok")
    latest = slack.client.conversations_history(channel=slack.channel("support"), limit=1)["messages"][0]
    assert latest["text"] == "from a form"


def test_incoming_webhook__errors_are_slacks_plain_text_names_with_their_statuses(make_slack: Callable[..., Slack]):
    slack = make_slack(_scene())
    url = _hook_url(slack, "hook_alerts")
    team = slack.context["tools"]["slack"]["team_id"]

    def post(target: str, **kwargs: Any) -> tuple[int, str]:
        answer = httpx.post(target, timeout=10, **kwargs)
        return answer.status_code, answer.text

    assert post(f"{slack.url}/services/{team}/B0000000000/not-a-secret", json={"text": "x"}) == (404, "no_service")
    assert post(url, json={}) == (400, "no_text")
    assert post(url, content=b"", headers={"content-type": "application/json"}) == (400, "invalid_payload")
    assert post(url, content=b"{not json", headers={"content-type": "application/json"}) == (400, "invalid_payload")
    assert post(_hook_url(slack, "hook_old"), json={"text": "x"}) == (410, "channel_is_archived")
    history = slack.client.conversations_history(channel=slack.channel("support"))["messages"]
    assert all(m.get("subtype") != "bot_message" for m in history)


def test_incoming_webhook__posts_are_traced_like_any_call(make_slack: Callable[..., Slack]):
    slack = make_slack(_scene())
    path = slack.context["tools"]["slack"]["webhooks"]["hook_alerts"]

    httpx.post(slack.url + path, json={"text": "traced"}, timeout=10)

    base = slack.url.rsplit("/slack", 1)[0]
    lines = [json.loads(line) for line in httpx.get(f"{base}/trace", timeout=10).text.splitlines()]
    assert [(e["tool"], e["method"], e["path"], e["status"], e["actor"], e["worked"]) for e in lines[-1:]] == [
        ("slack", "POST", path, 200, "agent", True)]


def _env(seed: int) -> tuple[Environment, SlackReplica]:
    env = Environment("env_test", Scene.model_validate({"name": "s", **_scene()}), 1, seed=seed)
    replica = env.tools["slack"]
    assert isinstance(replica, SlackReplica)
    return env, replica


def test_incoming_webhook__the_url_is_the_same_for_the_same_seed_and_differs_for_another():
    _, first = _env(7)
    _, again = _env(7)
    _, other = _env(8)

    assert first.credentials()["webhooks"] == again.credentials()["webhooks"]
    assert first.credentials()["webhooks"]["hook_alerts"] != other.credentials()["webhooks"]["hook_alerts"]


def test_incoming_webhook__hooks_slack_com_leads_to_the_replica_with_real_hostnames():
    env, replica = _env(7)
    path = replica.credentials()["webhooks"]["hook_alerts"]
    assert TOOL.real_hosts is not None
    route = TOOL.real_hosts(replica)["hooks.slack.com"]
    headers = {"host": "hooks.slack.com", REAL_BASE: route.base, REAL_HOST: "hooks.slack.com",
               "x-forwarded-proto": "https", "content-type": "application/json"}

    answer = env.dispatch("slack", ToolRequest("POST", route.tool_path(path), "", headers, b'{"text":"via hooks"}'))

    assert (answer.status, answer.body) == (200, b"ok")
    support = env.refs["support"].id
    assert replica.messages_as_read(support)[-1].text == "via hooks"


def test_incoming_webhook__its_url_is_redacted_from_what_the_judge_model_sees():
    _, replica = _env(7)
    path = replica.credentials()["webhooks"]["hook_alerts"]

    evidence = render_evidence([], [f"the alert config posts to https://hooks.slack.com{path}"])

    assert path not in evidence and "https://hooks.slack.com[redacted]" in evidence
