"""world.pagerduty in a scene file, pagerduty.incident checks, actions and fault effects:
refs resolved, durations with weeks, and clear problems for bad seeds."""

from __future__ import annotations

from pathlib import Path

import pytest

from ancha.scene import SceneInvalid, load_scene
from ancha.scene.model import Scene
from ancha.world.registry import catalog
from ancha.world.tools.pagerduty.scene_file import PagerDutyFile

GOOD = """\
name: paged
clock: { start: 2026-03-02T09:00:00Z }
world:
  pagerduty:
    users:
      - { ref: pd_laura, name: Laura Diaz, email: laura@acme.test }
      - { ref: pd_ben, name: Ben Okafor, email: ben@acme.test }
    schedules:
      - { ref: pd_primary, name: Primary, layers: [{ users: [$pd_laura, $pd_ben], rotation: 1w, start: -7d }] }
    escalation_policies:
      - { ref: pd_policy, name: Orders, rules: [{ delay: 15m, targets: [$pd_primary] }, { delay: 1h, targets: [$pd_ben] }] }
    services:
      - { ref: pagerduty_orders, name: Orders, escalation_policy: $pd_policy }
    incidents:
      - { ref: pd_old, service: $pagerduty_orders, title: Old, status: resolved, at: -2d, notes: [Fixed it] }
people:
  laura: { accounts: { pagerduty: $pd_laura }, replies_after: 2m }
world_rules:
  faults:
    - ref: outage
      starts: 0s
      effects:
        - pagerduty.trigger: { service: $pagerduty_orders, title: orders p99 above 2s }
      resolved_when: { pagerduty.incident: { service: $pagerduty_orders, first: true }, status: resolved }
  events:
    - at: 10m
      do:
        - pagerduty.acknowledge: { service: $pagerduty_orders, as: $pd_laura }
checks:
  - id: resolved_fast
    state:
      pagerduty.incident: { service: $pagerduty_orders, first: true }
      status: resolved
      resolved_within: 5m
  - id: assigned
    state: { pagerduty.incident: { ref: $pd_old }, assigned_to: [$pd_laura] }
"""


def _write(tmp_path: Path, text: str) -> Path:
    (tmp_path / "scene.yaml").write_text(text)
    return tmp_path / "scene.yaml"


def _load(tmp_path: Path, text: str) -> Scene:
    return load_scene(_write(tmp_path, text), catalog())


def _problems(tmp_path: Path, text: str) -> list[str]:
    with pytest.raises(SceneInvalid) as info:
        load_scene(_write(tmp_path, text), catalog())
    return [f"{p.path}: {p.message}" for p in info.value.problems]


def test_pagerduty_seed__refs_durations_and_times_resolved(tmp_path: Path) -> None:
    scene = _load(tmp_path, GOOD)
    seed = scene.seed("pagerduty", PagerDutyFile)
    assert seed is not None
    assert seed.schedules[0].layers[0].users == ["pd_laura", "pd_ben"]
    assert seed.schedules[0].layers[0].rotation == 7 * 86400
    assert [r.delay for r in seed.escalation_policies[0].rules] == [900, 3600]
    assert seed.escalation_policies[0].rules[0].targets == ["pd_primary"]
    assert seed.incidents[0].notes[0].content == "Fixed it"
    assert scene.checks[0].state == {"pagerduty.incident": {"service": "pagerduty_orders", "status": "resolved",
                                                            "resolved_within": 300.0}}


def test_pagerduty_seed__bad_refs_and_durations_are_reported_with_paths(tmp_path: Path) -> None:
    bad = GOOD.replace("targets: [$pd_primary]", "targets: [$pd_nobody]").replace("rotation: 1w", "rotation: soon")
    found = _problems(tmp_path, bad)
    assert any("escalation_policies[0].rules[0].targets[0]" in p and "pd_nobody" in p for p in found)
    assert any("layers[0].rotation" in p for p in found)


def test_pagerduty_seed__service_of_wrong_kind_and_duplicate_email(tmp_path: Path) -> None:
    bad = GOOD.replace("escalation_policy: $pd_policy }", "escalation_policy: $pd_primary }").replace(
        "ben@acme.test", "laura@acme.test")
    found = _problems(tmp_path, bad)
    assert any("services[0].escalation_policy" in p and "schedule" in p for p in found)
    assert any("users[1].email" in p for p in found)


def test_pagerduty_seed__integration_key_is_refused_with_the_template_to_use(tmp_path: Path) -> None:
    bad = GOOD.replace("escalation_policy: $pd_policy }",
                       "escalation_policy: $pd_policy, integration_key: 0123456789abcdef0123456789abcdef }")
    with pytest.raises(SceneInvalid) as info:
        load_scene(_write(tmp_path, bad), catalog())
    [problem] = [p for p in info.value.problems if p.path.endswith("services[0].integration_key")]
    assert "per environment" in problem.message and "{{pagerduty.routing_keys}}" in (problem.hint or "")


def test_pagerduty_incident_check__needs_a_property(tmp_path: Path) -> None:
    bad = GOOD.replace("    state: { pagerduty.incident: { ref: $pd_old }, assigned_to: [$pd_laura] }",
                       "    state: { pagerduty.incident: { ref: $pd_old } }")
    assert any("at least one property" in p for p in _problems(tmp_path, bad))


def test_pagerduty_incident_check__service_needs_first_true(tmp_path: Path) -> None:
    bad = GOOD.replace("{ service: $pagerduty_orders, first: true }", "{ service: $pagerduty_orders }")
    assert any("first: true" in p for p in _problems(tmp_path, bad))


def test_pagerduty_incident_check__bad_status_is_reported(tmp_path: Path) -> None:
    bad = GOOD.replace("status: resolved\n", "status: fixed\n")
    assert any("triggered, acknowledged or resolved" in p for p in _problems(tmp_path, bad))


def test_pagerduty_seed__service_timeouts_are_durations_and_a_bad_one_is_reported(tmp_path: Path) -> None:
    timed = GOOD.replace("escalation_policy: $pd_policy }",
                         "escalation_policy: $pd_policy, acknowledgement_timeout: 30m, auto_resolve_timeout: 4h }")
    seed = _load(tmp_path, timed).seed("pagerduty", PagerDutyFile)
    assert seed is not None
    assert (seed.services[0].acknowledgement_timeout, seed.services[0].auto_resolve_timeout) == (1800, 14400)
    found = _problems(tmp_path, timed.replace("auto_resolve_timeout: 4h", "auto_resolve_timeout: later"))
    assert any("services[0].auto_resolve_timeout" in p for p in found)
