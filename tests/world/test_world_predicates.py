"""Predicates: compiled once, re-evaluated only on the bus events that can change them,
first-held times recorded once. Driven in-process: the agent's Slack calls go through
``Environment.dispatch``; the engine's records are written with ``env.record``."""

from __future__ import annotations

import json
from typing import Any

from ancha.scene.model import Predicate, Scene
from ancha.world.environment import Environment
from ancha.world.kernel.records import Record
from ancha.world.kernel.tool import ToolRequest
from ancha.world.predicates import (
    PredicateWatcher,
    compile_predicate,
    register_scene_predicates,
    watcher_of,
)

SCENE: dict[str, Any] = {
    "name": "predicates",
    "world": {"slack": {
        "users": [{"ref": "slack_laura", "name": "laura"}, {"ref": "slack_ben", "name": "ben"}],
        "channels": [{"ref": "slack_support", "name": "support",
                      "members": ["slack_bot", "slack_laura", "slack_ben"]}],
        "messages": [{"ref": "slack_question", "channel": "slack_support", "from": "slack_laura",
                      "text": "Where is the CSV export?"}],
    }},
    "people": {
        "laura": {"name": "Laura", "accounts": {"slack": "slack_laura"}, "listens": ["slack_support"],
                  "facts": {"workspace": {"text": "acme-prod", "match": ["acme-prod"]}}},
        "ben": {"name": "Ben", "accounts": {"slack": "slack_ben"},
                "facts": {"root_cause": {"text": "a bad deploy", "match": ["bad deploy"]}}},
    },
}


def make_env(**extra: Any) -> Environment:
    return Environment("env_pred", Scene.model_validate({**SCENE, **extra}), 1)


def p(data: dict[str, Any]) -> Predicate:
    return Predicate.model_validate(data)


def call(env: Environment, method: str, token: str | None = None, **args: Any) -> dict[str, Any]:
    token = token or env.tools["slack"].credentials()["token"]
    answer = env.dispatch("slack", ToolRequest("POST", f"/api/{method}", headers={
        "authorization": f"Bearer {token}", "content-type": "application/json; charset=utf-8"},
        body=json.dumps(args).encode()))
    return dict(json.loads(answer.body))


def message_record(env: Environment, text: str, reached: list[str], actor: str = "agent",
                   facts: dict[str, list[str]] | None = None) -> Record:
    return env.record("message", tool="slack", channel=env.refs["slack_support"].id,
                      ts=f"{env.clock.now():.6f}", thread_ts=None, user=env.refs["slack_bot"].id, actor=actor,
                      author_person=None, text=text, reached=reached, facts=facts or {}, seq=None)


def test_compiled_predicates__listen_to_the_event_types_that_can_change_them():
    env = make_env()
    state = {"state": {"slack.message": {"channel": "slack_support", "from": "slack_bot"}}}
    assert compile_predicate(p({"called": "POST /api/chat.postMessage"}), env).events == {"call_traced"}
    assert compile_predicate(p({"message": {"to": "laura"}}), env).events == {"record_added"}
    for kind, value in (("knows", ["ben", "laura.workspace"]), ("decided", ["mike", "severity"]),
                        ("revealed", ["laura.workspace"]), ("told", ["ben", "laura.workspace"])):
        assert compile_predicate(p({kind: value}), env).events == {"record_added"}
    assert compile_predicate(p(state), env).events == {"message_posted", "message_changed", "message_deleted"}
    both = compile_predicate(p({"all": [{"called": "*"}, {"not": state}]}), env)
    assert both.events == {"call_traced", "message_posted", "message_changed", "message_deleted"}


def test_called__holds_on_the_agents_first_call_that_worked():
    env = make_env()
    watcher = PredicateWatcher(env)
    posted = p({"called": "POST /api/chat.postMessage"})
    watcher.watch(posted)
    call(env, "chat.postMessage", channel="C_NOPE", text="hi")  # channel_not_found: did not work
    assert not watcher.held_now(posted)
    laura = env.tools["slack"].issue_user_token(env.refs["slack_laura"].id, "person:laura")
    call(env, "chat.postMessage", token=laura, channel=env.refs["slack_support"].id, text="me too")
    assert not watcher.held_now(posted), "a person's call is not the agent's"
    call(env, "chat.postMessage", channel=env.refs["slack_support"].id, text="Reports > Export")
    assert watcher.held_now(posted)
    assert watcher.first_held(posted) == env.trace.entries[2].at
    assert watcher.compiled(posted).evidence == [3]  # type: ignore[union-attr]


