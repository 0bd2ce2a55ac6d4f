"""conversations.create, invite, kick, leave, archive, unarchive, rename, setTopic,
setPurpose, mark and close through slack_sdk, and the messages Slack writes in a
channel's history when it changes (channel_join, channel_topic, ...)."""

from __future__ import annotations

from typing import Any

import pytest
from slack_sdk.errors import SlackApiError

from ancha.scene.model import Scene
from ancha.world.environment import Environment
from ancha.world.tools.slack.reach import SlackActor


def _error(excinfo: pytest.ExceptionInfo[SlackApiError]) -> str:
    return str(excinfo.value.response["error"])


def _ids(slack) -> dict[str, str]:
    state = slack.state()
    found = {u["name"]: u["id"] for u in state["users"]}
    found.update({c["name"]: c["id"] for c in state["channels"] if c["name"]})
    found["bot"] = slack.context["tools"]["slack"]["bot_user_id"]
    return found


def _newest(slack, channel: str) -> dict[str, Any]:
    return dict(slack.client.conversations_history(channel=channel, limit=1)["messages"][0])


# --- conversations.create ------------------------------------------------------------


def test_create__a_public_channel_the_creator_is_in(slack, matches_spec):
    answer = slack.client.conversations_create(name="incident-42")
    matches_spec("conversations.create", answer.data)
    channel = answer["channel"]
    assert channel["name"] == "incident-42" and channel["id"].startswith("C")
    assert channel["is_private"] is False and channel["is_member"] is True
    bot = _ids(slack)["bot"]
    assert channel["creator"] == bot
    assert slack.client.conversations_members(channel=channel["id"])["members"] == [bot]
    joined = _newest(slack, channel["id"])
    assert joined["subtype"] == "channel_join" and joined["text"] == f"<@{bot}> has joined the channel"
    assert "incident-42" in {c["name"] for c in slack.client.conversations_list()["channels"]}


def test_create__private(slack):
    channel = slack.client.conversations_create(name="hush", is_private=True)["channel"]
    assert channel["is_private"] is True
    listed = slack.client.conversations_list(types="private_channel")["channels"]
    assert channel["id"] in {c["id"] for c in listed}


@pytest.mark.parametrize(("name", "code"), [
    ("", "invalid_name_required"),
    ("x" * 81, "invalid_name_maxlength"),
    ("Incident", "invalid_name_specials"),
    ("two words", "invalid_name_specials"),
    ("v1.2", "invalid_name_specials"),
    ("#hash", "invalid_name_specials"),
    ("---", "invalid_name_punctuation"),
    ("support", "name_taken"),
    ("old", "name_taken"),  # archived channels keep their names
])
def test_create__name_rules(slack, name, code):
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.conversations_create(name=name)
    assert _error(excinfo) == code


def test_create__eighty_characters_underscores_and_other_scripts_are_fine(slack):
    for name in ("x" * 80, "ops_on-call_2", "café-général"):
        assert slack.client.conversations_create(name=name)["channel"]["name"] == name


# --- conversations.invite ------------------------------------------------------------


def test_invite__adds_members_with_a_channel_join_message_naming_the_inviter(slack, matches_spec):
    ids = _ids(slack)
    channel = slack.client.conversations_create(name="war-room")["channel"]["id"]
    answer = slack.client.conversations_invite(channel=channel, users=[ids["laura"], ids["ben"]])
    matches_spec("conversations.invite", answer.data)
    assert set(slack.client.conversations_members(channel=channel)["members"]) == {ids["bot"], ids["laura"], ids["ben"]}
    history = slack.client.conversations_history(channel=channel)
    matches_spec("conversations.history", history.data)
    joins = [m for m in history["messages"] if m["subtype"] == "channel_join" and m["user"] != ids["bot"]]
    assert [(m["user"], m["text"], m["inviter"]) for m in reversed(joins)] == [
        (ids["laura"], f"<@{ids['laura']}> has joined the channel", ids["bot"]),
        (ids["ben"], f"<@{ids['ben']}> has joined the channel", ids["bot"]),
    ]


def test_invite__per_user_errors(slack):
    ids = _ids(slack)
    support = ids["support"]
    cases = [(ids["laura"], "already_in_channel"), (ids["bot"], "cant_invite_self"), ("U0NOBODY00", "user_not_found"),
             ("", "no_user")]
    for users, code in cases:
        with pytest.raises(SlackApiError) as excinfo:
            slack.client.conversations_invite(channel=support, users=users)
        assert _error(excinfo) == code, users
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.conversations_invite(channel=support, users=[ids["ben"], "U0NOBODY00"])
    assert _error(excinfo) == "already_in_channel"
    assert excinfo.value.response["errors"] == [
        {"user": ids["ben"], "ok": False, "error": "already_in_channel"},
        {"user": "U0NOBODY00", "ok": False, "error": "user_not_found"},
    ]


