"""Environments and pinned versions: a workflow declares its environments, a release pins a
version to one, runs name an environment or a version, rollbacks go back; workflows that
declare none behave as the reference says. On SQLite and PostgreSQL."""

from __future__ import annotations

import time
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from agentos.models import Base

REFERENCE_KEYS = {"id", "name", "version", "nodes", "checks", "gate", "created_at", "updated_at"}


def saying(word: str) -> dict[str, Any]:
    """A version's nodes and checks: it sets `reply` to `word`, and checks it did."""
    return {
        "nodes": [{"id": "reply", "type": "set", "values": {"reply": f"'{word}'"}}],
        "checks": [{"name": f"says {word}", "type": "contains", "target": "reply", "value": word}],
    }


def make(api: Any, name: str, environments: list[str] | None = None, **fields: Any) -> dict[str, Any]:
    body = {"name": name, **saying("v1"), **fields}
    if environments is not None:
        body["environments"] = environments
    created = api.post("/api/workflows", json=body)
    assert created.status_code == 201, created.text
    return dict(created.json())


def edit(api: Any, workflow: dict[str, Any], word: str) -> dict[str, Any]:
    changed = api.patch(f"/api/workflows/{workflow['id']}", json=saying(word))
    assert changed.status_code == 200, changed.text
    return dict(changed.json())


def release(api: Any, workflow: dict[str, Any], **body: Any) -> dict[str, Any]:
    released = api.post(f"/api/workflows/{workflow['id']}/release", json=body)
    assert released.status_code == 201, released.text
    return dict(released.json())


def run(api: Any, workflow: dict[str, Any], **body: Any) -> dict[str, Any]:
    started = api.post(f"/api/workflows/{workflow['id']}/runs", json={"input": {}, **body})
    assert started.status_code == 201, started.text
    return dict(started.json())


def finished(api: Any, run_id: str) -> dict[str, Any]:
    """The run once it is no longer queued or running (within 30 s)."""
    deadline = time.monotonic() + 30
    while (found := api.get(f"/api/runs/{run_id}").json())["status"] in ("queued", "running"):
        assert time.monotonic() < deadline, f"run {run_id} still {found['status']}"
        time.sleep(0.02)
    return dict(found)


def ran(run: dict[str, Any]) -> tuple[int, str, list[str]]:
    """Which version ran, what it replied, and the checks scored (the version's own)."""
    return run["workflow_version"], run["state"]["reply"], [r["name"] for r in run["evals"]["results"]]


def test_production__keeps_running_the_released_version_after_the_workflow_is_edited(api):
    workflow = make(api, "Pinned", ["staging", "production"])
    edit(api, workflow, "v2")
    assert release(api, workflow, environment="production")["version"] == 2
    assert edit(api, workflow, "v3")["version"] == 3

    assert ran(run(api, workflow)) == (2, "v2", ["says v2"])
    assert ran(run(api, workflow, environment="production")) == (2, "v2", ["says v2"])
    shown = api.get(f"/api/workflows/{workflow['id']}").json()
    assert (shown["version"], shown["environments"], shown["deployments"]) == (
        3, ["staging", "production"], {"staging": None, "production": 2})


def test_staging__runs_the_version_released_to_it_while_production_runs_its_own(api):
    workflow = make(api, "Two stages", ["staging", "production"])
    release(api, workflow, environment="production")
    edit(api, workflow, "v2")
    release(api, workflow, environment="staging")

    assert ran(run(api, workflow, environment="staging")) == (2, "v2", ["says v2"])
    assert ran(run(api, workflow, environment="production")) == (1, "v1", ["says v1"])
    assert api.get("/api/workflows/Two stages").json()["deployments"] == {"staging": 2, "production": 1}
    listed = {w["name"]: w for w in api.get("/api/workflows").json()}
    assert listed["Two stages"]["deployments"] == {"staging": 2, "production": 1}


def test_run__an_explicit_version_runs_that_versions_nodes_and_checks(api):
    workflow = make(api, "Explicit", ["production"])
    edit(api, workflow, "v2")
    edit(api, workflow, "v3")

    assert ran(run(api, workflow, version=1)) == (1, "v1", ["says v1"])
    assert ran(run(api, workflow, version=3)) == (3, "v3", ["says v3"])
    queued = run(api, workflow, version=2, wait=False)
    assert queued["workflow_version"] == 2
    assert ran(finished(api, queued["id"])) == (2, "v2", ["says v2"])
    unknown = api.post(f"/api/workflows/{workflow['id']}/runs", json={"input": {}, "version": 9})
    assert unknown.status_code == 404
    assert unknown.json() == {"detail": "Workflow 'Explicit' has no version 9 (its versions are 1 to 3)"}
    both = api.post(f"/api/workflows/{workflow['id']}/runs", json={"version": 1, "environment": "production"})
    assert both.status_code == 422
    assert both.json() == {"detail": "Invalid run: give either 'environment' or 'version', not both"}
    zero = api.post(f"/api/workflows/{workflow['id']}/runs", json={"version": 0})
    assert zero.status_code == 422 and zero.json()["detail"].startswith("Invalid request: version:")


