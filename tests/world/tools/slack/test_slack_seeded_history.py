"""Seeded history is shared by a scene's trials: a trial builds a channel's messages only
when something reads or writes that channel, and what it builds is the same either way."""

from __future__ import annotations

import copy
import gc
import json
from typing import Any

from ancha.scene.model import Scene
from ancha.world.environment import Environment
from ancha.world.kernel.tool import ToolRequest
from ancha.world.tools.slack.models import Message
from ancha.world.tools.slack.replica import SlackReplica

SCENE: dict[str, Any] = {
    "name": "s",
    "clock": {"start": "2026-03-02T09:00:00Z"},
    "world": {"slack": {
        "users": [{"ref": "laura", "name": "laura"}, {"ref": "ben", "name": "ben"}],
        "channels": [{"ref": "a", "name": "a", "members": ["laura", "ben", "slack_bot"]},
                     {"ref": "b", "name": "b", "members": ["laura", "slack_bot"]}],
        "messages": [
            {"ref": "q", "channel": "a", "from": "laura", "text": "q", "reactions": {"eyes": ["ben"]}},
            {"ref": "r1", "channel": "a", "from": "ben", "text": "r1", "thread_of": "q"},
            {"channel": "a", "from": "slack_bot", "text": "r2", "thread_of": "r1"},
            {"channel": "b", "from": "laura", "text": "x", "at": "2026-03-02T08:00:00Z"},
            {"channel": "b", "from": "laura", "text": "y", "at": "2026-03-02T08:00:00Z"},
        ],
    }},
}


def _env(trial: int = 1) -> tuple[Environment, SlackReplica]:
    env = Environment("env_test", Scene.model_validate(copy.deepcopy(SCENE)), trial)
    replica = env.tools["slack"]
    assert isinstance(replica, SlackReplica)
    return env, replica


def _call(env: Environment, token: str, method: str, **args: object) -> dict[str, Any]:
    answer = env.dispatch("slack", ToolRequest("POST", f"/api/{method}", headers={
        "authorization": f"Bearer {token}", "content-type": "application/json; charset=utf-8"},
        body=json.dumps(args).encode()))
    return dict(json.loads(answer.body))


def _messages_alive() -> int:
    """Messages held by something: earlier tests' garbage is collected first, or a collection
    that happens to run mid-test would make the count drop."""
    gc.collect()
    return sum(1 for item in gc.get_objects() if type(item) is Message)


def test_trial__builds_a_channels_seeded_messages_only_when_the_channel_is_read():
    before = _messages_alive()
    env, slack = _env()
    assert _messages_alive() == before
    token = slack.credentials()["token"]
    history = _call(env, token, "conversations.history", channel=env.refs["b"].id)
    assert [m["text"] for m in history["messages"]] == ["y", "x"]
    assert _messages_alive() == before + 2
    assert len(slack.state.messages_in(env.refs["a"].id)) == 3
    assert _messages_alive() == before + 5


def test_trial__a_post_to_an_untouched_channel_keeps_its_seeded_history_and_threads():
    env, slack = _env()
    token = slack.credentials()["token"]
    channel, question = slack.message_ref("q")
    posted = _call(env, token, "chat.postMessage", channel=channel, text="new", thread_ts=question)
    assert posted["ok"], posted
    replies = _call(env, token, "conversations.replies", channel=channel, ts=question)
    assert [m["text"] for m in replies["messages"]] == ["q", "r1", "r2", "new"]
    assert replies["messages"][0]["reply_count"] == 3
    assert replies["messages"][0]["reactions"] == [{"name": "eyes", "users": [env.refs["ben"].id], "count": 1}]
    assert [m.seeded for m in slack.state.messages_in(channel)] == [True, True, True, False]


