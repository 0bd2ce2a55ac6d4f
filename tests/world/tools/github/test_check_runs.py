"""Check runs and check suites for a ref, through PyGithub, githubkit and the raw API."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

GH = Any  # conftest.GH


def _main(gh: GH) -> str:
    return str(gh.raw("GET", "/repos/acme/orders/branches/main").json()["commit"]["sha"])


def test_check_run__create_update_get_list(gh: GH, matches_spec: Callable[..., None]) -> None:
    sha = _main(gh)
    answer = gh.raw("POST", "/repos/acme/orders/check-runs",
                    json={"name": "tests", "head_sha": sha, "status": "in_progress",
                          "output": {"title": "Running", "summary": "3 of 9"}})
    assert answer.status_code == 201, answer.text
    run = answer.json()
    matches_spec("POST", "/repos/{owner}/{repo}/check-runs", run, 201)
    assert run["status"] == "in_progress" and run["conclusion"] is None
    done = gh.raw("PATCH", f"/repos/acme/orders/check-runs/{run['id']}", json={"conclusion": "failure"})
    matches_spec("PATCH", "/repos/{owner}/{repo}/check-runs/{check_run_id}", done.json())
    assert done.json()["status"] == "completed" and done.json()["completed_at"]
    got = gh.raw("GET", f"/repos/acme/orders/check-runs/{run['id']}").json()
    matches_spec("GET", "/repos/{owner}/{repo}/check-runs/{check_run_id}", got)
    repo = gh.client.get_repo("acme/orders")
    repo.create_check_run(name="lint", head_sha=sha, status="completed", conclusion="success")
    listed = gh.raw("GET", "/repos/acme/orders/commits/main/check-runs").json()
    matches_spec("GET", "/repos/{owner}/{repo}/commits/{ref}/check-runs", listed)
    assert sorted(r["name"] for r in listed["check_runs"]) == ["lint", "tests"] and listed["total_count"] == 2
    assert [r.name for r in repo.get_commit(sha).get_check_runs(check_name="lint")] == ["lint"]
    kit = gh.kit.rest.checks.list_for_ref("acme", "orders", sha).parsed_data
    assert kit.total_count == 2
    suites = gh.raw("GET", "/repos/acme/orders/commits/main/check-suites").json()
    matches_spec("GET", "/repos/{owner}/{repo}/commits/{ref}/check-suites", suites)
    assert suites["check_suites"][0]["conclusion"] == "failure"


def test_check_run__refusals(gh: GH) -> None:
    sha = _main(gh)
    assert gh.raw("POST", "/repos/acme/orders/check-runs", json={"head_sha": sha}).status_code == 422
    unknown = gh.raw("POST", "/repos/acme/orders/check-runs", json={"name": "x", "head_sha": "f" * 40})
    assert unknown.status_code == 422
    bad = gh.raw("POST", "/repos/acme/orders/check-runs", json={"name": "x", "head_sha": sha, "status": "done"})
    assert bad.status_code == 422
    incomplete = gh.raw("POST", "/repos/acme/orders/check-runs",
                        json={"name": "x", "head_sha": sha, "status": "completed"})
    assert incomplete.status_code == 422
    assert gh.raw("GET", "/repos/acme/orders/check-runs/1").status_code == 404
    assert gh.raw("GET", "/repos/acme/orders/commits/nope/check-runs").status_code == 422


def test_check_run_created_event(gh: GH) -> None:
    seen: list[Any] = []
    gh.replica.world.bus.subscribe("check_run_created", seen.append)
    sha = _main(gh)
    gh.raw("POST", "/repos/acme/orders/check-runs", json={"name": "ci", "head_sha": sha, "conclusion": "success"})
    assert [(e.data["name"], e.data["conclusion"], e.data["status"]) for e in seen] == [("ci", "success", "completed")]
