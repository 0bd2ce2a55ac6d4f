"""Predicate evaluation cost per state change, with 50 registered predicates of mixed kinds.

    .venv/bin/python bench/predicates.py

Registers 50 predicates on one environment's ``PredicateWatcher`` (10 called, 10
message, 10 record predicates, 10 slack.message state checks, 10 all/any/not
composites over further leaves) and times ``PredicateWatcher``'s handling of one bus
event of each type, in microseconds, plus how many leaves looked at it. Events are
ones that do not make the predicates hold (the steady state of a trial: most changes
match nothing). The last row is a whole agent ``chat.postMessage`` through
``Environment.dispatch`` with and without the 50 predicates (replica, people engine and
every subscriber included). Prints a markdown table. Not part of the test suite.
"""

from __future__ import annotations

import json
import time
from typing import Any

from ancha.scene.model import Predicate, Scene
from ancha.world.environment import Environment
from ancha.world.kernel.bus import DomainEvent
from ancha.world.kernel.records import Record
from ancha.world.kernel.tool import ToolRequest
from ancha.world.kernel.trace import TraceEntry
from ancha.world.predicates import PredicateWatcher

ROUNDS = 20_000
POSTS = 2_000

SCENE: dict[str, Any] = {
    "name": "bench-predicates",
    "world": {"slack": {
        "users": [{"ref": "slack_laura", "name": "laura"}, {"ref": "slack_ben", "name": "ben"}],
        "channels": [{"ref": "slack_support", "name": "support", "members": ["slack_bot", "slack_laura", "slack_ben"]},
                     {"ref": "slack_eng", "name": "eng", "members": ["slack_bot", "slack_ben"]}],
        "messages": [{"ref": "slack_question", "channel": "slack_support", "from": "slack_laura",
                      "text": "Where is the CSV export?"}],
    }},
    "people": {
        "laura": {"name": "Laura", "accounts": {"slack": "slack_laura"}, "listens": ["slack_support"],
                  "facts": {"workspace": {"text": "acme-prod", "match": ["acme-prod"]}}},
        "ben": {"name": "Ben", "accounts": {"slack": "slack_ben"}, "listens": ["slack_eng"]},
    },
}


def predicates() -> list[Predicate]:
    raw: list[dict[str, Any]] = []
    raw += [{"called": f"POST /repos/acme/orders/issues/{i}/labels"} for i in range(10)]
    raw += [{"message": {"to": "laura", "from_user": "slack_bot", "in_thread_of": "slack_question",
                         "text_contains": [f"needle{i}"]}} for i in range(10)]
    raw += [{"knows": ["ben", f"laura.fact{i}"]} for i in range(4)]
    raw += [{"revealed": [f"laura.fact{i}"]} for i in range(3)]
    raw += [{"decided": ["ben", f"decision{i}", "p1"]} for i in range(3)]
    raw += [{"state": {"slack.message": {"channel": "slack_support", "from": "slack_bot",
                                         "in_thread_of": "slack_question", "text_contains": f"word{i}"}}}
            for i in range(10)]
    raw += [{"all": [{"called": f"GET /other/{i}"}, {"knows": ["laura", f"ben.other{i}"]}]} for i in range(4)]
    raw += [{"any": [{"message": {"to": "ben", "text_contains": [f"x{i}"]}}, {"called": f"PUT /x/{i}"}]}
            for i in range(3)]
    raw += [{"not": {"state": {"slack.message": {"channel": "slack_eng", "text_contains": f"leak{i}"}}}}
            for i in range(3)]
    found = [Predicate.model_validate(p) for p in raw]
    assert len(found) == 50
    return found


def post(env: Environment, text: str) -> dict[str, Any]:
    token = env.tools["slack"].credentials()["token"]
    answer = env.dispatch("slack", ToolRequest("POST", "/api/chat.postMessage", headers={
        "authorization": f"Bearer {token}", "content-type": "application/json"},
        body=json.dumps({"channel": env.refs["slack_support"].id, "text": text}).encode()))
    return dict(json.loads(answer.body))


def timed(watcher: PredicateWatcher, event: DomainEvent) -> tuple[float, float]:
    """(µs per event, leaves touched per event)."""
    before = watcher.evaluations
    handle = watcher._on_event
    started = time.perf_counter()
    for _ in range(ROUNDS):
        handle(event)
    elapsed = time.perf_counter() - started
    return elapsed / ROUNDS * 1e6, (watcher.evaluations - before) / ROUNDS


def main() -> None:
    env = Environment("bench", Scene.model_validate(SCENE), 1)
    watcher = PredicateWatcher(env)
    started = time.perf_counter()
    for predicate in predicates():
        watcher.watch(predicate)
    register_us = (time.perf_counter() - started) / 50 * 1e6

    answer = post(env, "unrelated text")
    entry = TraceEntry(seq=999, at=env.clock.now(), actor="agent", tool="slack", method="POST",
                       path="/api/chat.postMessage", query="", status=200, request=b"", response=b"",
                       worked=True, coverage_gap=False)
    message = Record("message", env.clock.now(), {
        "tool": "slack", "channel": env.refs["slack_support"].id, "ts": answer["ts"], "thread_ts": None,
        "user": env.refs["slack_bot"].id, "actor": "agent", "author_person": None, "text": "unrelated text",
        "reached": ["laura"], "facts": {}, "seq": 1})
    knows = Record("knows", env.clock.now(), {"person": "laura", "fact": "laura.workspace", "message": None,
                                              "via": "owner"})
    pending = Record("pending", env.clock.now(), {"person": "ben", "decision": "d", "missing": []})
    posted = DomainEvent("message_posted", "slack", env.clock.now(), {
        "channel": env.refs["slack_support"].id, "ts": answer["ts"], "user": env.refs["slack_bot"].id,
        "text": "unrelated text", "thread_ts": None, "actor": "agent"})
    rows = [
        ("call_traced (an agent call)", DomainEvent("call_traced", "slack", entry.at, {"entry": entry})),
        ("record_added: message", DomainEvent("record_added", "world", message.at, {"record": message})),
        ("record_added: knows", DomainEvent("record_added", "world", knows.at, {"record": knows})),
        ("record_added: pending (no listener)", DomainEvent("record_added", "world", pending.at,
                                                            {"record": pending})),
        ("message_posted", posted),
    ]
    print(f"50 predicates registered ({register_us:.1f} µs each); {ROUNDS} events per row.\n")
    print("| bus event | leaves touched | µs per event |")
    print("|---|---:|---:|")
    for label, event in rows:
        us, touched = timed(watcher, event)
        print(f"| {label} | {touched:.0f} | {us:.2f} |")

    bare = Environment("bench-bare", Scene.model_validate(SCENE), 1)
    watched = Environment("bench-watched", Scene.model_validate(SCENE), 1)
    for predicate in predicates():
        watched.predicates.watch(predicate)
    figures = []
    for env_ in (bare, watched):
        started = time.perf_counter()
        for i in range(POSTS):
            post(env_, f"status update {i}")
        figures.append((time.perf_counter() - started) / POSTS * 1e6)
    print(f"| whole chat.postMessage dispatch: without / with the 50 | - | {figures[0]:.1f} / {figures[1]:.1f} |")


if __name__ == "__main__":
    main()
