"""Commit statuses and the combined status, through PyGithub, githubkit and the raw API."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

GH = Any  # conftest.GH


def _main(gh: GH) -> str:
    return str(gh.raw("GET", "/repos/acme/orders/branches/main").json()["commit"]["sha"])


def test_create_status__shape_list_and_combined(gh: GH, matches_spec: Callable[..., None]) -> None:
    sha = _main(gh)
    answer = gh.raw("POST", f"/repos/acme/orders/statuses/{sha}",
                    json={"state": "pending", "context": "ci/build", "target_url": "https://ci.test/1",
                          "description": "Building"})
    assert answer.status_code == 201, answer.text
    matches_spec("POST", "/repos/{owner}/{repo}/statuses/{sha}", answer.json(), 201)
    assert answer.json()["creator"]["login"] == "ancha-agent"
    commit = gh.client.get_repo("acme/orders").get_commit(sha)
    commit.create_status("success", context="ci/build")
    commit.create_status("failure", context="lint")
    listed = gh.raw("GET", "/repos/acme/orders/commits/main/statuses").json()
    matches_spec("GET", "/repos/{owner}/{repo}/commits/{ref}/statuses", listed)
    assert [(s["context"], s["state"]) for s in listed] == [("lint", "failure"), ("ci/build", "success"),
                                                            ("ci/build", "pending")]
    combined = gh.raw("GET", "/repos/acme/orders/commits/main/status").json()
    matches_spec("GET", "/repos/{owner}/{repo}/commits/{ref}/status", combined)
    assert combined["state"] == "failure" and combined["total_count"] == 2
    assert commit.get_combined_status().state == "failure"
    kit = gh.kit.rest.repos.list_commit_statuses_for_ref("acme", "orders", sha).parsed_data
    assert len(kit) == 3


def test_create_status__refusals(gh: GH) -> None:
    sha = _main(gh)
    bad = gh.raw("POST", f"/repos/acme/orders/statuses/{sha}", json={"state": "great"})
    assert bad.status_code == 422 and bad.json()["errors"][0]["field"] == "state"
    assert gh.raw("POST", f"/repos/acme/orders/statuses/{sha}", json={}).status_code == 422
    unknown = gh.raw("POST", f"/repos/acme/orders/statuses/{'0' * 40}", json={"state": "success"})
    assert unknown.status_code == 422 and unknown.json()["message"] == f"No commit found for SHA: {'0' * 40}"
    stranger = gh.token_for("carol")
    assert gh.raw("POST", f"/repos/acme/orders/statuses/{sha}", token=stranger, json={"state": "success"}) \
        .status_code == 404
    assert gh.raw("GET", "/repos/acme/orders/commits/nope/statuses").status_code == 404


def test_status_created_event(gh: GH) -> None:
    seen: list[Any] = []
    gh.replica.world.bus.subscribe("status_created", seen.append)
    sha = _main(gh)
    gh.raw("POST", f"/repos/acme/orders/statuses/{sha}", json={"state": "success", "context": "ci"})
    assert [(e.data["sha"], e.data["state"], e.data["context"]) for e in seen] == [(sha, "success", "ci")]


def test_required_check__blocks_merge_until_green(make_github: Callable[..., GH], github_seed: dict[str, Any]) -> None:
    repo = github_seed["repos"][0]
    repo["protected_branches"] = [{"branch": "main", "required_checks": ["ci"]}]
    repo["commits"] = [{"branch": "fix-exports", "message": "Exports back", "files": {"exports.py": "x = 1\n"}}]
    repo["pulls"] = []
    gh = make_github(github_seed)
    pull = gh.raw("POST", "/repos/acme/orders/pulls", json={"title": "Exports", "head": "fix-exports",
                                                           "base": "main"}).json()
    blocked = gh.raw("PUT", f"/repos/acme/orders/pulls/{pull['number']}/merge", json={})
    assert blocked.status_code == 405 and blocked.json()["message"] == 'Required status check "ci" is expected.'
    gh.raw("POST", f"/repos/acme/orders/statuses/{pull['head']['sha']}", json={"state": "success", "context": "ci"})
    assert gh.raw("PUT", f"/repos/acme/orders/pulls/{pull['number']}/merge", json={}).status_code == 200
