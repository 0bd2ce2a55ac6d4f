"""before and within: milestone times from the trace, the records and the predicate watcher."""

from __future__ import annotations

import re

from test_checks_process_world import World

from ancha.scene.model import Predicate
from ancha.world.predicates import register_scene_predicates, watcher_of

READ = {"called": "* /api/conversations.history"}
POST = {"called": "* /api/chat.postMessage"}
TO_LAURA = {"message": {"to": "laura", "from_user": "slack_bot"}}


def test_before__passes_when_each_milestone_is_strictly_earlier_than_the_next():
    w = World()
    w.call("conversations.history", channel=w.env.refs["slack_support"].id)
    w.wait(30)
    reply = w.post("agent", "slack_support", "On it", thread_of="slack_laura_question", reached=["laura"])
    result = w.one({"before": [READ, POST, TO_LAURA]})
    assert result.passed, result.actual
    assert result.evidence == [1, 2]
    assert reply.data["seq"] == 2
    assert result.expected == ('{called: "* /api/conversations.history"}, then {called: "* /api/chat.postMessage"}, '
                               "then {message: {to: laura, from: $slack_bot}}, each strictly earlier than the next")


def test_before__fails_out_of_order_and_only_calls_that_worked_count():
    w = World()
    w.call("conversations.history", channel="C_MISSING")  # channel_not_found: not a milestone
    w.post("agent", "slack_support", "On it", reached=["laura"])
    w.wait(60)
    w.call("conversations.history", channel=w.env.refs["slack_support"].id)
    result = w.one({"before": [READ, POST]})
    assert not result.passed
    assert re.fullmatch(r'\{called: "\* /api/chat.postMessage"\} happened before '
                        r'\{called: "\* /api/conversations.history"\} \(\+\d+ms vs \+1m\)', result.actual)
    assert result.evidence == [2, 3]


def test_before__equal_times_fail():
    w = World()
    at = w.start + 120
    w.env.record("knows", at=at, person="ben", fact="laura.workspace", message=None, via="message")
    w.env.record("decided", at=at, person="mike", decision="severity", option="p1", message=None)
    result = w.one({"before": [{"knows": ["ben", "laura.workspace"]}, {"decided": ["mike", "severity"]}]})
    assert not result.passed
    assert result.actual == ("{decided: [mike, severity]} happened at the same time as "
                             "{knows: [ben, laura.workspace]} (+2m vs +2m)")


def test_before_and_within__a_milestone_that_never_happened_fails_them():
    w = World()
    w.post("agent", "slack_support", "hi", reached=["laura"])
    result = w.one({"before": [TO_LAURA, {"decided": ["mike", "severity", "p1"]}]})
    assert not result.passed
    assert result.actual == "the milestone {decided: [mike, severity, p1]} never happened"
    result = w.one({"within": {"event": {"decided": ["mike", "severity"]}, "of": TO_LAURA, "limit": 600}})
    assert result.actual == "the milestone {decided: [mike, severity]} never happened"
    result = w.one({"within": {"event": TO_LAURA, "of": {"called": "POST /never"}, "limit": 600}})
    assert result.actual == 'the milestone {called: "POST /never"} never happened'


def test_within__measures_from_the_start_by_default():
    w = World()
    w.wait(25 * 60)
    w.post("agent", "slack_support", "Sorry for the wait", reached=["laura"])
    assert w.one({"within": {"event": TO_LAURA, "limit": 1800}}).passed
    result = w.one({"within": {"event": TO_LAURA, "limit": 1200}})
    assert not result.passed
    assert result.actual == "{message: {to: laura, from: $slack_bot}} happened 25m after the start (limit 20m)"
    assert result.expected == "{message: {to: laura, from: $slack_bot}} no later than 20m after the start"


def test_within__of_another_milestone():
    w = World()
    w.wait(600)
    asked = w.post("laura", "slack_support", "any news?", reached=["laura"])
    w.wait(240)
    w.post("agent", "slack_support", "Yes: a fix is out", reached=["laura"])
    check = {"within": {"event": TO_LAURA, "of": {"message": {"from_person": "laura"}}, "limit": 300}}
    result = w.one(check)
    assert result.passed
    assert result.actual == ("{message: {to: laura, from: $slack_bot}} happened 4m after "
                             "{message: {from: laura}} (limit 5m)")
    assert result.evidence == [asked.data["seq"], asked.data["seq"] + 1]
    check["within"]["limit"] = 120  # type: ignore[index]
    assert not w.one(check).passed


def test_state_milestone__uses_the_watchers_first_held_time():
    answered = {"state": {"slack.message": {"channel": "slack_support", "from": "slack_bot",
                                            "in_thread_of": "slack_laura_question"}}}
    w = World(checks=[{"id": "fast", "within": {"event": answered, "limit": 600}}])
    register_scene_predicates(w.env)
    w.wait(300)
    reply = w.post("agent", "slack_support", "Reports > Export", thread_of="slack_laura_question",
                   reached=["laura"], real=True)
    w.wait(600)
    w.call("chat.delete", channel=reply.data["channel"], ts=reply.data["ts"])
    result = w.one({"within": {"event": answered, "limit": 600}})
    assert result.passed, "it held 5m in, even though the reply is gone now"
    assert result.actual.endswith("happened 5m after the start (limit 10m)")
    assert result.evidence == [reply.data["seq"]]


def test_not_milestone__watched_late_holds_from_now_unless_its_child_is_history():
    w = World()
    w.wait(120)
    silent = {"not": {"message": {"to": "mike"}}}
    assert w.one({"before": [silent, POST]}).passed is False  # nothing was posted
    w.post("agent", "slack_support", "hi", reached=["laura"])
    result = w.one({"before": [silent, POST]})
    assert result.passed, "not of a message that never happened held from the start"
    watcher = watcher_of(w.env)
    assert watcher.first_held(Predicate.model_validate(silent)) == w.start
