"""The event feed: Slack's event_callback envelopes for messages the bot can see, an
app_mention as well for a mention of the bot, never the agent's own messages."""

from __future__ import annotations

import copy


def _with_events(people_scene, events):
    scene = copy.deepcopy(people_scene)
    scene["world_rules"] = {"events": events}
    return scene


def test_mention_of_the_bot__delivers_message_and_app_mention(make_world, people_scene):
    probe = make_world(people_scene, trial=7)
    bot = probe.bot_id  # ids come from the trial's RNG: the same trial gives the same bot id
    scene = _with_events(people_scene, [{"at": 60, "do": [{"slack.message": {
        "channel": "slack_support", "from": "slack_laura", "text": f"<@{bot}> are exports down?"}}]}])
    w = make_world(scene, trial=7)
    assert w.bot_id == bot
    events = w.poll()
    assert [e["type"] for e in events] == ["message", "app_mention"]
    message, mention = (e["payload"] for e in events)
    for payload in (message, mention):
        assert payload["type"] == "event_callback" and payload["team_id"] == w.context["tools"]["slack"]["team_id"]
        assert payload["authorizations"][0]["user_id"] == bot and payload["event_id"].startswith("Ev")
        assert payload["event_time"] == int(float(payload["event"]["ts"]))
    assert message["event_id"] != mention["event_id"]
    assert message["event"]["type"] == "message" and message["event"]["channel_type"] == "channel"
    assert mention["event"]["type"] == "app_mention" and mention["event"]["user"] == w.ids["slack_laura"]
    assert mention["event"]["text"] == f"<@{bot}> are exports down?"
    assert [e["id"] for e in events] == ["1", "2"] and w.cursor == "2"


def test_feed__nothing_from_channels_the_bot_is_not_in(make_world, people_scene):
    scene = _with_events(people_scene, [
        {"at": 60, "do": [{"slack.message": {"channel": "slack_quiet", "from": "slack_laura", "text": "psst"}}]},
        {"at": 120, "do": [{"slack.message": {"channel": "slack_random", "from": "slack_ben", "text": "hi all"}}]},
    ])
    w = make_world(scene)
    events = w.poll()
    assert [(e["payload"]["event"]["text"], e["at"]) for e in events] == [("hi all", "2026-03-02T09:02:00Z")]


def test_feed__never_the_agents_own_messages(make_world, people_scene):
    w = make_world(people_scene)
    w.post("slack_support", f"<@{w.bot_id}> talking to myself")
    w.post(w.dm("slack_laura"), "Hello")  # matches nothing of Laura's: no answer
    assert w.poll("0s") == []
    assert w.poll() == []
    assert w.wait_until_ended()["status"] == "idle"


def test_feed__cursor_reads_from_where_the_agent_left_off(make_world, people_scene):
    w = make_world(people_scene)
    dm = w.dm("slack_laura")
    w.post(dm, "Which workspace?")
    first = w.poll()
    w.post(dm, "Is the beta on?")
    second = w.poll()
    assert [e["id"] for e in first] == ["1"] and [e["id"] for e in second] == ["2"]
    w.cursor = "0"
    assert [e["id"] for e in w.poll("0s")] == ["1", "2"]
