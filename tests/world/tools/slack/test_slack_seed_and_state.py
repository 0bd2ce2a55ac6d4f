"""Seeding, refs, the state API checks read, user tokens, domain events and Events API payloads.

These drive an ``Environment`` in-process: they test what is not reachable over HTTP
(the state API, the bus, user tokens minted for people and world rules).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from ancha.scene.model import Scene
from ancha.world.environment import Environment
from ancha.world.kernel import vendor_data
from ancha.world.kernel.bus import DomainEvent
from ancha.world.kernel.tool import ToolRequest
from ancha.world.tools.slack import event_callback, events
from ancha.world.tools.slack.replica import SlackReplica


def _env(scene: dict) -> tuple[Environment, SlackReplica]:
    env = Environment("env_test", Scene.model_validate({"name": "s", **scene}), 1)
    replica = env.tools["slack"]
    assert isinstance(replica, SlackReplica)
    return env, replica


def _call(env: Environment, token: str, method: str, **args: object) -> dict:
    answer = env.dispatch("slack", ToolRequest("POST", f"/api/{method}", headers={
        "authorization": f"Bearer {token}", "content-type": "application/json; charset=utf-8"},
        body=json.dumps(args).encode()))
    return dict(json.loads(answer.body))


def test_seed__refs_resolve_to_ids(slack_scene):
    env, slack = _env(slack_scene)
    assert env.refs["laura"].kind == "user" and env.refs["laura"].id.startswith("U")
    assert env.refs["slack_bot"].id == slack.bot.id
    assert env.refs["support"].kind == "channel" and env.refs["support"].id.startswith("C")
    channel, ts = slack.message_ref("question")
    assert channel == env.refs["support"].id
    message = slack.state.message(channel, ts)
    assert message is not None and message.text == "Where did CSV exports go?" and message.seeded


def test_seed__same_scene_and_trial_give_the_same_ids_but_not_the_same_tokens(slack_scene):
    (env_a, a), (env_b, b) = _env(slack_scene), _env(slack_scene)
    assert env_a.refs["support"].id == env_b.refs["support"].id
    assert a.message_ref("answer") == b.message_ref("answer")
    assert a.credentials()["token"] != b.credentials()["token"]
    assert a.credentials()["token"].startswith("xoxb-") and a.credentials()["app_token"].startswith("xapp-")


def test_seed__undated_messages_are_spaced_before_the_start_and_threads_counted(slack_scene):
    env, slack = _env(slack_scene)
    start = datetime(2026, 3, 2, 9, tzinfo=UTC).timestamp()
    channel, ts = slack.message_ref("question")
    messages = slack.state.messages_in(channel)
    assert [m.text for m in messages] == ["Where did CSV exports go?", "Looking"]
    assert all(float(m.ts) < start for m in messages)
    question = messages[0]
    assert question.to_dict()["reply_count"] == 1 and question.reactions == {"eyes": [env.refs["ben"].id]}
    assert messages[1].thread_ts == ts
    assert [m.text for m in slack.state.messages_in(channel, include_replies=False)] == [question.text]


def test_seed__at_sets_the_ts(slack_scene):
    scene = slack_scene
    scene["world"]["slack"]["messages"][2]["at"] = "2026-03-01T12:00:00.250000Z"
    env, slack = _env(scene)
    assert slack.message_ref("hello")[1] == "1772366400.250000"


def test_seed__unknown_ref_is_an_error(slack_scene):
    scene = slack_scene
    scene["world"]["slack"]["messages"][0]["from"] = "nobody"
    with pytest.raises(ValueError, match="nobody"):
        _env(scene)


def test_user_token__acts_as_the_person_and_is_traced_so(slack_scene):
    env, slack = _env(slack_scene)
    token = slack.issue_user_token(env.refs["laura"].id, "person:laura")
    assert token.startswith("xoxp-")
    channel, ts = slack.message_ref("question")
    answer = _call(env, token, "chat.postMessage", channel=channel, text="Any news?", thread_ts=ts)
    assert answer["ok"] and answer["message"]["user"] == env.refs["laura"].id
    assert "bot_id" not in answer["message"]
    entry = list(env.trace)[-1]
    assert entry.actor == "person:laura" and entry.worked
    # a person posting in a public channel they are not in joins it
    random = env.refs["random"].id
    ben = slack.issue_user_token(env.refs["ben"].id, "world")
    assert _call(env, ben, "chat.postMessage", channel=random, text="hi")["ok"]
    assert env.refs["ben"].id in slack.state.channels[random].member_set


def test_bus__writes_publish_domain_events(slack_scene):
    env, slack = _env(slack_scene)
    seen: list[DomainEvent] = []
    for kind in ("message_posted", "message_changed", "message_deleted", "reaction_added",
                 "member_joined_channel"):
        env.bus.subscribe(kind, seen.append)
    token = slack.credentials()["token"]
    support = env.refs["support"].id
    posted = _call(env, token, "chat.postMessage", channel=support, text=f"hey <@{env.refs['laura'].id}>")
    _call(env, token, "chat.update", channel=support, ts=posted["ts"], text="edited")
    _call(env, token, "reactions.add", channel=support, timestamp=posted["ts"], name="tada")
    _call(env, token, "conversations.join", channel=env.refs["random"].id)
    _call(env, token, "chat.delete", channel=support, ts=posted["ts"])
    assert [e.type for e in seen] == ["message_posted", "message_changed", "reaction_added",
                                      "member_joined_channel", "message_posted", "message_deleted"]
    assert seen[4].data["subtype"] == "channel_join"  # Slack writes the join in the channel's history
    first = seen[0]
    assert first.tool == "slack" and first.data["channel"] == support and first.data["ts"] == posted["ts"]
    assert first.data["actor"] == "agent" and first.data["channel_type"] == "channel"
    assert first.data["user"] == slack.bot.id and first.data["thread_ts"] is None
    assert first.data["mentions"] == [env.refs["laura"].id]
    assert slack.state.message(support, posted["ts"]) is None


def test_state__messages_posted_are_not_seeded_and_snapshot_is_json(slack_scene):
    env, slack = _env(slack_scene)
    support = env.refs["support"].id
    posted = _call(env, slack.credentials()["token"], "chat.postMessage", channel=support, text="new")
    message = slack.state.message(support, posted["ts"])
    assert message is not None and not message.seeded and message.channel == support
    assert message.to_dict()["text"] == "new"
    snapshot = json.loads(json.dumps(slack.snapshot()))
    assert snapshot["messages"][support][-1]["ts"] == posted["ts"]
    assert set(slack.state.channels) == {c["id"] for c in snapshot["channels"]}
    assert slack.bot.id in slack.state.users


def _sample_fields(name: str) -> dict[str, Any]:
    """The sample payload's fields (its shape, as packaged): field -> its shape."""
    fields: dict[str, Any] = vendor_data.read("slack", "events")["payload_shapes"][name]["properties"]
    return fields


