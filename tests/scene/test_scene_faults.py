"""world_rules.faults in scene files: refs, starts (an offset or { after: <predicate> }),
effects resolved by their tools, resolved_when, and the fault_resolved check and
predicate. Effects here are a build's Slack message body, so the loader is pinned down
apart from the tools' own effect bodies."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest
from scene_files import PEOPLE, messages, slack_only, write_scene

from ancha.errors import Problem
from ancha.scene import Scene, SceneInvalid, load_scene
from ancha.scene.model import MessageSelector, Predicate
from ancha.scene.sections import Catalog
from ancha.world.registry import catalog


@cache
def with_effects() -> Catalog:
    """Slack alone, with its message body standing in as a fault effect."""
    base = slack_only()
    return Catalog(worlds=base.worlds, states=base.states, predicates=base.predicates, actions=base.actions,
                   effects={"slack.message": catalog().actions["slack.message"]}, planned_tools=base.planned_tools)


def scene(folder: Path, text: str) -> Scene:
    return load_scene(write_scene(folder, PEOPLE + text), with_effects())


def problems(folder: Path, text: str) -> list[Problem]:
    with pytest.raises(SceneInvalid) as info:
        load_scene(write_scene(folder, PEOPLE + text), with_effects())
    return info.value.problems


EFFECT = "slack.message: { channel: $slack_support, from: $slack_laura, text: still broken }"


def _faults(body: str) -> str:
    return "world_rules:\n  faults:\n" + body


def test_fault__effects_and_resolved_when_resolved_starts_defaults_to_zero(tmp_path: Path) -> None:
    loaded = scene(tmp_path, _faults(
        f"    - ref: outage\n      effects: [{{ {EFFECT} }}]\n"
        "      resolved_when: { message: { text_contains: [rolled back] } }\n"))
    (fault,) = loaded.world_rules.faults
    assert (fault.ref, fault.at, fault.after) == ("outage", 0.0, None)
    assert fault.effects == [{"slack.message": {"channel": "slack_support", "from": "slack_laura",
                                                "text": "still broken"}}]
    assert fault.resolved_when == Predicate(message=MessageSelector(text_contains=["rolled back"]))


def test_fault__starts_at_an_offset_or_after_a_predicate(tmp_path: Path) -> None:
    loaded = scene(tmp_path, _faults(
        f"    - {{ ref: a, starts: 10m, effects: [{{ {EFFECT} }}], resolved_when: {{ called: '*' }} }}\n"
        f"    - {{ ref: b, starts: {{ after: {{ fault_resolved: $a }} }}, effects: [{{ {EFFECT} }}],"
        " resolved_when: { called: 'POST /api/chat.update' } }\n"))
    first, second = loaded.world_rules.faults
    assert (first.at, first.after) == (600.0, None)
    assert second.at is None and second.after == Predicate(state={"fault_resolved": {"fault": "a"}})


def test_fault_resolved__check_and_milestone_name_a_fault(tmp_path: Path) -> None:
    loaded = scene(tmp_path, _faults(
        f"    - {{ ref: outage, effects: [{{ {EFFECT} }}], resolved_when: {{ called: '*' }} }}\n")
        + "checks:\n  - { id: fixed, state: { fault_resolved: $outage } }\n"
        "  - { id: fast, within: { event: { fault_resolved: $fault.outage }, limit: 30m } }\n")
    fixed, fast = loaded.checks
    assert fixed.state == {"fault_resolved": {"fault": "outage"}}
    assert fast.within is not None
    assert fast.within.event == Predicate(state={"fault_resolved": {"fault": "outage"}})


def test_fault_resolved__a_ref_that_is_not_a_fault_lists_the_faults(tmp_path: Path) -> None:
    found = problems(tmp_path, _faults(
        f"    - {{ ref: outage, effects: [{{ {EFFECT} }}], resolved_when: {{ called: '*' }} }}\n")
        + "checks:\n  - { id: a, state: { fault_resolved: $slack_laura } }\n"
        "  - { id: b, state: { fault_resolved: $nope } }\n")
    assert messages(found) == ["checks[0].state.fault_resolved: $slack_laura is a user, not a fault",
                               "checks[1].state.fault_resolved: unknown ref $nope"]
    assert found[0].hint == "refs of kind fault: $outage"


def test_faults__every_problem_at_once(tmp_path: Path) -> None:
    found = problems(tmp_path, _faults(
        "    - { effects: [], resolved_when: { called: '*' } }\n"
        f"    - {{ ref: b, starts: soon, effects: [{{ {EFFECT} }}], resolved_when: {{ called: '*' }} }}\n"
        "    - { ref: c, effects: [{ slack.reaction: { x: 1 } }], resolved_when: { called: '*' } }\n"
        f"    - {{ ref: d, effects: [{{ {EFFECT} }}] }}\n"
        f"    - {{ ref: b, effects: [{{ {EFFECT} }}], resolved_when: {{ nothing: 1 }} }}\n"
        "    - { ref: f, effects: [{ datadog.metric: { name: x, value: 1 } }], resolved_when: { called: '*' } }\n"))
    assert messages(found) == [
        "world_rules.faults[0].ref: missing required field",
        "world_rules.faults[1].starts: expected a duration from clock.start such as 10m, got 'soon'",
        "world_rules.faults[2].effects[0].slack.reaction: unknown field",
        "world_rules.faults[2].effects[0]: an effect needs a kind",
        "world_rules.faults[3].resolved_when: missing required field",
        "world_rules.faults[4].resolved_when.nothing: unknown field",
        "world_rules.faults[4].ref: duplicate ref b",
        "world_rules.faults[4].resolved_when: a predicate needs a kind",
        "world_rules.faults[5].effects[0].datadog.metric: not supported yet",
    ]


def test_faults__effects_need_at_least_one(tmp_path: Path) -> None:
    found = problems(tmp_path, _faults("    - { ref: a, effects: [], resolved_when: { called: '*' } }\n"))
    assert messages(found) == ["world_rules.faults[0].effects: needs at least one effect"]
    assert found[0].hint == "effects: slack.message"
