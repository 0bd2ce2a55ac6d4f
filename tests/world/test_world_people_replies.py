"""How people answer: decisions held back until what they need is known, away windows,
floods coalesced into one answer per question, ``otherwise``."""

from __future__ import annotations

import copy

from world_agent import START_S, seconds


def _texts_by(w, user_ref: str) -> list[str]:
    return [m["text"] for msgs in w.state()["messages"].values() for m in msgs
            if m["user"] == w.ids[user_ref] and not m["seeded"]]


def test_decision__pending_until_the_needed_fact_is_known_then_decided_when_asked_again(make_world, people_scene):
    w = make_world(people_scene)
    dm = w.dm("slack_mike")
    w.post(dm, "Mike, what severity should the export bug get?")
    first = w.poll()[0]["payload"]["event"]
    assert first["text"] == "I can't call it until I know the root cause."
    pending = w.records("pending")
    assert [(r["person"], r["decision"], r["missing"]) for r in pending] == [("mike", "severity", ["ben.root_cause"])]
    assert w.records("decided") == []

    # Mike learns the root cause (from the agent, who got it from Ben) but decides only when asked again.
    w.post(dm, "Ben found it: the beta writer drops rows.")
    assert w.poll() == [], "nothing asked, otherwise is null: silence"
    knows = [r for r in w.records("knows") if r["person"] == "mike"]
    assert [(r["fact"], r["via"]) for r in knows] == [("ben.root_cause", "message")]
    assert w.records("decided") == []


def test_decision__decided_once_asked_again_after_learning(make_world, people_scene):
    w = make_world(people_scene, agent={"idle": 600})
    dm = w.dm("slack_mike")
    w.post(dm, "What priority is this?")
    assert w.poll()[0]["payload"]["event"]["text"].startswith("I can't call it")
    w.post(dm, "The beta writer drops rows. So, what severity?")
    event = w.poll()[0]["payload"]["event"]
    assert event["text"] == "Let's treat it as p1."
    decided = w.records("decided")
    assert [(r["person"], r["decision"], r["option"]) for r in decided] == [("mike", "severity", "p1")]
    assert decided[0]["message"] == {"channel": dm, "ts": event["ts"]}


def test_away__asked_while_away_answers_once_when_back(make_world, people_scene):
    scene = copy.deepcopy(people_scene)
    scene["people"]["laura"]["away"] = [{"from": 0, "to": 1800}]
    w = make_world(scene)
    dm = w.dm("slack_laura")
    w.post(dm, "Which workspace are you on?")
    w.post(dm, "Sorry to chase: which workspace?")
    w.post(dm, "Also, is the beta on for you?")
    events = w.poll()
    assert len(events) == 1
    inner = events[0]["payload"]["event"]
    assert inner["text"] == "We're on acme-prod. The exports beta is on."
    assert abs(float(inner["ts"]) - START_S - (1800 + 120)) < 0.5, "back at 30m, answers 2m later"
    assert w.poll("1s") == []
    assert w.wait_until_ended()["status"] == "idle"
    assert _texts_by(w, "slack_laura") == ["We're on acme-prod. The exports beta is on."]
    assert [r["fact"] for r in w.records("revealed")] == ["laura.workspace", "laura.beta_on"]


def test_away__a_reply_due_while_away_waits_until_they_are_back(make_world, people_scene):
    scene = copy.deepcopy(people_scene)
    scene["people"]["laura"]["away"] = [{"from": 60, "to": 600}]
    w = make_world(scene)
    dm = w.dm("slack_laura")
    w.post(dm, "Which workspace are you on?")
    inner = w.poll()[0]["payload"]["event"]
    assert abs(float(inner["ts"]) - START_S - 600) < 0.5


def test_away__what_reached_them_while_away_they_learn_when_back(make_world, people_scene):
    scene = copy.deepcopy(people_scene)
    scene["people"]["mike"]["away"] = [{"from": 0, "to": 900}]
    w = make_world(scene)
    w.post("slack_eng", "Heads up: the beta writer drops rows")
    # Ben is there (and knows it already); Mike learns it when he is back.
    w.poll("1s")
    status = w.wait_until_ended()
    assert status["status"] == "idle"
    knows = [r for r in w.records("knows") if r["person"] == "mike"]
    assert len(knows) == 1 and abs(seconds(knows[0]["at"]) - 900) < 0.5


def test_flood__one_answer_per_question(make_world, people_scene):
    w = make_world(people_scene)
    dm = w.dm("slack_laura")
    for _ in range(5):
        w.post(dm, "Which workspace??")
    events = w.poll()
    assert [e["payload"]["event"]["text"] for e in events] == ["We're on acme-prod."]
    assert w.poll("1s") == []
    assert w.wait_until_ended()["status"] == "idle"
    assert _texts_by(w, "slack_laura") == ["We're on acme-prod."]
    assert len(w.records("revealed")) == 1
    # Asking again after the answer gets another answer.


def test_flood__asking_again_after_the_answer_gets_another(make_world, people_scene):
    w = make_world(people_scene)
    dm = w.dm("slack_laura")
    w.post(dm, "Which workspace?")
    w.poll()
    w.post(dm, "Which workspace, again?")
    assert [e["payload"]["event"]["text"] for e in w.poll()] == ["We're on acme-prod."]
    assert len(w.records("revealed")) == 2


def test_otherwise__answers_a_direct_question_that_matches_nothing(make_world, people_scene):
    scene = copy.deepcopy(people_scene)
    scene["people"]["laura"]["otherwise"] = "Sorry, no idea."
    w = make_world(scene)
    dm = w.dm("slack_laura")
    w.post(dm, "How is the weather?")
    assert [e["payload"]["event"]["text"] for e in w.poll()] == ["Sorry, no idea."]
    # In a channel she merely listens to, an unrelated message gets no answer.
    w.post("slack_support", "Maintenance tonight at 10pm")
    assert w.poll("1s") == []


def test_reply_delay_range__is_drawn_per_reply_within_the_range(make_world, people_scene):
    scene = copy.deepcopy(people_scene)
    scene["people"]["laura"]["replies_after"] = [60, 300]
    w = make_world(scene, agent={"idle": 3600})
    dm = w.dm("slack_laura")
    delays = []
    for _ in range(3):
        asked = w.post(dm, "Which workspace?")
        inner = w.poll()[0]["payload"]["event"]
        delays.append(float(inner["ts"]) - float(asked["ts"]))
    assert all(60 - 0.5 <= d <= 300 + 0.5 for d in delays)
    assert len({round(d) for d in delays}) > 1