def test_events_api__message_and_app_mention_payloads_have_slacks_shape(slack_scene):
    env, slack = _env(slack_scene)
    support = env.refs["support"].id
    laura = slack.issue_user_token(env.refs["laura"].id, "person:laura")
    posted = _call(env, laura, "chat.postMessage", channel=support, text=f"<@{slack.bot.id}> help")
    message = slack.state.message(support, posted["ts"])
    assert message is not None
    channel = slack.state.channels[support]
    envelope = event_callback.event_callback(
        events.message_event(message, channel), team_id=slack.state.team["id"], api_app_id=str(slack.bot.app_id),
        bot_user_id=slack.bot.id, event_id="Ev0000000001", event_time=int(float(message.ts)))
    mention = events.app_mention_event(message, channel)
    assert envelope["type"] == "event_callback" and envelope["event"]["channel_type"] == "channel"
    assert envelope["event"]["ts"] == envelope["event"]["event_ts"] == posted["ts"]
    assert mention["type"] == "app_mention" and mention["user"] == env.refs["laura"].id
    for name, payload in (("MessagePayload.json", envelope), ("AppMentionPayload.json", {**envelope,
                                                                                          "event": mention})):
        sample = _sample_fields(name)
        assert set(sample) <= set(payload) | {"enterprise_id", "authed_users", "authed_teams"}
        assert set(payload["event"]) <= set(sample["event"]["properties"]) | {"reply_count", "reply_users_count",
                                                                 "is_locked", "subscribed", "latest_reply",
                                                                 "reply_users", "app_id"}