def test_invite__force_invites_the_valid_users_and_reports_the_others(slack):
    ids = _ids(slack)
    channel = slack.client.conversations_create(name="forced")["channel"]["id"]
    answer = slack.client.conversations_invite(channel=channel, users=["U0NOBODY00", ids["ben"]], force=True)
    assert answer["errors"] == [{"user": "U0NOBODY00", "ok": False, "error": "user_not_found"}]
    assert ids["ben"] in slack.client.conversations_members(channel=channel)["members"]


def test_invite__channel_errors(slack):
    ids = _ids(slack)
    dm = slack.client.conversations_open(users=ids["laura"])["channel"]["id"]
    for channel, code in [("C0NOPE00000", "channel_not_found"), (ids["random"], "not_in_channel"),
                          (ids["old"], "is_archived"), (dm, "method_not_supported_for_channel_type")]:
        with pytest.raises(SlackApiError) as excinfo:
            slack.client.conversations_invite(channel=channel, users=ids["ben"])
        assert _error(excinfo) == code, channel


# --- conversations.join, leave, kick -------------------------------------------------


def test_join__writes_a_channel_join_message_once(slack):
    ids = _ids(slack)
    slack.client.conversations_join(channel=ids["random"])
    joined = _newest(slack, ids["random"])
    assert joined["subtype"] == "channel_join" and joined["user"] == ids["bot"] and "inviter" not in joined
    again = slack.client.conversations_join(channel=ids["random"])
    assert again["warning"] == "already_in_channel"
    assert _newest(slack, ids["random"])["ts"] == joined["ts"]


def test_leave__writes_channel_leave_and_takes_the_bot_out(slack, matches_spec):
    ids = _ids(slack)
    answer = slack.client.conversations_leave(channel=ids["support"])
    matches_spec("conversations.leave", answer.data)
    assert ids["bot"] not in slack.client.conversations_members(channel=ids["support"])["members"]
    messages = slack.state()["messages"][ids["support"]]
    assert messages[-1]["subtype"] == "channel_leave"
    assert messages[-1]["text"] == f"<@{ids['bot']}> has left the channel"
    again = slack.client.conversations_leave(channel=ids["support"])
    assert again.data == {"ok": True, "not_in_channel": True}


def test_leave__general_archived_and_dm(make_slack, slack_scene):
    slack_scene["world"]["slack"]["channels"].append({"name": "general", "members": ["laura", "slack_bot"]})
    slack = make_slack(slack_scene)
    ids = _ids(slack)
    dm = slack.client.conversations_open(users=ids["laura"])["channel"]["id"]
    for channel, code in [(ids["general"], "cant_leave_general"), (ids["old"], "is_archived"),
                          (dm, "method_not_supported_for_channel_type"), ("C0NOPE00000", "channel_not_found")]:
        with pytest.raises(SlackApiError) as excinfo:
            slack.client.conversations_leave(channel=channel)
        assert _error(excinfo) == code, channel


def test_leave__the_last_member_of_a_private_channel_cannot(slack):
    hush = slack.client.conversations_create(name="hush", is_private=True)["channel"]["id"]
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.conversations_leave(channel=hush)
    assert _error(excinfo) == "last_member"


def test_kick__removes_a_member(slack, matches_spec):
    ids = _ids(slack)
    answer = slack.client.conversations_kick(channel=ids["support"], user=ids["ben"])
    matches_spec("conversations.kick", answer.data)
    assert ids["ben"] not in slack.client.conversations_members(channel=ids["support"])["members"]
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.conversations_kick(channel=ids["support"], user=ids["ben"])
    assert _error(excinfo) == "not_in_channel"


def test_kick__errors(make_slack, slack_scene):
    slack_scene["world"]["slack"]["channels"].append({"name": "general", "members": ["laura", "slack_bot"]})
    slack = make_slack(slack_scene)
    ids = _ids(slack)
    for channel, user, code in [(ids["support"], ids["bot"], "cant_kick_self"),
                                (ids["support"], "U0NOBODY00", "user_not_found"),
                                (ids["general"], ids["laura"], "cant_kick_from_general"),
                                ("C0NOPE00000", ids["laura"], "channel_not_found")]:
        with pytest.raises(SlackApiError) as excinfo:
            slack.client.conversations_kick(channel=channel, user=user)
        assert _error(excinfo) == code, (channel, user)