def test_run__on_an_environment_nothing_was_released_to_is_409_saying_how_to_release(api):
    workflow = make(api, "Unreleased", ["staging", "production"])
    release(api, workflow, environment="staging")

    refused = api.post(f"/api/workflows/{workflow['id']}/runs", json={"input": {}})
    assert refused.status_code == 409
    assert refused.json() == {"detail": (
        "No version of workflow 'Unreleased' is released to production yet: release one"
        f" (POST /api/workflows/{workflow['id']}/release with {{\"environment\": \"production\"}}, which releases"
        " the current version, or with a \"version\") or run a version by number ({\"version\": N})")}
    assert ran(run(api, workflow, environment="staging")) == (1, "v1", ["says v1"])


def test_rollback__pins_the_version_released_before_and_again_one_further_back(api):
    workflow = make(api, "Rolled", ["production"])
    for word in ("v2", "v3"):
        release(api, workflow, environment="production")
        edit(api, workflow, word)
    release(api, workflow, environment="production")
    edit(api, workflow, "v4")

    back = api.post(f"/api/workflows/{workflow['id']}/rollback", json={"environment": "production"})
    assert back.status_code == 201
    assert {k: back.json()[k] for k in ("environment", "version", "status", "detail", "evaluation_id")} == {
        "environment": "production", "version": 2, "status": "released",
        "detail": "rollback of production from v3 to v2", "evaluation_id": None}
    assert ran(run(api, workflow)) == (2, "v2", ["says v2"])

    again = api.post(f"/api/workflows/{workflow['id']}/rollback", json={"environment": "production"})
    assert (again.json()["version"], again.json()["detail"]) == (1, "rollback of production from v2 to v1")
    assert ran(run(api, workflow)) == (1, "v1", ["says v1"])
    nothing = api.post(f"/api/workflows/{workflow['id']}/rollback", json={"environment": "production"})
    assert nothing.status_code == 409
    assert nothing.json() == {"detail": "Nothing to roll back in production: version 1 is the first version of"
                                        " workflow 'Rolled' released to production, and no earlier one ran there"}

    release(api, workflow, environment="production", version=3)
    assert ran(run(api, workflow)) == (3, "v3", ["says v3"])
    history = api.get(f"/api/workflows/{workflow['id']}/releases").json()
    assert [(r["version"], r["detail"]) for r in history] == [
        (3, None), (1, "rollback of production from v2 to v1"), (2, "rollback of production from v3 to v2"),
        (3, None), (2, None), (1, None)]


def test_rollback__with_nothing_released_or_no_environments_is_409(api):
    declared = make(api, "Never released", ["production"])
    nothing = api.post(f"/api/workflows/{declared['id']}/rollback", json={"environment": "production"})
    assert nothing.status_code == 409
    assert nothing.json() == {"detail": "Nothing to roll back in production: no version of workflow"
                                        " 'Never released' has been released to production"}
    plain = make(api, "Plain")
    release(api, plain, environment="production")
    refused = api.post(f"/api/workflows/{plain['id']}/rollback")
    assert refused.status_code == 409
    assert refused.json()["detail"].startswith("Workflow 'Plain' declares no environments, so its runs run the"
                                               " current version and no release can be rolled back")


def test_release__an_environment_the_workflow_does_not_declare_is_refused_naming_the_declared_ones(api):
    workflow = make(api, "Typo", ["staging", "production"])

    typo = api.post(f"/api/workflows/{workflow['id']}/release", json={"environment": "prodution"})
    assert typo.status_code == 422
    assert typo.json() == {"detail": "Unknown environment 'prodution': workflow 'Typo' declares staging, production"}
    assert api.get(f"/api/workflows/{workflow['id']}/releases").json() == []
    for path, body in (("runs", {"input": {}, "environment": "prodution"}), ("rollback", {"environment": "prodution"})):
        refused = api.post(f"/api/workflows/{workflow['id']}/{path}", json=body)
        assert (refused.status_code, refused.json()) == (422, typo.json())


def test_release__a_candidate_evaluation_of_a_non_current_version_gates_its_own_release(api):
    workflow = make(api, "Candidate", ["production"], gate={"min_pass_rate": 0.9})
    edit(api, workflow, "v2")
    edit(api, workflow, "v3")
    path = f"/api/workflows/{workflow['id']}"

    candidate = api.post(f"{path}/evaluations", json={"name": "v2 candidate", "version": 2,
                                                      "dataset": [{"input": {"n": 1}}, {"input": {"n": 2}}]}).json()
    assert (candidate["workflow_version"], candidate["check_pass_rate"]) == (2, 1.0)
    runs = [api.get(f"/api/runs/{item['run_id']}").json() for item in candidate["items"]]
    assert [ran(r) for r in runs] == [(2, "v2", ["says v2"])] * 2
    current = api.post(f"{path}/release", json={"environment": "production"})
    assert current.json() == {"detail": "eval gate: no completed evaluation of version 3 — deployment blocked"}

    released = release(api, workflow, environment="production", version=2)
    assert (released["version"], released["evaluation_id"], released["status"]) == (2, candidate["id"], "released")
    assert ran(run(api, workflow)) == (2, "v2", ["says v2"])

    weak = api.post(f"{path}/evaluations", json={"name": "v1 reported", "version": 1, "results": [
        {"item": "a", "status": "success", "checks": [{"name": "says v1", "passed": False}]}]}).json()
    assert weak["workflow_version"] == 1
    blocked = api.post(f"{path}/release", json={"environment": "production", "version": 1})
    assert blocked.json() == {
        "detail": "eval gate: check pass-rate 0.0% is below the required 90.0% — deployment blocked"}
    assert api.get(path).json()["deployments"] == {"production": 2}