def test_trial__the_same_world_whichever_channel_is_touched_first():
    (env_a, a), (env_b, b) = _env(), _env()
    a.state.messages_in(env_a.refs["a"].id)
    b.state.messages_in(env_b.refs["b"].id)
    snapshot_a, snapshot_b = a.snapshot(), b.snapshot()
    assert snapshot_a == snapshot_b
    texts = {cid: [m["text"] for m in messages] for cid, messages in snapshot_a["messages"].items()}
    assert texts == {env_a.refs["a"].id: ["q", "r1", "r2"], env_a.refs["b"].id: ["x", "y"]}
    x, y = snapshot_a["messages"][env_a.refs["b"].id]
    assert (x["ts"], y["ts"]) == ("1772438400.000000", "1772438400.000001")  # same `at`: a microsecond on


def test_trial__trials_of_a_scene_share_one_placed_history():
    scene = Scene.model_validate(copy.deepcopy(SCENE))
    first = Environment("env_1", scene, 1).tools["slack"]
    second = Environment("env_2", scene, 2).tools["slack"]
    assert isinstance(first, SlackReplica) and isinstance(second, SlackReplica)
    world = scene._seeds["slack"]
    assert len(world._histories) == 1
    assert first.message_ref("q")[1] == second.message_ref("q")[1]
    assert first.message_ref("q")[0] != second.message_ref("q")[0]  # ids still per trial


def _long_scene(messages: int) -> dict[str, Any]:
    scene = copy.deepcopy(SCENE)
    scene["world"]["slack"]["messages"] += [{"channel": "a", "from": "ben", "text": f"m{i}"} for i in range(messages)]
    return scene


def test_trial__reading_one_page_of_a_long_history_builds_only_that_page():
    env = Environment("env_test", Scene.model_validate(_long_scene(2000)), 1)
    slack = env.tools["slack"]
    assert isinstance(slack, SlackReplica)
    before = _messages_alive()
    page = _call(env, slack.credentials()["token"], "conversations.history", channel=env.refs["a"].id, limit=10)
    assert [m["text"] for m in page["messages"]] == [f"m{i}" for i in range(1999, 1989, -1)]
    assert page["has_more"] is True
    assert _messages_alive() - before == 10


RICH: dict[str, Any] = {
    "name": "rich",
    "clock": {"start": "2026-03-02T09:00:00Z"},
    "world": {"slack": {
        "users": [{"ref": "laura", "name": "laura"}, {"ref": "ben", "name": "ben"}, {"ref": "ana", "name": "ana"}],
        "channels": [{"ref": "a", "name": "a", "members": ["laura", "ben", "slack_bot"]},
                     {"ref": "b", "name": "b", "members": ["laura", "slack_bot"]},
                     {"ref": "empty", "name": "empty", "members": ["laura"]}],
        "messages": [
            {"ref": "q", "channel": "a", "from": "laura", "text": "q \"quoted\" \u00e9\u2603 \x7f",
             "reactions": {"eyes": ["ben", "ana"], ":+1:": ["laura"]}},
            {"ref": "r1", "channel": "a", "from": "ben", "text": "r1", "thread_of": "q"},
            {"channel": "a", "from": "slack_bot", "text": "r2 from the bot", "thread_of": "r1"},
            {"channel": "a", "from": "ana", "text": "r3", "thread_of": "q"},
            {"ref": "solo", "channel": "a", "from": "slack_bot", "text": "a bot's own line"},
            {"channel": "b", "from": "laura", "text": "x", "at": "2026-03-02T08:00:00Z",
             "files": [{"name": "notes.txt", "title": "Notes"}]},
            {"channel": "b", "from": "laura", "text": "y", "at": "2026-03-02T08:00:00Z"},
            *({"channel": "b", "from": "ben", "text": f"line {i}"} for i in range(15)),
            {"ref": "gone", "channel": "b", "from": "slack_bot", "text": "to be deleted"},
            *({"channel": "b", "from": "ben", "text": f"line {i}"} for i in range(15, 30)),
        ],
    }},
}


def _rich(trial: int) -> tuple[Environment, SlackReplica]:
    env = Environment("env_rich", Scene.model_validate(copy.deepcopy(RICH)), trial)
    slack = env.tools["slack"]
    assert isinstance(slack, SlackReplica)
    return env, slack


def _build_everything(slack: SlackReplica) -> None:
    for channel_id in slack.state.channels:
        slack.state.messages_in(channel_id)


