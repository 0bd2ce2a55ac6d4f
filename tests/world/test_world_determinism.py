"""The same agent behaviour on the same scene and trial gives the same world: the same
records, ids and reply delays (drawn from the trial's RNG), at the same simulated times up
to the real time the agent itself spends working."""

from __future__ import annotations

import copy
from typing import Any

from world_agent import World, seconds

TIME_FIELDS = {"at", "ts", "thread_ts", "message"}


def _scene(people_scene: dict[str, Any]) -> dict[str, Any]:
    scene = copy.deepcopy(people_scene)
    # The agent's own working time moves the clock at ``speed``: slowed a hundredfold, a loaded
    # machine's extra seconds of work stay far inside the tolerance below.
    scene["clock"] = {**scene.get("clock", {}), "speed": 0.01}
    for person in scene["people"].values():
        person["replies_after"] = [60, 900]
    scene["people"]["mike"]["away"] = [{"from": 600, "to": 1500}]
    scene["world_rules"] = {"events": [
        {"at": 2400, "unless": {"decided": ["mike", "severity"]},
         "do": [{"slack.message": {"channel": "slack_support", "from": "slack_laura", "text": "Any news?",
                                   "thread_of": "slack_question"}}]},
        {"after": {"revealed": ["ben.root_cause"]}, "delay": 120,
         "do": [{"slack.reaction": {"channel": "slack_support", "message": "slack_question", "from": "slack_ben",
                                    "name": "eyes"}}]},
    ]}
    return scene


def _script(w: World) -> None:
    """A scripted agent that waits on the feed between its actions."""
    laura, mike = w.dm("slack_laura"), w.dm("slack_mike")
    w.post(laura, "Which workspace are you on, and is the beta on?")
    w.poll()
    w.post(mike, "What severity should this get?")
    w.poll()
    w.post("slack_eng", "What is the root cause of the CSV export failures?")
    w.poll()
    w.post(mike, "Ben says the beta writer drops rows. Severity?")
    while w.poll():
        pass
    w.wait_until_ended()


def _run(make_world, scene: dict[str, Any], trial: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    w = make_world(scene, trial=trial)
    _script(w)
    return w.records(), w.status()


def _shape(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k not in TIME_FIELDS}


def _reply_delays(records: list[dict[str, Any]]) -> list[float]:
    """Simulated seconds from each agent message to the next person's message."""
    messages = sorted((r for r in records if r["kind"] == "message"), key=lambda r: float(r["ts"]))
    delays = []
    for i, record in enumerate(messages[:-1]):
        following = messages[i + 1]
        if record["actor"] == "agent" and following["actor"].startswith("person:"):
            delays.append(float(following["ts"]) - float(record["ts"]))
    return delays


def test_same_trial__same_records_ids_and_delays(make_world, people_scene):
    scene = _scene(people_scene)
    first, first_status = _run(make_world, scene, trial=3)
    second, second_status = _run(make_world, scene, trial=3)
    assert [_shape(r) for r in first] == [_shape(r) for r in second]
    for a, b in zip(first, second, strict=True):
        assert abs(seconds(a["at"]) - seconds(b["at"])) < 0.5, (a, b)
    assert first_status["status"] == second_status["status"] == "idle"
    assert abs(first_status["clock"]["elapsed_s"] - second_status["clock"]["elapsed_s"]) < 0.5
    delays = _reply_delays(first)
    assert len(delays) >= 3
    for a, b in zip(delays, _reply_delays(second), strict=True):
        assert abs(a - b) < 0.5
    kinds = {r["kind"] for r in first}
    assert {"message", "knows", "revealed", "pending", "decided", "event_fired", "event_skipped"} <= kinds


def test_another_trial__draws_other_delays(make_world, people_scene):
    scene = _scene(people_scene)
    third, _ = _run(make_world, scene, trial=3)
    fourth, _ = _run(make_world, scene, trial=4)
    assert [round(d) for d in _reply_delays(third)] != [round(d) for d in _reply_delays(fourth)]
