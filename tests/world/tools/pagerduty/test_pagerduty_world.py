"""PagerDuty in a living world: the fault effect triggers an incident, the on-call person
acknowledges it after their reply delay, world-rule actions, people answering notes, and
the pagerduty.incident check passing and failing with explanations."""

from __future__ import annotations

import json
from pathlib import Path

from pagerduty_support import advance, build_env, call

from ancha.scene import load_scene
from ancha.world.environment import Environment
from ancha.world.registry import catalog, registry

SCENE = """\
name: paged
clock: { start: 2026-03-02T09:00:00Z, limit: 1d }
world:
  pagerduty:
    users:
      - { ref: pd_laura, name: Laura Diaz, email: laura@acme.test }
      - { ref: pd_ben, name: Ben Okafor, email: ben@acme.test }
    schedules:
      - { ref: pd_primary, name: Primary, layers: [{ users: [$pd_laura, $pd_ben], rotation: 1w, start: -1d }] }
    escalation_policies:
      - { ref: pd_policy, name: Orders, rules: [{ delay: 15m, targets: [$pd_primary] }, { delay: 1h, targets: [$pd_ben] }] }
    services:
      - { ref: pagerduty_orders, name: Orders, escalation_policy: $pd_policy }
people:
  laura:
    accounts: { pagerduty: $pd_laura }
    replies_after: 2m
    facts:
      cause: { text: The cache node ran out of memory., asked_by: [cause, why] }
world_rules:
  faults:
    - ref: outage
      starts: 0s
      effects:
        - pagerduty.trigger: { service: $pagerduty_orders, title: orders p99 above 2s }
      resolved_when: { pagerduty.incident: { service: $pagerduty_orders, first: true }, status: resolved }
checks:
  - id: acked_fast
    state: { pagerduty.incident: { service: $pagerduty_orders, first: true }, acknowledged_within: 5m }
  - id: resolved_fast
    state: { pagerduty.incident: { service: $pagerduty_orders, first: true }, status: resolved, resolved_within: 30m }
"""


def _env(tmp_path: Path, text: str = SCENE) -> Environment:
    (tmp_path / "scene.yaml").write_text(text)
    return Environment("env-pd-world", load_scene(tmp_path / "scene.yaml", catalog()), 1)


def _check(env: Environment, index: int) -> tuple[bool, str]:
    state = env.scene.checks[index].state
    assert state is not None
    (key, body), = state.items()
    outcome = registry().states[key].evaluate(body, env.tools["pagerduty"], env)
    return outcome.passed, outcome.explanation


def _first(env: Environment) -> dict[str, object]:
    incident = env.tools["pagerduty"].state.created[0]  # type: ignore[attr-defined]
    return dict(json.loads(call(env, "GET", f"/incidents/{incident.id}").body)["incident"])


def test_fault_effect__triggers_one_incident_and_the_on_call_person_acknowledges_it(tmp_path: Path) -> None:
    env = _env(tmp_path)
    advance(env, 1)
    incident = _first(env)
    assert incident["status"] == "triggered" and incident["title"] == "orders p99 above 2s"
    replica = env.tools["pagerduty"]
    assert replica.state.created[0].fault == "outage"  # type: ignore[attr-defined]
    advance(env, 119)
    assert _first(env)["status"] == "acknowledged"
    acks = [e for e in list(env.trace) if e.actor == "person:laura"]
    assert acks and acks[0].method == "PUT"
    passed, explanation = _check(env, 0)
    assert passed, explanation
    passed, explanation = _check(env, 1)
    assert not passed and "never resolved" in explanation


def test_check__resolved_within_passes_once_resolved_in_time(tmp_path: Path) -> None:
    env = _env(tmp_path)
    advance(env, 600)
    incident = _first(env)
    answer = call(env, "PUT", f"/incidents/{incident['id']}", {"incident": {"type": "incident_reference",
                                                                           "status": "resolved"}})
    assert answer.status == 200
    passed, explanation = _check(env, 1)
    assert passed, explanation
    assert "resolved 10m" in explanation


def test_check__too_slow_explains_how_long_it_took(tmp_path: Path) -> None:
    env = _env(tmp_path)
    advance(env, 3600)
    incident = _first(env)
    call(env, "PUT", f"/incidents/{incident['id']}", {"incident": {"type": "incident_reference", "status": "resolved"}})
    passed, explanation = _check(env, 1)
    assert not passed and "resolved 1h" in explanation


def test_away_person__acknowledges_when_back(tmp_path: Path) -> None:
    env = _env(tmp_path, SCENE.replace("replies_after: 2m", "replies_after: 2m\n    away: [{ from: 0s, to: 10m }]"))
    advance(env, 11 * 60)
    assert _first(env)["status"] == "triggered"
    advance(env, 60)
    assert _first(env)["status"] == "acknowledged"


def test_note_reaches_the_assignee_and_they_answer_in_a_note(tmp_path: Path) -> None:
    env = _env(tmp_path, SCENE.replace("replies_after: 2m", "replies_after: 30m"))
    advance(env, 1)
    incident = _first(env)
    answer = call(env, "POST", f"/incidents/{incident['id']}/notes", {"note": {"content": "Laura, what is the cause?"}})
    assert answer.status == 200
    advance(env, 31 * 60)
    notes = json.loads(call(env, "GET", f"/incidents/{incident['id']}/notes").body)["notes"]
    assert [n["content"] for n in notes][-1] == "The cache node ran out of memory."
    assert notes[-1]["user"]["summary"] == "Laura Diaz"
    assert [r.data.get("fact") for r in env.records.of_kind("revealed")] == ["laura.cause"]


def test_actions__trigger_acknowledge_resolve_as_world() -> None:
    env = build_env()
    spec = registry()
    replica = env.tools["pagerduty"]
    assert spec.actions["pagerduty.trigger"].perform({"service": "pagerduty_orders", "title": "Disk full"},
                                                     replica, env) is None
    assert spec.actions["pagerduty.acknowledge"].perform({"service": "pagerduty_orders", "as": "pd_laura"},
                                                         replica, env) is None
    created = replica.state.created[-1]  # type: ignore[attr-defined]
    assert created.status == "acknowledged" and created.acknowledgements[-1][0].name == "Laura Diaz"
    assert spec.actions["pagerduty.resolve"].perform({"incident": "pd_open"}, replica, env) is None
    assert replica.state.incidents[env.refs["pd_open"].id].status == "resolved"  # type: ignore[attr-defined]
    problem = spec.actions["pagerduty.resolve"].perform({"incident": "pd_open"}, replica, env)
    assert problem == "pagerduty.resolve: 400 Incident Already Resolved"
    assert {e.actor for e in list(env.trace)} == {"world"}
