"""Whom a Slack message reaches (DM, mention, thread, listened channel; not an unlistened
channel), what they learn from it, and the answer they give the agent, in the same place,
after their delay. Through the real server: the agent is slack_sdk plus the event feed."""

from __future__ import annotations

import time

from world_agent import START_S, seconds


def test_dm__reaches_the_person_who_answers_in_the_dm_after_their_delay(make_world, people_scene):
    w = make_world(people_scene)
    dm = w.dm("slack_laura")
    asked = w.post(dm, "Hi Laura, which workspace are you on?")
    began = time.monotonic()
    events = w.poll()
    assert time.monotonic() - began < 2, "the clock jumps to the reply while the agent waits"
    assert [e["type"] for e in events] == ["message"]
    event = events[0]
    assert event["service"] == "slack" and event["payload"]["type"] == "event_callback"
    inner = event["payload"]["event"]
    assert inner["channel"] == dm and inner["user"] == w.ids["slack_laura"] and inner["channel_type"] == "im"
    assert inner["text"] == "We're on acme-prod." and "thread_ts" not in inner
    assert abs(float(inner["ts"]) - float(asked["ts"]) - 120) < 0.5
    assert abs(seconds(event["at"]) - (float(inner["ts"]) - START_S)) < 1e-3

    ask_record = next(r for r in w.records("message") if r["ts"] == asked["ts"])
    assert ask_record["reached"] == ["laura"] and ask_record["actor"] == "agent"
    assert ask_record["author_person"] is None and ask_record["seq"] is not None
    assert ask_record["tool"] == "slack" and ask_record["channel"] == dm and ask_record["thread_ts"] is None
    reply = next(r for r in w.records("message") if r["ts"] == inner["ts"])
    assert reply["author_person"] == "laura" and reply["actor"] == "person:laura" and reply["reached"] == []
    revealed = w.records("revealed")
    assert [(r["person"], r["fact"], r["message"]) for r in revealed] == [
        ("laura", "laura.workspace", {"channel": dm, "ts": inner["ts"]})]


def test_mention__reaches_the_person_who_answers_in_the_thread_of_the_message(make_world, people_scene):
    w = make_world(people_scene)
    asked = w.post("slack_random", f"<@{w.ids['slack_laura']}> is the exports beta enabled for you?")
    events = w.poll()
    inner = events[0]["payload"]["event"]
    assert inner["user"] == w.ids["slack_laura"] and inner["thread_ts"] == asked["ts"]
    assert inner["channel"] == w.ids["slack_random"] and inner["text"] == "The exports beta is on."
    ask_record = next(r for r in w.records("message") if r["ts"] == asked["ts"])
    assert ask_record["reached"] == ["laura"]


def test_thread__reaches_the_author_of_the_parent(make_world, people_scene):
    w = make_world(people_scene)
    asked = w.post("slack_random", "Ben, what is the root cause of the export failures?",
                   thread_ts=w.ids["slack_ben_note"])
    events = w.poll()
    inner = events[0]["payload"]["event"]
    assert inner["user"] == w.ids["slack_ben"] and inner["thread_ts"] == w.ids["slack_ben_note"]
    assert inner["text"] == "The beta writer drops rows."
    assert abs(float(inner["ts"]) - float(asked["ts"]) - 300) < 0.5
    assert next(r for r in w.records("message") if r["ts"] == asked["ts"])["reached"] == ["ben"]


def test_listened_channel__reaches_listeners_and_their_reply_teaches_the_others(make_world, people_scene):
    w = make_world(people_scene)
    asked = w.post("slack_eng", "What is the root cause of the export failures?")
    assert next(r for r in w.records("message") if r["ts"] == asked["ts"])["reached"] == ["ben", "mike"]
    events = w.poll()
    inner = events[0]["payload"]["event"]
    assert inner["user"] == w.ids["slack_ben"] and inner["thread_ts"] == asked["ts"]
    reply = next(r for r in w.records("message") if r["ts"] == inner["ts"])
    assert reply["reached"] == ["mike"], "mike listens to #eng; ben wrote it"
    assert reply["facts"] == {"mike": ["ben.root_cause"]}
    knows = [r for r in w.records("knows") if r["via"] == "message"]
    assert [(r["person"], r["fact"], r["message"]["ts"]) for r in knows] == [("mike", "ben.root_cause", inner["ts"])]


def test_unlistened_channel__reaches_no_one_and_nobody_answers(make_world, people_scene):
    w = make_world(people_scene)
    asked = w.post("slack_random", "What is the root cause of the export failures? Which workspace?")
    assert w.poll() == []
    status = w.wait_until_ended()
    assert status["status"] == "idle"
    record = next(r for r in w.records("message") if r["ts"] == asked["ts"])
    assert record["reached"] == [] and record["facts"] == {}
    assert [r for r in w.records() if r["kind"] in ("revealed", "decided", "pending")] == []


def test_owners_know_their_facts_from_the_start(make_world, people_scene):
    w = make_world(people_scene)
    owned = [(r["person"], r["fact"]) for r in w.records("knows") if r["via"] == "owner"]
    assert owned == [("laura", "laura.workspace"), ("laura", "laura.beta_on"), ("ben", "ben.root_cause")]


def test_message_from_a_person_teaches_whoever_it_reaches_but_never_gets_an_answer(make_world, people_scene):
    """Only the agent's messages are answered; anyone's message teaches the facts it matches."""
    w = make_world(people_scene)
    dm = w.dm("slack_laura")
    w.post(dm, "Which workspace?")
    w.poll()
    # The agent passes Laura's answer on to #eng: Ben and Mike learn it.
    told = w.post("slack_eng", "FYI the customer is on acme-prod")
    record = next(r for r in w.records("message") if r["ts"] == told["ts"])
    assert record["facts"] == {"ben": ["laura.workspace"], "mike": ["laura.workspace"]}
    learned = {(r["person"], r["fact"]) for r in w.records("knows") if r["via"] == "message"}
    assert learned == {("ben", "laura.workspace"), ("mike", "laura.workspace")}


def test_mention_in_a_dm__does_not_reach_someone_outside_it(make_world, people_scene):
    w = make_world(people_scene)
    dm = w.dm("slack_laura")
    asked = w.post(dm, f"Laura, do you know <@{w.ids['slack_ben']}>'s root cause? Which workspace?")
    record = next(r for r in w.records("message") if r["ts"] == asked["ts"])
    assert record["reached"] == ["laura"]
    assert [e["payload"]["event"]["user"] for e in w.poll()] == [w.ids["slack_laura"]]
    assert w.records("reply_failed") == []
