"""A release gate on Ancha scenes: the run uploaded for the release's commit is the
evaluation, with no separate `ancha report` step."""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest
from test_service_ancha_uploads import make_run

from agentos.db import Database
from agentos.keys import issue_key
from ancha.results.upload import RunSource, push_run
from conftest import Api, ServerThread

GATE = {"ancha": {"scenes": ["orders-latency", "offboarding"], "min_pass_rate": 0.8}}
COMMIT = "c0ffee" + "0" * 34


def _workflow(api: Api, gate: object = GATE) -> str:
    name = f"agent-{secrets.token_hex(3)}"
    made = api.post("/api/workflows", json={"name": name, "nodes": [{"id": "a", "type": "set", "values": {"x": "1"}}],
                                            "gate": gate})
    assert made.status_code == 201, made.text
    return name


def _push(service: ServerThread, key: str, root: Path, commit: str, scenes: dict[str, str]) -> str:
    folder = make_run(root, scenes=scenes)
    push_run(folder, service.url, key, RunSource(commit=commit, branch="main"))
    return folder.name


def test_the_gate_reads_the_newest_run_of_the_commit_that_ran_the_scenes(
        api: Api, service: ServerThread, tmp_path: Path) -> None:
    name = _workflow(api)
    release = f"/api/workflows/{name}/release"
    no_commit = api.post(release, json={"environment": "production"})
    assert no_commit.status_code == 422 and "names no commit" in no_commit.json()["detail"]
    none_yet = api.post(release, json={"commit": COMMIT})
    assert none_yet.status_code == 422
    assert none_yet.json()["detail"] == (f"ancha gate: no run uploaded for commit {COMMIT[:12]} ran orders-latency,"
                                         " offboarding (upload one with `ancha run --upload`) — deployment blocked")
    weak = _push(service, api.key, tmp_path / "a", COMMIT, {"orders-latency": "PPPPF", "offboarding": "PPPFF"})
    blocked = api.post(release, json={"commit": COMMIT[:12]})
    assert blocked.status_code == 422
    assert blocked.json()["detail"] == (f"ancha gate: pass rate 70.0% of orders-latency, offboarding in run {weak}"
                                        " is below the required 80.0% — deployment blocked")
    _push(service, api.key, tmp_path / "b", "f" * 40, {"orders-latency": "PPPPP", "offboarding": "PPPPP"})
    assert api.post(release, json={"commit": COMMIT}).status_code == 422, "another commit's run does not count"
    strong = _push(service, api.key, tmp_path / "c", COMMIT, {"orders-latency": "PPPPP", "offboarding": "PPPPF"})
    released = api.post(release, json={"commit": COMMIT})
    assert released.status_code == 201
    assert (released.json()["status"], released.json()["commit"], released.json()["ancha_run_id"]) == \
        ("released", COMMIT, strong)
    history = api.get(f"/api/workflows/{name}/releases").json()
    assert [r["status"] for r in history] == ["released", "blocked", "blocked", "blocked", "blocked"]


def test_a_run_missing_one_of_the_scenes_is_not_the_evaluation(api: Api, service: ServerThread, tmp_path: Path) -> None:
    name = _workflow(api)
    _push(service, api.key, tmp_path, COMMIT, {"orders-latency": "PPPPP"})
    answer = api.post(f"/api/workflows/{name}/release", json={"commit": COMMIT})
    assert answer.status_code == 422 and "ran orders-latency, offboarding" in answer.json()["detail"]


def test_another_workspaces_runs_never_open_the_gate(
        api: Api, service: ServerThread, key_database: Database, tmp_path: Path) -> None:
    name = _workflow(api)
    other = issue_key(key_database, f"other-{secrets.token_hex(4)}", "ci")
    _push(service, other, tmp_path, COMMIT, {"orders-latency": "PPPPP", "offboarding": "PPPPP"})
    assert api.post(f"/api/workflows/{name}/release", json={"commit": COMMIT}).status_code == 422


def test_both_gates_must_hold(api: Api, service: ServerThread, tmp_path: Path) -> None:
    name = _workflow(api, GATE | {"min_pass_rate": 0.9})
    _push(service, api.key, tmp_path, COMMIT, {"orders-latency": "PPPPP", "offboarding": "PPPPP"})
    answer = api.post(f"/api/workflows/{name}/release", json={"commit": COMMIT})
    assert answer.status_code == 422 and answer.json()["detail"].startswith("eval gate: no completed evaluation")


@pytest.mark.parametrize(("gate", "says"), [
    ({"ancha": {"scenes": ["a"], "min_pass_rate": 0.8, "threshold": 1}}, "unknown field gate.ancha.threshold"),
    ({"ancha": {"scenes": [], "min_pass_rate": 0.8}}, "gate.ancha.scenes must list 1 to 500"),
    ({"ancha": {"scenes": ["a", "a"], "min_pass_rate": 0.8}}, "different scene names"),
    ({"ancha": {"scenes": ["a"], "min_pass_rate": 2}}, "gate.ancha.min_pass_rate must be a number from 0 to 1"),
    ({"min_pass_rate": 0.5, "max": 1}, "unknown field gate.max"),
])
def test_a_bad_gate_is_refused_naming_the_place(api: Api, gate: object, says: str) -> None:
    answer = api.post("/api/workflows", json={"name": f"w-{secrets.token_hex(3)}", "nodes": [], "gate": gate})
    assert answer.status_code == 422 and says in answer.json()["detail"]


def test_a_release_without_a_commit_keeps_the_reference_shape(api: Api) -> None:
    name = _workflow(api, None)
    answer = api.post(f"/api/workflows/{name}/release", json={"environment": "production"})
    assert set(answer.json()) == {"id", "workflow_id", "environment", "version", "evaluation_id", "created_at",
                                  "status", "detail"}