def _world_json(env: Environment) -> dict[str, Any]:
    world: dict[str, Any] = json.loads(b"".join(env.snapshot_json()))
    return world


def test_snapshot__untouched_seeded_history_reads_as_if_every_message_were_built():
    for trial in (1, 2, 3):
        env, slack = _rich(trial)
        shared = _world_json(env)  # from the scene's shared text, with this trial's ids
        _build_everything(slack)
        assert shared == _world_json(env)  # from the trial's own messages
        assert slack.snapshot() == shared["slack"]
    thread = shared["slack"]["messages"][env.refs["a"].id]
    top = next(m for m in thread if m["text"].startswith("q "))
    assert top["text"] == "q \"quoted\" \u00e9\u2603 \x7f"
    assert top["reply_count"] == 3 and top["reply_users"] == [env.refs["ben"].id, slack.bot.id, env.refs["ana"].id]
    assert top["reactions"][0] == {"name": "eyes", "users": [env.refs["ben"].id, env.refs["ana"].id], "count": 2}
    own = next(m for m in thread if m["text"] == "a bot's own line")
    assert own["bot_id"] == slack.bot.bot_id and own["bot_profile"]["team_id"] == slack.state.team["id"]
    assert shared["slack"]["messages"][env.refs["empty"].id] == []


def test_snapshot__a_trial_that_changed_seeded_history_shows_each_change_among_the_shared_lines():
    env, slack = _rich(1)
    token = slack.credentials()["token"]
    channel, question = slack.message_ref("q")
    assert _call(env, token, "chat.postMessage", channel=channel, text="new reply", thread_ts=question)["ok"]
    other = env.refs["b"].id
    page = _call(env, token, "conversations.history", channel=other, limit=3)
    assert _call(env, token, "reactions.add", channel=other, timestamp=page["messages"][1]["ts"], name="tada")["ok"]
    _, solo = slack.message_ref("solo")
    assert _call(env, token, "chat.update", channel=channel, ts=solo, text="edited")["ok"]
    _, gone = slack.message_ref("gone")
    assert _call(env, token, "chat.delete", channel=other, ts=gone)["ok"]
    assert _call(env, token, "chat.postMessage", channel=other, text="the newest")["ok"]
    world = _world_json(env)
    _build_everything(slack)
    assert world == _world_json(env)
    texts = [m["text"] for m in world["slack"]["messages"][env.refs["a"].id]]
    assert "edited" in texts and "new reply" in texts and "a bot's own line" not in texts
    lines = world["slack"]["messages"][other]
    assert len(lines) == 33 and gone not in [m["ts"] for m in lines]
    assert lines[-1]["text"] == "the newest" and not lines[-1]["seeded"]
    assert [m["reactions"] for m in lines if "reactions" in m][0][0]["name"] == "tada"


def test_snapshot__is_the_world_when_asked_even_when_read_after_it_changed():
    env, slack = _rich(1)
    token = slack.credentials()["token"]
    other = env.refs["b"].id
    assert _call(env, token, "chat.postMessage", channel=other, text="before")["ok"]
    pieces = env.snapshot_json()  # asked for now, read below
    assert _call(env, token, "chat.postMessage", channel=other, text="after")["ok"]
    _, gone = slack.message_ref("gone")
    assert _call(env, token, "chat.delete", channel=other, ts=gone)["ok"]
    world = json.loads(b"".join(pieces))
    texts = [m["text"] for m in world["slack"]["messages"][other]]
    assert "before" in texts and "after" not in texts and "to be deleted" in texts


def test_snapshot__a_long_run_of_shared_lines_is_written_in_pieces_of_whole_lines(monkeypatch):
    from ancha.world.tools.slack import snapshot

    monkeypatch.setattr(snapshot, "PIECE", 300)  # a few lines a piece
    env, slack = _rich(2)
    pieces = list(env.snapshot_json())
    assert len(pieces) > 10
    world = json.loads(b"".join(pieces))
    _build_everything(slack)
    assert world == _world_json(env)