def test_release_and_evaluation__of_a_version_never_made_are_404(api):
    workflow = make(api, "Short")
    release_missing = api.post(f"/api/workflows/{workflow['id']}/release", json={"version": 2})
    assert release_missing.status_code == 404
    assert release_missing.json() == {"detail": "Workflow 'Short' has no version 2 (its only version is 1)"}
    evaluation_missing = api.post(f"/api/workflows/{workflow['id']}/evaluations",
                                  json={"name": "x", "version": 2, "dataset": [{"input": {}}]})
    assert evaluation_missing.status_code == 404


def test_workflows_without_environments__keep_the_reference_shape_and_run_the_current_version(api):
    workflow = make(api, "Reference")
    assert set(workflow) == REFERENCE_KEYS
    release(api, workflow, environment="production")
    assert set(release(api, workflow, environment="anything-goes")) == {
        "id", "workflow_id", "environment", "version", "evaluation_id", "created_at", "status", "detail"}
    changed = edit(api, workflow, "v2")

    assert set(changed) == REFERENCE_KEYS
    assert set(api.get(f"/api/workflows/{workflow['id']}").json()) == REFERENCE_KEYS
    assert ran(run(api, workflow)) == (2, "v2", ["says v2"])
    assert ran(run(api, workflow, version=1)) == (1, "v1", ["says v1"])
    named = api.post(f"/api/workflows/{workflow['id']}/runs", json={"input": {}, "environment": "production"})
    assert named.status_code == 422
    assert named.json()["detail"] == (
        "Workflow 'Reference' declares no environments, so its runs run the current version (2): leave out"
        " 'environment', run a version by number ({\"version\": N}), or declare environments"
        f" (PATCH /api/workflows/{workflow['id']} with {{\"environments\": [\"production\"]}})")


def test_environments__declaring_them_changes_no_version_and_null_takes_them_back(api):
    workflow = make(api, "Declared later")
    release(api, workflow, environment="production")
    edit(api, workflow, "v2")

    declared = api.patch(f"/api/workflows/{workflow['id']}", json={"environments": ["production"]}).json()
    assert (declared["version"], declared["deployments"]) == (2, {"production": 1})
    assert ran(run(api, workflow)) == (1, "v1", ["says v1"])  # what production was released
    undeclared = api.patch(f"/api/workflows/{workflow['id']}", json={"environments": None}).json()
    assert set(undeclared) == REFERENCE_KEYS and undeclared["version"] == 2
    assert ran(run(api, workflow)) == (2, "v2", ["says v2"])


@pytest.mark.parametrize(("environments", "detail"), [
    ("production", "Invalid workflow: environments: expected a list of environment names such as"
                   " [\"staging\", \"production\"] (letters, digits, - and _, at most 100 characters each,"
                   " at most 20 names) or null"),
    (["production", "prod uction", 7, "production"],
     "Invalid workflow: environment 2: 'prod uction' is not an environment name (letters, digits, - and _,"
     " 1 to 100 characters); environment 3: 7 is not an environment name (letters, digits, - and _,"
     " 1 to 100 characters); environment 4: 'production' is declared twice"),
])
def test_environments__a_bad_declaration_is_422_naming_the_place(api, environments, detail):
    created = api.post("/api/workflows", json={"name": "Bad", "nodes": [], "environments": environments})
    assert (created.status_code, created.json()) == (422, {"detail": detail})
    workflow = make(api, "Good", ["production"])
    patched = api.patch(f"/api/workflows/{workflow['id']}", json={"environments": environments})
    assert (patched.status_code, patched.json()) == (422, {"detail": detail})
    assert api.get(f"/api/workflows/{workflow['id']}").json()["environments"] == ["production"]


def test_environments__an_unknown_field_is_422_naming_it(api):
    created = api.post("/api/workflows", json={"name": "Typo field", "nodes": [], "environment": ["production"]})
    assert created.status_code == 422
    assert created.json() == {"detail": "Invalid request: environment: Extra inputs are not permitted"}
    workflow = make(api, "Run typo", ["production"])
    refused = api.post(f"/api/workflows/{workflow['id']}/runs", json={"input": {}, "enviroment": "production"})
    assert refused.json() == {"detail": "Invalid request: enviroment: Extra inputs are not permitted"}


def test_schema__the_migrations_build_what_the_models_describe(key_database):
    with key_database.engine.connect() as connection:
        assert compare_metadata(MigrationContext.configure(connection), Base.metadata) == []