def test_message_and_record_predicates__hold_on_the_new_record_only_when_it_matches():
    env = make_env()
    watcher = PredicateWatcher(env)
    to_laura = p({"message": {"to": "laura", "from_user": "slack_bot", "text_contains": ["export"]}})
    ben_knows = p({"knows": ["ben", "laura.workspace", "laura.other"]})
    watcher.watch(to_laura)
    watcher.watch(ben_knows)
    message_record(env, "hello", ["laura"])
    assert not watcher.held_now(to_laura)
    sent = message_record(env, "The EXPORT is under Reports", ["laura", "ben"])
    assert watcher.first_held(to_laura) == sent.at
    env.record("knows", person="ben", fact="laura.workspace", message=None, via="message")
    assert not watcher.held_now(ben_knows)
    env.record("knows", person="laura", fact="laura.other", message=None, via="owner")
    assert not watcher.held_now(ben_knows), "laura knowing it is not ben knowing it"
    second = env.record("knows", person="ben", fact="laura.other", message=None, via="message")
    assert watcher.first_held(ben_knows) == second.at


def test_knows__a_persons_own_facts_hold_from_the_start():
    env = make_env()
    own = compile_predicate(p({"knows": ["laura", "laura.workspace"]}), env)
    assert own.holds and own.first_held == env.clock.start


def test_state_predicate__follows_posts_and_deletes_and_keeps_its_first_held_time():
    env = make_env()
    watcher = PredicateWatcher(env)
    answered = p({"state": {"slack.message": {"channel": "slack_support", "from": "slack_bot",
                                              "in_thread_of": "slack_question"}}})
    watcher.watch(answered)
    channel, ts = env.tools["slack"].message_ref("slack_question")
    call(env, "chat.postMessage", channel=channel, text="top level, not in the thread")
    assert not watcher.held_now(answered)
    reply = call(env, "chat.postMessage", channel=channel, text="Reports > Export", thread_ts=ts)
    assert watcher.held_now(answered)
    first = watcher.first_held(answered)
    assert first is not None and abs(first - float(reply["ts"])) < 1e-5
    assert watcher.compiled(answered).evidence == [2]  # type: ignore[union-attr]
    call(env, "chat.delete", channel=channel, ts=reply["ts"])
    assert not watcher.held_now(answered)
    assert watcher.first_held(answered) == first
    assert len(env.records.of_kind("predicate")) == 1


def test_not__of_something_that_never_held_holds_from_the_start_until_it_does():
    env = make_env()
    watcher = PredicateWatcher(env)
    silent = p({"not": {"message": {"to": "laura"}}})
    watcher.watch(silent)
    assert watcher.held_now(silent) and watcher.first_held(silent) == env.clock.start
    message_record(env, "hi", ["laura"])
    assert not watcher.held_now(silent)
    assert watcher.first_held(silent) == env.clock.start


def test_all_and_any__combine_their_childrens_current_truth():
    env = make_env()
    watcher = PredicateWatcher(env)
    both = p({"all": [{"called": "* /api/chat.postMessage"}, {"knows": ["ben", "laura.workspace"]}]})
    either = p({"any": [{"called": "* /api/chat.postMessage"}, {"knows": ["ben", "laura.workspace"]}]})
    watcher.watch(both)
    watcher.watch(either)
    call(env, "chat.postMessage", channel=env.refs["slack_support"].id, text="hi")
    assert watcher.held_now(either) and not watcher.held_now(both)
    knows = env.record("knows", person="ben", fact="laura.workspace", message=None, via="message")
    assert watcher.held_now(both) and watcher.first_held(both) == knows.at
    assert watcher.first_held(either) == env.trace.entries[0].at


def test_composites__see_every_child_settled_by_an_event_before_combining():
    env = make_env()
    watcher = PredicateWatcher(env)
    # One record makes both children true: all(A, not B) must never hold, not even for a moment.
    tricky = p({"all": [{"message": {"to": "laura"}}, {"not": {"message": {"text_contains": ["export"]}}}]})
    held: list[float] = []
    watcher.watch(tricky, on_hold=held.append)
    message_record(env, "The export is back", ["laura"])
    assert not watcher.held_now(tricky) and held == [] and watcher.first_held(tricky) is None