# --- archive, unarchive, rename ------------------------------------------------------


def test_archive_and_unarchive__flip_is_archived_with_a_message_each(slack, matches_spec):
    ids = _ids(slack)
    support = ids["support"]
    archived = slack.client.conversations_archive(channel=support)
    matches_spec("conversations.archive", archived.data)
    assert slack.client.conversations_info(channel=support)["channel"]["is_archived"] is True
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.chat_postMessage(channel=support, text="hello?")
    assert _error(excinfo) == "is_archived"
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.conversations_archive(channel=support)
    assert _error(excinfo) == "already_archived"
    unarchived = slack.client.conversations_unarchive(channel=support)
    matches_spec("conversations.unarchive", unarchived.data)
    assert slack.client.conversations_info(channel=support)["channel"]["is_archived"] is False
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.conversations_unarchive(channel=support)
    assert _error(excinfo) == "not_archived"
    texts = [(m.get("subtype"), m["text"]) for m in slack.client.conversations_history(channel=support, limit=2)["messages"]]
    assert texts == [("channel_unarchive", f"<@{ids['bot']}> un-archived the channel"),
                     ("channel_archive", f"<@{ids['bot']}> archived the channel")]


def test_archive__errors(make_slack, slack_scene):
    slack_scene["world"]["slack"]["channels"].append({"name": "general", "members": ["laura", "slack_bot"]})
    slack = make_slack(slack_scene)
    ids = _ids(slack)
    dm = slack.client.conversations_open(users=ids["laura"])["channel"]["id"]
    for channel, code in [(ids["general"], "cant_archive_general"), (ids["random"], "not_in_channel"),
                          (dm, "method_not_supported_for_channel_type"), ("C0NOPE00000", "channel_not_found")]:
        with pytest.raises(SlackApiError) as excinfo:
            slack.client.conversations_archive(channel=channel)
        assert _error(excinfo) == code, channel


def test_rename__new_name_previous_names_and_a_channel_name_message(slack, matches_spec):
    ids = _ids(slack)
    answer = slack.client.conversations_rename(channel=ids["support"], name="customer-support")
    matches_spec("conversations.rename", answer.data)
    assert answer["channel"]["name"] == "customer-support"
    assert answer["channel"]["previous_names"] == ["support"]
    renamed = _newest(slack, ids["support"])
    assert renamed["subtype"] == "channel_name"
    assert (renamed["old_name"], renamed["name"]) == ("support", "customer-support")
    assert renamed["text"] == f'<@{ids["bot"]}> has renamed the channel from "support" to "customer-support"'
    assert slack.client.chat_postMessage(channel="#customer-support", text="hi")["channel"] == ids["support"]
    assert slack.client.conversations_create(name="support")["ok"] is True  # the old name is free again


def test_rename__errors(slack):
    ids = _ids(slack)
    for channel, name, code in [(ids["support"], "random", "name_taken"), (ids["support"], "Bad Name", "invalid_name_specials"),
                                (ids["random"], "fine", "not_in_channel"), ("C0NOPE00000", "fine", "channel_not_found")]:
        with pytest.raises(SlackApiError) as excinfo:
            slack.client.conversations_rename(channel=channel, name=name)
        assert _error(excinfo) == code, (channel, name)


# --- setTopic, setPurpose ------------------------------------------------------------


def test_set_topic__sets_it_with_a_channel_topic_message(slack, matches_spec):
    ids = _ids(slack)
    answer = slack.client.conversations_setTopic(channel=ids["support"], topic="Exports incident: see thread")
    matches_spec("conversations.setTopic", answer.data)
    topic = answer["channel"]["topic"]
    assert topic["value"] == "Exports incident: see thread" and topic["creator"] == ids["bot"]
    assert topic["last_set"] >= answer["channel"]["created"]
    message = _newest(slack, ids["support"])
    assert message["subtype"] == "channel_topic" and message["topic"] == "Exports incident: see thread"
    assert message["text"] == f"<@{ids['bot']}> set the channel topic: Exports incident: see thread"
    assert slack.client.conversations_info(channel=ids["support"])["channel"]["topic"]["value"] == topic["value"]


def test_set_topic__same_topic_writes_no_message_and_empty_clears(slack):
    ids = _ids(slack)
    slack.client.conversations_setTopic(channel=ids["support"], topic="Customer questions")  # the seeded topic
    assert _newest(slack, ids["support"]).get("subtype") is None
    cleared = slack.client.conversations_setTopic(channel=ids["support"], topic="")
    assert cleared["channel"]["topic"] == {"value": "", "creator": "", "last_set": 0}
    assert _newest(slack, ids["support"])["text"] == f"<@{ids['bot']}> cleared the channel topic"


