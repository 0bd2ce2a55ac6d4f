"""world.okta in a scene file (refs, groups by ref or name, every problem at once), the
okta.user state check (pass and fail with explanations, as a predicate too) and the
okta.user world-rule action."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ancha.scene import SceneInvalid, load_scene
from ancha.world.registry import catalog, registry
from ancha.world.tools.okta.scene_file import OktaFile
from conftest import build_env, world_call

GOOD = """\
name: offboarding
world:
  okta:
    groups:
      - { ref: okta_eng, name: Engineering, description: Builders }
      - { name: VPN Users }
    users:
      - { ref: okta_dana, login: dana@acme.com, first_name: Dana, groups: [$okta_eng, VPN Users] }
      - { login: bo@acme.com, status: STAGED }
people:
  dana: { accounts: { okta: $okta_dana } }
checks:
  - id: deactivated
    state: { okta.user: $okta_dana, status: DEPROVISIONED }
  - id: gone
    state: { okta.user: bo@acme.com, exists: false }
  - id: either
    state: { okta.user: $user.okta_dana, status_in: [SUSPENDED, DEPROVISIONED] }
"""


def _write(tmp_path: Path, text: str) -> Path:
    (tmp_path / "scene.yaml").write_text(text)
    return tmp_path / "scene.yaml"


def test_okta_seed__refs_and_groups_resolved(tmp_path: Path) -> None:
    scene = load_scene(_write(tmp_path, GOOD), catalog())
    seed = scene.seed("okta", OktaFile)
    assert seed is not None
    assert seed.users[0].groups == ["okta_eng", "VPN Users"] and seed.users[1].status == "STAGED"
    assert [c.state for c in scene.checks] == [
        {"okta.user": {"user": "okta_dana", "status": "DEPROVISIONED"}},
        {"okta.user": {"login": "bo@acme.com", "exists": False}},
        {"okta.user": {"user": "okta_dana", "status_in": ["SUSPENDED", "DEPROVISIONED"]}}]


def test_okta_seed__every_problem_at_once(tmp_path: Path) -> None:
    text = """\
name: bad
world:
  okta:
    groups: [{ ref: g, name: Eng }, { name: eng }, { name: Everyone }]
    users:
      - { ref: u, login: a@acme.com, status: GONE, groups: [$nope, Sales], person: dana }
      - { login: A@acme.com }
checks:
  - id: both
    state: { okta.user: $u, status: ACTIVE, exists: false }
  - id: none
    state: { okta.user: $g }
  - id: wrong_status
    state: { okta.user: a@acme.com, status_in: [ACTIVE, CLOSED] }
