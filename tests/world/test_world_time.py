"""Simulated time: the clock jumps while the agent waits, flows at ``speed`` while it
works; trials end idle, at the done URL, or timed out at ``clock.limit``."""

from __future__ import annotations

import copy
import time

from world_agent import START_S, seconds


def test_status__shows_pending_work_and_whether_the_agent_waits(make_world, people_scene):
    w = make_world(people_scene)
    status = w.status()
    assert status["pending"] == 0 and status["waiting"] is False and status["status"] == "running"
    w.post(w.dm("slack_laura"), "Which workspace?")
    status = w.status()
    assert status["pending"] == 1 and status["waiting"] is False
    assert status["clock"]["elapsed_s"] < 5, "nobody waited: time only flowed"


def test_idle__a_waiting_agent_with_nothing_pending_ends_the_trial_after_idle_quiet(make_world, people_scene):
    w = make_world(people_scene, agent={"idle": 10.0, "input": "command"})
    began = time.monotonic()
    assert w.poll("20s") == []
    assert time.monotonic() - began < 2
    status = w.wait_until_ended()
    assert status["status"] == "idle" and "quiet" in status["ended_reason"]
    assert 10 <= status["clock"]["elapsed_s"] < 11


def test_idle__is_counted_from_the_last_activity_in_simulated_seconds(make_world, people_scene):
    w = make_world(people_scene, agent={"idle": "45s"})
    w.post(w.dm("slack_laura"), "Which workspace?")
    reply = w.poll()[0]["payload"]["event"]
    assert w.poll() == []
    status = w.wait_until_ended()
    assert status["status"] == "idle"
    last_record = max(seconds(r["at"]) for r in w.records())
    assert abs(status["clock"]["elapsed_s"] - (last_record + 45)) < 0.5
    assert last_record >= float(reply["ts"]) - START_S


def test_done_url__ends_the_trial_and_releases_the_feed(make_world, people_scene):
    w = make_world(people_scene)
    assert w.done() == {"ok": True, "status": "done"}
    began = time.monotonic()
    assert w.poll("20s") == []
    assert time.monotonic() - began < 1
    assert w.status()["status"] == "done"


def test_limit__a_reply_due_after_the_limit_never_comes_and_the_trial_times_out(make_world, people_scene):
    scene = copy.deepcopy(people_scene)
    scene["clock"]["limit"] = 600
    scene["people"]["laura"]["replies_after"] = [900, 900]
    w = make_world(scene)
    w.post(w.dm("slack_laura"), "Which workspace?")
    assert w.poll() == []
    status = w.wait_until_ended()
    assert status["status"] == "timed_out"
    assert abs(status["clock"]["elapsed_s"] - 600) < 0.5
    assert w.records("revealed") == []


def test_limit__idle_past_the_limit_is_a_time_out(make_world, people_scene):
    scene = copy.deepcopy(people_scene)
    scene["clock"]["limit"] = 5
    w = make_world(scene, agent={"idle": 10})
    assert w.poll() == []
    assert w.wait_until_ended()["status"] == "timed_out"


def test_waiting_control__jumps_the_clock_between_per_event_invocations(make_world, people_scene):
    w = make_world(people_scene, agent={"idle": 10, "input": "per_event"})
    w.post(w.dm("slack_laura"), "Which workspace?")
    assert w.set_waiting(True)["waiting"] is True
    status = w.wait_until_ended()
    assert status["status"] == "idle"
    revealed = w.records("revealed")
    assert len(revealed) == 1 and 119 < seconds(revealed[0]["at"]) < 125
    assert [e["type"] for e in w.poll("0s")] == ["message"], "the reply waits in the feed for the next invocation"


def test_waiting_control__false_lets_time_flow_again(make_world, people_scene):
    w = make_world(people_scene)
    w.post(w.dm("slack_laura"), "Which workspace?")
    assert w.set_waiting(False)["waiting"] is False
    time.sleep(0.2)
    status = w.status()
    assert status["status"] == "running" and status["pending"] == 1 and status["clock"]["elapsed_s"] < 5


def test_speed__time_flows_while_the_agent_works_and_due_items_run_on_time(make_world, people_scene):
    scene = copy.deepcopy(people_scene)
    scene["clock"]["speed"] = 600  # ten simulated minutes per real second
    w = make_world(scene)
    asked = w.post(w.dm("slack_laura"), "Which workspace?")
    deadline = time.monotonic() + 3
    while not w.records("revealed") and time.monotonic() < deadline:
        time.sleep(0.02)
    revealed = w.records("revealed")
    assert len(revealed) == 1
    # Due at ask + 2m; it runs when the ticker wakes, a few real milliseconds (x600) later at most.
    late = seconds(revealed[0]["at"]) - (float(asked["ts"]) - START_S + 120)
    assert 0 <= late < 300
    assert w.status()["waiting"] is False


def test_two_hour_scene__runs_in_seconds_with_an_agent_that_waits_on_the_feed(make_world, people_scene):
    scene = copy.deepcopy(people_scene)
    for person in scene["people"].values():
        person["replies_after"] = [300, 900]
    scene["world_rules"] = {"events": [
        {"at": 1800 * i, "do": [{"slack.message": {"channel": "slack_support", "from": "slack_laura",
                                                   "text": f"Any news? ({i})", "thread_of": "slack_question"}}]}
        for i in range(1, 4)]}
    w = make_world(scene, agent={"idle": 600})
    dm = w.dm("slack_laura")
    began = time.monotonic()
    questions = ["Which workspace?", "Is the beta on?"]
    w.post(dm, questions[0])
    heard = 0
    while True:
        events = w.poll()
        if not events:
            break
        heard += len(events)
        w.post(dm, questions[heard % 2])
    real = time.monotonic() - began
    status = w.wait_until_ended()
    assert status["status"] == "timed_out"
    assert status["clock"]["elapsed_s"] >= 7200 - 1
    assert heard >= 10
    assert real < 5, f"two simulated hours took {real:.1f}s of real time"
    assert [r["index"] for r in w.records("event_fired")] == [0, 1, 2]