def test_set_purpose__sets_it_with_a_channel_purpose_message(slack, matches_spec):
    ids = _ids(slack)
    answer = slack.client.conversations_setPurpose(channel=ids["support"], purpose="Questions from customers")
    matches_spec("conversations.setPurpose", answer.data)
    assert answer["channel"]["purpose"]["value"] == "Questions from customers"
    message = _newest(slack, ids["support"])
    assert message["subtype"] == "channel_purpose" and message["purpose"] == "Questions from customers"
    assert message["text"] == f"<@{ids['bot']}> set the channel purpose: Questions from customers"


def test_set_topic_and_purpose__errors(slack):
    ids = _ids(slack)
    for method, field in [(slack.client.conversations_setTopic, "topic"),
                          (slack.client.conversations_setPurpose, "purpose")]:
        for channel, value, code in [(ids["support"], "x" * 251, "too_long"), (ids["random"], "x", "not_in_channel"),
                                     (ids["old"], "x", "is_archived"), ("C0NOPE00000", "x", "channel_not_found")]:
            with pytest.raises(SlackApiError) as excinfo:
                method(channel=channel, **{field: value})
            assert _error(excinfo) == code, (field, channel)
    answer = slack.raw("conversations.setTopic", data={"channel": ids["support"]},
                       headers={"authorization": f"Bearer {slack.token}"}).json()
    assert answer["error"] == "invalid_arguments"


# --- mark, close ---------------------------------------------------------------------


def test_mark__sets_last_read(slack, matches_spec):
    ids = _ids(slack)
    ts = _newest(slack, ids["support"])["ts"]
    answer = slack.client.conversations_mark(channel=ids["support"], ts=ts)
    matches_spec("conversations.mark", answer.data)
    assert slack.client.conversations_info(channel=ids["support"])["channel"]["last_read"] == ts
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.conversations_mark(channel=ids["support"], ts="yesterday")
    assert _error(excinfo) == "invalid_timestamp"
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.conversations_mark(channel=ids["random"], ts=ts)
    assert _error(excinfo) == "not_in_channel"


def test_close__a_dm_then_again_then_reopened(slack, matches_spec):
    ids = _ids(slack)
    dm = slack.client.conversations_open(users=ids["laura"])["channel"]["id"]
    closed = slack.client.conversations_close(channel=dm)
    matches_spec("conversations.close", closed.data)
    assert closed.data == {"ok": True}
    assert slack.client.conversations_close(channel=dm).data == {"ok": True, "no_op": True, "already_closed": True}
    reopened = slack.client.conversations_open(users=ids["laura"])
    assert reopened["channel"]["id"] == dm and "already_open" not in reopened.data
    assert slack.client.conversations_open(users=ids["laura"])["already_open"] is True
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.conversations_close(channel=ids["support"])
    assert _error(excinfo) == "method_not_supported_for_channel_type"


# --- channel messages as events --------------------------------------------------------


def test_channel_messages__are_message_events_with_their_subtype_but_reach_nobody(slack_scene):
    """A person joining a channel the bot is in: the bus carries a message_posted with subtype
    channel_join, the agent's feed gets Slack's message event, and no person is told of it."""
    env = Environment("env_channel_events", Scene.model_validate({"name": "channel-events", **slack_scene}), 1)
    slack: Any = env.tools["slack"]
    posted: list[dict[str, Any]] = []
    env.bus.subscribe("message_posted", lambda event: posted.append(event.data))
    laura = next(u.id for u in slack.state.users.values() if u.name == "laura")
    support = slack.state.channel_named("support")
    random = slack.state.channel_named("random")
    slack.state.channels[random.id].add_member(slack.bot.id)
    answer = SlackActor(env, slack).call(laura, "person:laura", "conversations.setTopic", channel=support.id, topic="Busy day")
    assert answer["ok"] is True
    ben = next(u.id for u in slack.state.users.values() if u.name == "ben")
    assert SlackActor(env, slack).call(ben, "person:ben", "conversations.join", channel=random.id)["ok"] is True
    assert [(p["subtype"], p["actor"]) for p in posted] == [("channel_topic", "person:laura"),
                                                            ("channel_join", "person:ben")]
    events = [e["payload"]["event"] for e in env.feed.events if e["type"] == "message"]
    assert [(e["subtype"], e["channel"]) for e in events] == [("channel_topic", support.id), ("channel_join", random.id)]
    assert events[0]["topic"] == "Busy day" and events[0]["text"] == f"<@{laura}> set the channel topic: Busy day"
    assert env.records.of_kind("message") == []  # people hear nothing of it
