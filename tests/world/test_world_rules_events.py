"""World-rule events: ``at``, ``after`` + ``delay``, ``unless``; Slack message and reaction
actions performed through the replica with actor ``world``."""

from __future__ import annotations

import copy

from world_agent import START_S, seconds


def _scene(people_scene, events):
    scene = copy.deepcopy(people_scene)
    scene["world_rules"] = {"events": events}
    return scene


def test_at__fires_at_its_time_through_the_replica_as_world(make_world, people_scene):
    scene = _scene(people_scene, [{"at": 600, "do": [{"slack.message": {
        "channel": "slack_support", "from": "slack_laura", "text": "Any news?", "thread_of": "slack_question"}}]}])
    w = make_world(scene)
    assert w.status()["pending"] == 1
    events = w.poll()
    inner = events[0]["payload"]["event"]
    assert inner["text"] == "Any news?" and inner["user"] == w.ids["slack_laura"]
    assert inner["thread_ts"] == w.ids["slack_question"]
    assert abs(float(inner["ts"]) - START_S - 600) < 0.01
    fired = w.records("event_fired")
    assert len(fired) == 1 and fired[0]["index"] == 0 and "errors" not in fired[0]
    trace = [line for line in w.http.get(f"/envs/{w.id}/trace").text.splitlines() if line]
    assert len(fired[0]["seqs"]) == 1
    import json

    entry = json.loads(trace[fired[0]["seqs"][0] - 1])
    assert entry["actor"] == "world" and entry["path"] == "/api/chat.postMessage" and entry["worked"]
    message = next(r for r in w.records("message") if r["ts"] == inner["ts"])
    assert message["actor"] == "world" and message["author_person"] == "laura"


def test_after__fires_delay_after_the_predicate_first_holds(make_world, people_scene):
    scene = _scene(people_scene, [{"after": {"message": {"to": "ben", "from_user": "slack_bot"}}, "delay": 90,
                                   "do": [{"slack.message": {"channel": "slack_eng", "from": "slack_mike",
                                                             "text": "Ben is on it."}}]}])
    w = make_world(scene, agent={"idle": 3600})
    assert w.status()["pending"] == 0
    assert w.poll("0s") == []
    told = w.post("slack_eng", "Ben, could you look at the CSV exports?")
    assert w.status()["pending"] == 1
    inner = w.poll()[0]["payload"]["event"]
    assert inner["text"] == "Ben is on it." and inner["user"] == w.ids["slack_mike"]
    assert abs(float(inner["ts"]) - float(told["ts"]) - 90) < 0.01
    assert [r["index"] for r in w.records("event_fired")] == [0]
    held = w.records("predicate")
    assert len(held) == 1 and abs(seconds(held[0]["at"]) - (float(told["ts"]) - START_S)) < 1e-3


def test_unless__skips_the_event_when_its_predicate_has_held(make_world, people_scene):
    scene = _scene(people_scene, [
        {"at": 600, "unless": {"message": {"to": "laura", "from_user": "slack_bot"}},
         "do": [{"slack.message": {"channel": "slack_support", "from": "slack_laura", "text": "Hello??"}}]},
        {"at": 900, "unless": {"message": {"to": "ben", "from_user": "slack_bot"}},
         "do": [{"slack.reaction": {"channel": "slack_support", "message": "slack_question",
                                    "from": "slack_ben", "name": "eyes"}}]},
    ])
    w = make_world(scene)
    w.post("slack_support", "Looking into it now.")  # reaches laura (listens to #support), not ben
    assert w.poll() == []  # nothing for the agent: the first is skipped, the second is a reaction
    assert w.wait_until_ended()["status"] == "idle"
    assert [r["index"] for r in w.records("event_skipped")] == [0]
    assert [r["index"] for r in w.records("event_fired")] == [1]
    assert abs(seconds(w.records("event_fired")[0]["at"]) - 900) < 0.01
    question = next(m for m in w.state()["messages"][w.ids["slack_support"]] if m["ts"] == w.ids["slack_question"])
    assert question["reactions"] == [{"name": "eyes", "users": [w.ids["slack_ben"]], "count": 1}]


def test_events__a_failing_action_is_recorded_with_the_vendors_error(make_world, people_scene):
    scene = _scene(people_scene, [{"at": 60, "do": [{"slack.message": {
        "channel": "slack_quiet", "from": "slack_ben", "text": "hi"}}]}])
    scene["world"]["slack"]["channels"][3]["private"] = True
    w = make_world(scene)
    assert w.poll() == []
    w.wait_until_ended()
    fired = w.records("event_fired")
    assert fired[0]["errors"] == ["slack.message: channel_not_found"]