"""
    with pytest.raises(SceneInvalid) as info:
        load_scene(_write(tmp_path, text), catalog())
    found = {(p.path, p.message) for p in info.value.problems}
    paths = {p for p, _ in found}
    assert ("world.okta.groups[1].name", "duplicate group name 'eng'") in found
    assert ("world.okta.groups[2].name", "Everyone is Okta's built-in group") in found
    assert "world.okta.users[0].status" in paths and "world.okta.users[0].person" in paths
    assert ("world.okta.users[1].login", "duplicate login 'A@acme.com'") in found
    assert ("checks[0].state", "okta.user takes one of status, status_in or exists, not status and exists") in found
    assert ("checks[1].state", "okta.user needs exactly one of status, status_in or exists") in found
    assert ("checks[2].state.status_in", "unknown Okta status 'CLOSED'") in found
    hints = [p.hint for p in info.value.problems if p.path == "world.okta.users[0].person"]
    assert hints and "accounts.okta" in str(hints[0])


# --- the state check -------------------------------------------------------------------


def _grade(env: Any, body: dict[str, Any]) -> Any:
    return registry().states["okta.user"].evaluate(body, env.tools["okta"], env)


SEED: dict[str, Any] = {"users": [{"ref": "okta_dana", "login": "dana@acme.com", "first_name": "Dana",
                                   "last_name": "S"}]}


def test_check__status_passes_only_when_deprovisioned_not_deleted() -> None:
    env = build_env(SEED)
    dana = env.tools["okta"].state.user("dana@acme.com")
    body = {"user": "okta_dana", "status": "DEPROVISIONED"}
    outcome = _grade(env, body)
    assert not outcome.passed and outcome.explanation == (
        "Failed: expected $okta_dana (dana@acme.com) with status DEPROVISIONED; actually status ACTIVE.")
    assert world_call(env, "POST", f"/api/v1/users/{dana.id}/lifecycle/deactivate").status == 200
    outcome = _grade(env, body)
    assert outcome.passed and outcome.actual == "status DEPROVISIONED" and outcome.evidence == [1]
    world_call(env, "DELETE", f"/api/v1/users/{dana.id}")
    outcome = _grade(env, body)
    assert not outcome.passed and "Deleting a user is not deactivating it" in outcome.explanation
    assert _grade(env, {"login": "dana@acme.com", "exists": False}).passed
    assert _grade(env, {"user": "okta_dana", "exists": False}).passed
    assert not _grade(env, {"login": "dana@acme.com", "exists": True}).passed


def test_check__status_in_and_unknown_login() -> None:
    env = build_env(SEED)
    assert _grade(env, {"login": "DANA@acme.com", "status_in": ["ACTIVE", "SUSPENDED"]}).passed
    outcome = _grade(env, {"login": "nobody@acme.com", "status": "ACTIVE"})
    assert not outcome.passed and outcome.actual.startswith("no such user")


def test_check__as_a_predicate_timestamps_the_deactivation() -> None:
    from ancha.scene.model import Predicate

    env = build_env(SEED)
    dana = env.tools["okta"].state.user("dana@acme.com")
    off = Predicate.model_validate({"state": {"okta.user": {"user": "okta_dana", "status": "DEPROVISIONED"}}})
    env.predicates.watch(off)
    world_call(env, "POST", f"/api/v1/users/{dana.id}/lifecycle/suspend")
    assert env.predicates.first_held(off) is None
    world_call(env, "POST", f"/api/v1/users/{dana.id}/lifecycle/deactivate")
    assert env.predicates.first_held(off) is not None


# --- the world-rule action -------------------------------------------------------------


def _perform(env: Any, body: dict[str, Any]) -> str | None:
    return registry().actions["okta.user"].perform(body, env.tools["okta"], env)


def test_action__walks_the_lifecycle_through_the_api_as_world() -> None:
    env = build_env({"users": [{"ref": "okta_fox", "login": "fox@acme.com", "status": "SUSPENDED"}],
                     "groups": [{"ref": "okta_eng", "name": "Engineering"}]})
    assert _perform(env, {"user": "okta_fox", "status": "PASSWORD_EXPIRED", "groups": ["okta_eng"],
                          "group_refs": [True]}) is None
    fox = env.tools["okta"].state.user("fox@acme.com")
    assert fox.status == "PASSWORD_EXPIRED" and env.refs["okta_eng"].id in fox.groups
    assert [(e.actor, e.method, e.path.rsplit("/", 1)[1]) for e in env.trace] == [
        ("world", "POST", "unsuspend"), ("world", "POST", "expire_password"), ("world", "PUT", fox.id)]


def test_action__creates_a_missing_user_by_login_and_reports_errors() -> None:
    env = build_env({"users": []})
    assert _perform(env, {"login": "new.hire@acme.com", "status": "ACTIVE"}) is None
    user = env.tools["okta"].state.user("new.hire@acme.com")
    assert user.status == "ACTIVE" and user.profile["firstName"] == "New" and user.profile["lastName"] == "Hire"
    assert _perform(env, {"login": "new.hire@acme.com", "status": "LOCKED_OUT"}) is None
    assert user.status == "LOCKED_OUT"
    assert _perform(env, {"login": "new.hire@acme.com", "status": "STAGED"}) == \
        "okta.user: no Okta operation leads new.hire@acme.com from LOCKED_OUT to STAGED"
