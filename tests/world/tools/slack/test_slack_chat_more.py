"""chat.postEphemeral, chat.meMessage, chat.scheduleMessage (and its list and delete), and
chat.startStream/appendStream/stopStream, through slack_sdk."""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest
from slack_sdk.errors import SlackApiError

from ancha.scene.model import Scene
from ancha.world.environment import Environment
from ancha.world.tools.slack.reach import SlackActor

DAY = 86_400


def _error(excinfo: pytest.ExceptionInfo[SlackApiError]) -> str:
    return str(excinfo.value.response["error"])


def _now(slack) -> float:
    """Simulated now, as the ts of a message posted now."""
    return float(slack.client.chat_postMessage(channel="#support", text="tick")["ts"])


def _user(slack, name: str) -> str:
    return next(u["id"] for u in slack.state()["users"] if u["name"] == name)


def _texts(slack, channel: str) -> list[str]:
    return [m["text"] for m in slack.client.conversations_history(channel=channel, limit=200)["messages"]]


def _wait_for(condition, what: str, timeout: float = 20.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        found = condition()
        if found:
            return found
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


# --- chat.postEphemeral --------------------------------------------------------------


def test_post_ephemeral__answers_message_ts_and_stays_out_of_history(slack, matches_spec):
    support = slack.channel("support")
    laura = _user(slack, "laura")
    answer = slack.client.chat_postEphemeral(channel=support, user=laura, text="Only you can see this")
    matches_spec("chat.postEphemeral", answer.data)
    assert set(answer.data) == {"ok", "message_ts"}
    assert "Only you can see this" not in _texts(slack, support)
    state = slack.state()
    assert all(m["text"] != "Only you can see this" for m in state["messages"][support])
    [kept] = state["ephemeral_messages"]
    assert kept["channel"] == support and kept["recipient"] == laura
    assert kept["ts"] == answer["message_ts"] and kept["text"] == "Only you can see this"
    assert kept["actor"] == "agent"


def test_post_ephemeral__recipient_must_be_in_the_channel(slack):
    ben = _user(slack, "ben")
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.chat_postEphemeral(channel=slack.channel("support"), user="U0NOBODY00", text="hi")
    assert _error(excinfo) == "user_not_in_channel"
    ops = next(c["id"] for c in slack.state()["channels"] if c["name"] == "ops")
    laura = _user(slack, "laura")
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.chat_postEphemeral(channel=ops, user=laura, text="hi")
    assert _error(excinfo) == "user_not_in_channel"
    assert slack.client.chat_postEphemeral(channel=ops, user=ben, text="hi")["ok"] is True


def test_post_ephemeral__slacks_channel_and_text_errors(slack):
    laura = _user(slack, "laura")
    cases = [({"channel": "C0NOPE00000", "text": "x"}, "channel_not_found"),
             ({"channel": slack.channel("random"), "text": "x"}, "not_in_channel"),
             ({"channel": slack.channel("old"), "text": "x"}, "is_archived"),
             ({"channel": slack.channel("support"), "text": ""}, "no_text"),
             ({"channel": slack.channel("support"), "text": "x" * 40_001}, "msg_too_long")]
    for args, code in cases:
        with pytest.raises(SlackApiError) as excinfo:
            slack.client.chat_postEphemeral(user=laura, **args)
        assert _error(excinfo) == code, args


# --- chat.meMessage ------------------------------------------------------------------


def test_me_message__posts_a_me_message_subtype(slack, matches_spec):
    support = slack.channel("support")
    answer = slack.client.chat_meMessage(channel=support, text="is looking into it")
    matches_spec("chat.meMessage", answer.data)
    newest = slack.client.conversations_history(channel=support, limit=1)["messages"][0]
    assert newest["ts"] == answer["ts"]
    assert newest["subtype"] == "me_message" and newest["text"] == "is looking into it"


def test_me_message__errors(slack):
    for args, code in [({"channel": slack.channel("support"), "text": ""}, "no_text"),
                       ({"channel": slack.channel("random"), "text": "x"}, "not_in_channel"),
                       ({"channel": slack.channel("old"), "text": "x"}, "is_archived")]:
        with pytest.raises(SlackApiError) as excinfo:
            slack.client.chat_meMessage(**args)
        assert _error(excinfo) == code


# --- chat.scheduleMessage ------------------------------------------------------------


def test_schedule_message__answers_slacks_shape_and_waits_out_of_history(slack, matches_spec):
    support = slack.channel("support")
    post_at = int(_now(slack)) + 3600
    answer = slack.client.chat_scheduleMessage(channel=support, text="Reminder: standup", post_at=post_at)
    matches_spec("chat.scheduleMessage", answer.data)
    assert answer["channel"] == support and answer["post_at"] == post_at
    assert answer["scheduled_message_id"].startswith("Q")
    assert answer["message"]["type"] == "delayed_message" and answer["message"]["text"] == "Reminder: standup"
    assert "Reminder: standup" not in _texts(slack, support)
    [waiting] = slack.state()["scheduled_messages"]
    assert waiting["id"] == answer["scheduled_message_id"] and waiting["post_at"] == post_at


def test_schedule_message__posts_when_the_simulated_clock_reaches_post_at(slack):
    """While the agent waits the clock jumps to what is due: the message is posted then, with a
    ts at its post_at, and is no longer listed as scheduled."""
    support = slack.channel("support")
    post_at = int(_now(slack)) + 30 * 60  # within the scene's clock.limit (an hour)
    answer = slack.client.chat_scheduleMessage(channel=support, text="Half an hour later", post_at=str(post_at))
    control = slack.url.rsplit("/slack", 1)[0]
    waiting = httpx.post(f"{control}/waiting", json={"waiting": True}, timeout=10,
                         headers={"authorization": f"Bearer {slack.context['trial_token']}"})
    assert waiting.status_code == 200, waiting.text

    def posted() -> dict[str, Any] | None:
        state = slack.state()
        return next((m for m in state["messages"][support] if m["text"] == "Half an hour later"), None)

    message = _wait_for(posted, "the scheduled message to be posted")
    assert post_at <= float(message["ts"]) < post_at + 1
    assert message["user"] == slack.context["tools"]["slack"]["bot_user_id"] and message["actor"] == "agent"
    assert answer["scheduled_message_id"] not in {m["id"] for m in slack.state()["scheduled_messages"]}


def test_schedule_message__fires_while_the_agent_works_too(make_slack, slack_scene):
    """At 600x speed, a message 20 simulated minutes ahead is posted about 2 real seconds later."""
    slack_scene["clock"]["speed"] = 600
    slack = make_slack(slack_scene)
    support = slack.channel("support")
    post_at = int(_now(slack)) + 20 * 60
    slack.client.chat_scheduleMessage(channel=support, text="Soon", post_at=post_at, thread_ts=None)
    _wait_for(lambda: "Soon" in _texts(slack, support), "the scheduled message to be posted")
    assert slack.client.chat_scheduledMessages_list()["scheduled_messages"] == []


def test_schedule_message__in_a_thread(slack):
    support = slack.channel("support")
    parent = slack.client.chat_postMessage(channel=support, text="parent")["ts"]
    answer = slack.client.chat_scheduleMessage(channel=support, text="later reply", thread_ts=parent,
                                               post_at=int(float(parent)) + 600)
    assert answer["ok"] is True
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.chat_scheduleMessage(channel=support, text="x", thread_ts="1234567890.000001",
                                          post_at=int(float(parent)) + 600)
    assert _error(excinfo) == "thread_not_found"


def test_schedule_message__time_errors(slack):
    support = slack.channel("support")
    now = int(_now(slack))
    for post_at, code in [(now - 60, "time_in_past"), (now, "time_in_past"),
                          (now + 121 * DAY, "time_too_far"), ("tomorrow", "invalid_time")]:
        with pytest.raises(SlackApiError) as excinfo:
            slack.client.chat_scheduleMessage(channel=support, text="x", post_at=post_at)
        assert _error(excinfo) == code, post_at
    assert slack.client.chat_scheduleMessage(channel=support, text="x", post_at=now + 119 * DAY)["ok"]


def test_schedule_message__channel_and_text_errors(slack):
    post_at = int(_now(slack)) + 600
    for args, code in [({"channel": "C0NOPE00000", "text": "x"}, "channel_not_found"),
                       ({"channel": slack.channel("random"), "text": "x"}, "not_in_channel"),
                       ({"channel": slack.channel("old"), "text": "x"}, "is_archived"),
                       ({"channel": slack.channel("support")}, "no_text")]:
        with pytest.raises(SlackApiError) as excinfo:
            slack.client.chat_scheduleMessage(post_at=post_at, **args)
        assert _error(excinfo) == code, args


def test_scheduled_messages_list__the_callers_own_soonest_first_paged(slack, matches_spec):
    support = slack.channel("support")
    now = int(_now(slack))
    ids = [slack.client.chat_scheduleMessage(channel=support, text=f"m{i}", post_at=now + 600 * (3 - i))
           ["scheduled_message_id"] for i in range(3)]
    answer = slack.client.chat_scheduledMessages_list()
    matches_spec("chat.scheduledMessages.list", answer.data)
    assert [m["id"] for m in answer["scheduled_messages"]] == ids[::-1]
    first = answer["scheduled_messages"][0]
    assert first["channel_id"] == support and first["text"] == "m2" and first["date_created"] <= now + 1
    seen = [m["id"] for page in slack.client.chat_scheduledMessages_list(limit=2) for m in page["scheduled_messages"]]
    assert seen == ids[::-1]
    window = slack.client.chat_scheduledMessages_list(channel=support, oldest=str(now + 900), latest=str(now + 1800))
    assert [m["text"] for m in window["scheduled_messages"]] == ["m1", "m0"]


def test_scheduled_messages_list__unknown_channel_is_invalid_channel(slack):
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.chat_scheduledMessages_list(channel="C0NOPE00000")
    assert _error(excinfo) == "invalid_channel"


def test_delete_scheduled_message__it_is_never_posted(slack, matches_spec):
    support = slack.channel("support")
    post_at = int(_now(slack)) + 600
    scheduled = slack.client.chat_scheduleMessage(channel=support, text="never", post_at=post_at)
    answer = slack.client.chat_deleteScheduledMessage(channel=support,
                                                      scheduled_message_id=scheduled["scheduled_message_id"])
    matches_spec("chat.deleteScheduledMessage", answer.data)
    assert slack.client.chat_scheduledMessages_list()["scheduled_messages"] == []
    assert slack.state()["scheduled_messages"] == []
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.chat_deleteScheduledMessage(channel=support,
                                                 scheduled_message_id=scheduled["scheduled_message_id"])
    assert _error(excinfo) == "invalid_scheduled_message_id"


def test_delete_scheduled_message__unknown_id_or_wrong_channel(slack):
    support = slack.channel("support")
    scheduled = slack.client.chat_scheduleMessage(channel=support, text="x", post_at=int(_now(slack)) + 600)
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.chat_deleteScheduledMessage(channel=support, scheduled_message_id="Q0000000000")
    assert _error(excinfo) == "invalid_scheduled_message_id"
    ops = next(c["id"] for c in slack.state()["channels"] if c["name"] == "ops")
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.chat_deleteScheduledMessage(channel=ops, scheduled_message_id=scheduled["scheduled_message_id"])
    assert _error(excinfo) == "invalid_scheduled_message_id"
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.chat_deleteScheduledMessage(channel="C0NOPE00000",
                                                 scheduled_message_id=scheduled["scheduled_message_id"])
    assert _error(excinfo) == "channel_not_found"


# --- chat.startStream / appendStream / stopStream -------------------------------------


def test_chat_stream__the_sdk_helper_streams_one_reply(slack):
    """slack_sdk's ``chat_stream()`` (start, append, stop) leaves one reply with the whole text."""
    support = slack.channel("support")
    parent = slack.client.chat_postMessage(channel=support, text="How do I export?")["ts"]
    streamer = slack.client.chat_stream(channel=support, thread_ts=parent, buffer_size=8)
    streamer.append(markdown_text="Open **Reports**, ")
    streamer.append(markdown_text="then choose Export.")
    stopped = streamer.stop(markdown_text=" Done.")
    assert stopped["message"]["text"] == "Open **Reports**, then choose Export. Done."
    replies = slack.client.conversations_replies(channel=support, ts=parent)["messages"]
    assert [m["text"] for m in replies[1:]] == ["Open **Reports**, then choose Export. Done."]


def test_chat_stream__raw_calls_and_streaming_state(slack):
    support = slack.channel("support")
    parent = slack.client.chat_postMessage(channel=support, text="q")["ts"]
    started = slack.client.chat_startStream(channel=support, thread_ts=parent, markdown_text="Hel")
    assert started["channel"] == support
    ts = started["ts"]
    slack.client.chat_appendStream(channel=support, ts=ts, markdown_text="lo")
    replies = slack.client.conversations_replies(channel=support, ts=parent)["messages"]
    assert replies[-1]["text"] == "Hello"  # in history while it streams
    slack.client.chat_stopStream(channel=support, ts=ts)
    for method in (slack.client.chat_appendStream, slack.client.chat_stopStream):
        with pytest.raises(SlackApiError) as excinfo:
            method(channel=support, ts=ts, markdown_text="more")
        assert _error(excinfo) == "message_not_in_streaming_state"
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.chat_appendStream(channel=support, ts="1234567890.000001", markdown_text="x")
    assert _error(excinfo) == "message_not_found"


def test_chat_stream__published_once_with_the_whole_text_when_it_stops(slack_scene):
    """People, predicates and the feed hear a streamed reply once, finished, not its first words."""
    env = Environment("env_stream", Scene.model_validate({"name": "stream", **slack_scene}), 1)
    slack: Any = env.tools["slack"]
    posted: list[dict[str, Any]] = []
    env.bus.subscribe("message_posted", lambda event: posted.append(event.data))
    support = slack.state.channel_named("support").id
    call = SlackActor(env, slack).call
    started = call(slack.bot.id, "agent", "chat.startStream", channel=support, markdown_text="Exports moved ")
    call(slack.bot.id, "agent", "chat.appendStream", channel=support, ts=started["ts"],
         chunks=[{"type": "markdown_text", "text": "to Reports."}])
    assert posted == []
    call(slack.bot.id, "agent", "chat.stopStream", channel=support, ts=started["ts"])
    assert [(p["ts"], p["text"]) for p in posted] == [(started["ts"], "Exports moved to Reports.")]
