"""Living-world faults on the simulated clock: effects start at ``starts`` (a time or a
predicate), hold while the fault is active and are released the first time
``resolved_when`` holds; ``fault_resolved`` (check and predicate) reads the records.

Driven in-process with a recording effect kind, so the engine is pinned down apart from
any tool's effects (the tools' own effects have their own tests)."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from ancha.checks.state import evaluate_state
from ancha.scene.model import Predicate, Scene
from ancha.scene.sections import BodyKind
from ancha.world import environment as environment_module
from ancha.world.environment import Environment
from ancha.world.kernel.port import WorldPort
from ancha.world.kernel.spec import EffectKind
from ancha.world.kernel.tool import ToolRequest
from ancha.world.predicates import compile_predicate
from ancha.world.registry import registry

MINUTE = 60.0


class Journal:
    """What the recording effect was asked to do, with the simulated time of each."""

    def __init__(self) -> None:
        self.entries: list[tuple[str, str, str, float]] = []

    def effect(self, fail_release: bool = False) -> EffectKind[Any]:
        def apply(body: dict[str, Any], _replica: Any, world: WorldPort, fault: str) -> Any:
            self.entries.append(("apply", fault, body["name"], world.clock.peek()))

            def release() -> None:
                self.entries.append(("release", fault, body["name"], world.clock.peek()))
                if fail_release:
                    raise RuntimeError("the replica refused")

            return release

        return EffectKind(BodyKind("test.flag", "slack", dict, lambda d, p, r: None), apply)


@pytest.fixture
def journal(monkeypatch: pytest.MonkeyPatch) -> Journal:
    journal = Journal()
    base = registry()
    patched = dataclasses.replace(base, effects={**base.effects, "test.flag": journal.effect(),
                                                 "test.broken": journal.effect(fail_release=True)})
    monkeypatch.setattr(environment_module, "registry", lambda: patched)
    return journal


WORLD = {"slack": {
    "users": [{"ref": "slack_laura", "name": "laura"}],
    "channels": [{"ref": "slack_incidents", "name": "incidents", "members": ["slack_bot", "slack_laura"]}],
}}
POSTED = {"called": "POST /api/chat.postMessage"}


def fault(ref: str = "outage", resolved_when: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    return {"ref": ref, "effects": [{"test.flag": {"name": "monitor"}}, {"test.flag": {"name": "metric"}}],
            "resolved_when": resolved_when or POSTED, **extra}


def world(*faults: dict[str, Any], **agent: Any) -> Environment:
    scene = Scene.model_validate({"name": "faults", "world": WORLD, "world_rules": {"faults": list(faults)}})
    return Environment("env_faults", scene, 1, dict(agent) or None)


def post(env: Environment, text: str) -> None:
    token = env.tools["slack"].credentials()["token"]
    answer = env.dispatch("slack", ToolRequest("POST", "/api/chat.postMessage", headers={
        "authorization": f"Bearer {token}", "content-type": "application/json; charset=utf-8"},
        body=json.dumps({"channel": env.refs["slack_incidents"].id, "text": text}).encode()))
    assert json.loads(answer.body)["ok"]


def records(env: Environment, kind: str) -> list[dict[str, Any]]:
    return [{"at": r.at, **r.data} for r in env.records.items if r.kind == kind]


def resolved(env: Environment, ref: str = "outage") -> Any:
    return evaluate_state({"fault_resolved": {"fault": ref}}, env)


def test_fault_starting_at_zero__is_in_place_before_the_agent_arrives(journal: Journal):
    env = world(fault())
    start = env.clock.start
    assert [(e[0], e[2]) for e in journal.entries] == [("apply", "monitor"), ("apply", "metric")]
    assert all(abs(e[3] - start) < 1 for e in journal.entries)
    (started,) = records(env, "fault_started")
    assert started["fault"] == "outage" and "errors" not in started
    assert env.faults.active() == ["outage"]
    outcome = resolved(env)
    assert not outcome.passed and outcome.actual == "active"
    assert "still active" in outcome.explanation and "resolved_when never held" in outcome.explanation


def test_resolved_when__releases_every_effect_in_reverse_and_records_it(journal: Journal):
    env = world(fault())
    post(env, "rolled back")
    assert [(e[0], e[2]) for e in journal.entries[2:]] == [("release", "metric"), ("release", "monitor")]
    (done,) = records(env, "fault_resolved")
    assert done["fault"] == "outage" and "errors" not in done
    assert env.faults.active() == []
    outcome = resolved(env)
    assert outcome.passed and outcome.actual == "resolved" and "after it started" in outcome.explanation
    post(env, "again")  # resolution happens once
    assert len(journal.entries) == 4 and len(records(env, "fault_resolved")) == 1


def test_starts_later__nothing_holds_until_the_clock_reaches_it(journal: Journal):
    env = world(fault(at=10 * MINUTE))
    assert journal.entries == [] and env.pending() == 1
    assert not resolved(env).passed and resolved(env).actual == "not started"
    assert "never started" in resolved(env).explanation
    env.clock.advance_to(env.clock.start + 10 * MINUTE)
    env.timekeeper.run_due()
    assert [e[0] for e in journal.entries] == ["apply", "apply"]
    assert abs(records(env, "fault_started")[0]["at"] - (env.clock.start + 10 * MINUTE)) < 1


def test_starts_after_a_predicate__when_it_first_holds(journal: Journal):
    resolved_when = {"message": {"text_contains": ["rolled back"]}}
    env = world(fault(after=Predicate.model_validate(POSTED).model_dump(by_alias=True, exclude_none=True),
                      resolved_when=resolved_when))
    assert journal.entries == []
    post(env, "deploying v2")
    assert [e[0] for e in journal.entries] == ["apply", "apply"] and env.faults.active() == ["outage"]


def test_resolved_when_holding_before_the_fault_starts__resolves_it_as_it_starts(journal: Journal):
    env = world(fault(at=5 * MINUTE))
    post(env, "all good")  # resolved_when (a call) holds before the fault exists
    env.clock.advance_to(env.clock.start + 5 * MINUTE)
    env.timekeeper.run_due()
    assert [e[0] for e in journal.entries] == ["apply", "apply", "release", "release"]
    assert resolved(env).passed


def test_a_release_that_fails__is_recorded_and_the_others_still_run(journal: Journal):
    broken = fault()
    broken["effects"] = [{"test.flag": {"name": "monitor"}}, {"test.broken": {"name": "metric"}}]
    env = world(broken)
    post(env, "fixed")
    assert [(e[0], e[2]) for e in journal.entries[2:]] == [("release", "metric"), ("release", "monitor")]
    (done,) = records(env, "fault_resolved")
    assert done["errors"] == ["RuntimeError: the replica refused"]


def test_an_effect_of_a_tool_the_world_lacks__is_recorded_not_raised(journal: Journal):
    missing = fault()
    missing["effects"] = [{"nowhere.flag": {"name": "x"}}, {"test.flag": {"name": "monitor"}}]
    env = world(missing)
    (started,) = records(env, "fault_started")
    assert started["errors"] == ["nowhere.flag: this world has no nowhere"]
    assert [e[2] for e in journal.entries] == ["monitor"]


def test_fault_resolved_predicate__holds_when_the_fault_is_resolved(journal: Journal):
    env = world(fault(), fault("other", resolved_when={"message": {"text_contains": ["never said"]}}))
    node = compile_predicate(Predicate.model_validate({"state": {"fault_resolved": {"fault": "outage"}}}), env)
    other = compile_predicate(Predicate.model_validate({"state": {"fault_resolved": {"fault": "other"}}}), env)
    watcher = env.predicates
    watcher.watch(Predicate.model_validate({"state": {"fault_resolved": {"fault": "outage"}}}))
    post(env, "rolled back")
    assert watcher.held_now(Predicate.model_validate({"state": {"fault_resolved": {"fault": "outage"}}}))
    rebuilt = compile_predicate(Predicate.model_validate({"state": {"fault_resolved": {"fault": "outage"}}}), env)
    assert rebuilt.holds and rebuilt.first_held is not None  # rebuilt exactly from the records
    assert not other.holds and not node.holds  # (node was compiled apart, never fed events)
    assert env.faults.active() == ["other"]