def test_watcher__touches_only_the_predicates_listening_to_the_event_type():
    env = make_env()
    watcher = PredicateWatcher(env)
    called = [p({"called": f"POST /api/method{i}"}) for i in range(10)]
    messages = [p({"message": {"to": "laura", "text_contains": [f"word{i}"]}}) for i in range(10)]
    knows = [p({"knows": ["ben", f"laura.fact{i}"]}) for i in range(10)]
    decided = [p({"decided": ["mike", f"decision{i}"]}) for i in range(5)]
    states = [p({"state": {"slack.message": {"channel": "slack_support", "text_contains": f"w{i}"}}})
              for i in range(10)]
    composites = [p({"any": [{"called": f"POST /api/other{i}"}, {"message": {"to": "ben"}}]}) for i in range(5)]
    for predicate in called + messages + knows + decided + states + composites:
        watcher.watch(predicate)
    assert len(watcher._watched) == 50

    watcher.evaluations = 0
    call(env, "auth.test")  # not a chat.postMessage: no slack message event
    assert watcher.evaluations == 10 + 5, "10 called leaves and the 5 called leaves under any"
    watcher.evaluations = 0
    message_record(env, "hello", ["laura"])
    assert watcher.evaluations == 10 + 1, "10 message leaves and the one shared {message: {to: ben}} leaf"
    watcher.evaluations = 0
    env.record("knows", person="ben", fact="laura.fact3", message=None, via="message")
    assert watcher.evaluations == 10
    watcher.evaluations = 0
    env.record("pending", person="mike", decision="decision1", missing=["ben.root_cause"])
    assert watcher.evaluations == 0, "nothing listens for pending records"
    watcher.evaluations = 0
    before = len(env.records.of_kind("message"))
    call(env, "chat.postMessage", channel=env.refs["slack_support"].id, text="w3")
    written = len(env.records.of_kind("message")) - before  # the people engine's record of it, if any
    assert watcher.evaluations == 10 + 10 + 5 + 11 * written, \
        "message_posted: 10 states; call_traced: 10 + 5 called; a message record: 10 + 1 message leaves"


def test_watch__is_idempotent_and_records_the_first_held_time_once():
    env = make_env()
    watcher = PredicateWatcher(env)
    to_laura = p({"message": {"to": "laura"}})
    seen: list[float] = []
    watcher.watch(to_laura, on_hold=seen.append)
    watcher.watch(p({"message": {"to": "laura"}}), on_hold=seen.append)  # same key, same callback
    assert len(watcher._nodes) == 1 and len(watcher._listeners["record_added:message"]) == 1
    first = message_record(env, "one", ["laura"])
    message_record(env, "two", ["laura"])
    assert seen == [first.at]
    predicate_records = env.records.of_kind("predicate")
    assert [(r.data["key"], r.data["held"], r.at) for r in predicate_records] == [(to_laura.key(), True, first.at)]
    late: list[float] = []
    watcher.watch(to_laura, on_hold=late.append)
    assert late == [first.at], "a callback added after it held hears the first-held time at once"
    assert len(env.records.of_kind("predicate")) == 1


def test_late_compile__rebuilds_called_and_message_predicates_from_history():
    env = make_env()
    call(env, "chat.postMessage", channel=env.refs["slack_support"].id, text="hi")
    message_record(env, "hi", ["laura"])
    message_record(env, "again", ["laura"])
    posted = compile_predicate(p({"called": "POST /api/chat.postMessage"}), env)
    assert posted.holds and posted.first_held == env.trace.entries[0].at
    either = compile_predicate(p({"any": [{"message": {"to": "laura"}}, {"called": "GET /nothing"}]}), env)
    first_to_laura = next(r for r in env.records.of_kind("message") if "laura" in r.data["reached"])
    assert either.holds and either.first_held == first_to_laura.at


def test_unknown_refs__make_a_predicate_that_never_holds():
    env = make_env()
    node = compile_predicate(p({"message": {"in_thread_of": "no_such_message"}}), env)
    assert not node.holds and "no_such_message" in getattr(node, "reason", "")


def test_register_scene_predicates__watches_milestones_and_rule_conditions():
    env = make_env(
        checks=[
            {"id": "order", "before": [{"called": "GET /api/conversations.history"},
                                       {"message": {"to": "laura", "from_user": "slack_bot"}}]},
            {"id": "fast", "within": {"event": {"knows": ["ben", "laura.workspace"]},
                                      "of": {"called": "* /api/chat.postMessage"}, "limit": 600}},
        ],
        world_rules={"events": [{"at": 600, "unless": {"message": {"to": "laura", "from_user": "slack_bot"}},
                                 "do": []}]},
    )
    watcher = register_scene_predicates(env)
    assert watcher is watcher_of(env) is env.predicates  # type: ignore[attr-defined]
    assert len(watcher._watched) == 4  # the unless duplicates a before milestone
    call(env, "chat.postMessage", channel=env.refs["slack_support"].id, text="hi")
    assert watcher.first_held(p({"called": "* /api/chat.postMessage"})) == env.trace.entries[0].at
