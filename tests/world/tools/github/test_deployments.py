"""Deployments, deployment statuses, environments and what runs in production, through
PyGithub, githubkit and the raw API."""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

from ancha.world.tools.github.production import production_sha

GH = Any  # conftest.GH


def _main(gh: GH) -> str:
    return str(gh.raw("GET", "/repos/acme/orders/branches/main").json()["commit"]["sha"])


def _commit_on(gh: GH, branch: str, path: str, text: str) -> str:
    answer = gh.raw("PUT", f"/repos/acme/orders/contents/{path}",
                    json={"message": f"Edit {path}", "content": base64.b64encode(text.encode()).decode(),
                          "branch": branch})
    assert answer.status_code == 201, answer.text
    return str(answer.json()["commit"]["sha"])


def _repo(gh: GH) -> Any:
    return gh.replica.state.repo("acme", "orders")


def test_create_deployment__resolves_ref_and_lists(gh: GH, matches_spec: Callable[..., None]) -> None:
    answer = gh.raw("POST", "/repos/acme/orders/deployments",
                    json={"ref": "main", "environment": "staging", "payload": {"run": 1}, "description": "try"})
    assert answer.status_code == 201, answer.text
    body = answer.json()
    matches_spec("POST", "/repos/{owner}/{repo}/deployments", body, 201)
    assert body["sha"] == _main(gh) and body["environment"] == "staging" and body["task"] == "deploy"
    assert body["production_environment"] is False and body["payload"] == {"run": 1}
    repo = gh.client.get_repo("acme/orders")
    second = repo.create_deployment(ref="fix-exports", environment="production", required_contexts=[])
    listed = gh.raw("GET", "/repos/acme/orders/deployments").json()
    matches_spec("GET", "/repos/{owner}/{repo}/deployments", listed)
    assert [d["id"] for d in listed] == [second.id, body["id"]]
    assert [d["id"] for d in gh.raw("GET", "/repos/acme/orders/deployments?environment=staging").json()] == \
        [body["id"]]
    assert gh.raw("GET", "/repos/acme/orders/deployments?ref=nope").json() == []
    kit = gh.kit.rest.repos.get_deployment("acme", "orders", body["id"]).parsed_data
    assert kit.sha == body["sha"]
    envs = gh.raw("GET", "/repos/acme/orders/environments").json()
    matches_spec("GET", "/repos/{owner}/{repo}/environments", envs)
    assert sorted(e["name"] for e in envs["environments"]) == ["production", "staging"]
    one = gh.raw("GET", "/repos/acme/orders/environments/staging").json()
    matches_spec("GET", "/repos/{owner}/{repo}/environments/{environment_name}", one)
    assert gh.raw("GET", "/repos/acme/orders/environments/nope").status_code == 404


def test_create_deployment__github_refusals(gh: GH) -> None:
    unknown = gh.raw("POST", "/repos/acme/orders/deployments", json={"ref": "nope"})
    assert unknown.status_code == 422 and unknown.json()["message"] == "No ref found for: nope"
    assert gh.raw("POST", "/repos/acme/orders/deployments", json={}).status_code == 422
    stranger = gh.token_for("carol")  # a private repository she cannot see
    assert gh.raw("POST", "/repos/acme/orders/deployments", token=stranger, json={"ref": "main"}).status_code == 404
    sha = _main(gh)
    assert gh.raw("POST", f"/repos/acme/orders/statuses/{sha}", json={"state": "failure", "context": "ci"}) \
        .status_code == 201
    failing = gh.raw("POST", "/repos/acme/orders/deployments", json={"ref": "main"})
    assert failing.status_code == 409
    assert failing.json()["message"] == "Conflict: Commit status checks failed for main."
    assert failing.json()["errors"][0]["contexts"] == [{"context": "ci", "state": "failure"}]
    forced = gh.raw("POST", "/repos/acme/orders/deployments", json={"ref": "main", "required_contexts": []})
    assert forced.status_code == 201


def test_create_deployment__auto_merges_the_default_branch(gh: GH) -> None:
    _commit_on(gh, "main", "CHANGELOG.md", "v2\n")
    merged = gh.raw("POST", "/repos/acme/orders/deployments", json={"ref": "fix-exports"})
    assert merged.status_code == 202 and merged.json()["message"] == "Auto-merged main into fix-exports on deployment."
    content = gh.raw("GET", "/repos/acme/orders/contents/CHANGELOG.md?ref=fix-exports")
    assert content.status_code == 200
    _commit_on(gh, "main", "NOTES.md", "main side\n")
    _commit_on(gh, "fix-exports", "NOTES.md", "branch side\n")
    clash = gh.raw("POST", "/repos/acme/orders/deployments", json={"ref": "fix-exports"})
    assert clash.status_code == 409 and clash.json()["message"] == "Conflict merging main into fix-exports."
    plain = gh.raw("POST", "/repos/acme/orders/deployments", json={"ref": "fix-exports", "auto_merge": False})
    assert plain.status_code == 201


def test_deployment_statuses__create_list_get_and_auto_inactive(gh: GH, matches_spec: Callable[..., None]) -> None:
    first = gh.raw("POST", "/repos/acme/orders/deployments", json={"ref": "main"}).json()
    path = f"/repos/acme/orders/deployments/{first['id']}/statuses"
    done = gh.raw("POST", path, json={"state": "success", "environment_url": "https://orders.test",
                                      "log_url": "https://ci.test/1"})
    assert done.status_code == 201, done.text
    matches_spec("POST", "/repos/{owner}/{repo}/deployments/{deployment_id}/statuses", done.json(), 201)
    assert done.json()["environment"] == "production" and done.json()["log_url"] == "https://ci.test/1"
    second = gh.client.get_repo("acme/orders").create_deployment(ref="fix-exports", required_contexts=[])
    second.create_status("in_progress")
    second.create_status("success", environment_url="https://orders.test")
    statuses = gh.raw("GET", path).json()
    matches_spec("GET", "/repos/{owner}/{repo}/deployments/{deployment_id}/statuses", statuses)
    assert [s["state"] for s in statuses] == ["inactive", "success"]
    one = gh.raw("GET", f"{path}/{statuses[1]['id']}")
    matches_spec("GET", "/repos/{owner}/{repo}/deployments/{deployment_id}/statuses/{status_id}", one.json())
    assert gh.raw("POST", path, json={"state": "done"}).status_code == 422
    assert gh.raw("GET", f"{path}/1").status_code == 404
    assert [s.state for s in second.get_statuses()] == ["success", "in_progress"]


def test_delete_deployment__only_inactive(gh: GH) -> None:
    first = gh.raw("POST", "/repos/acme/orders/deployments", json={"ref": "main"}).json()
    gh.raw("POST", f"/repos/acme/orders/deployments/{first['id']}/statuses", json={"state": "success"})
    second = gh.raw("POST", "/repos/acme/orders/deployments", json={"ref": "main"}).json()
    gh.raw("POST", f"/repos/acme/orders/deployments/{second['id']}/statuses", json={"state": "success"})
    active = gh.raw("DELETE", f"/repos/acme/orders/deployments/{second['id']}")
    assert active.status_code == 422
    assert gh.raw("DELETE", f"/repos/acme/orders/deployments/{first['id']}").status_code == 204
    assert gh.raw("GET", f"/repos/acme/orders/deployments/{first['id']}").status_code == 404


def test_production_sha__follows_successful_production_deployments(make_github: Callable[..., GH],
                                                                   github_seed: dict[str, Any]) -> None:
    github_seed["repos"][0]["production"] = "main"
    gh = make_github(github_seed)
    seeded = _main(gh)
    assert production_sha(_repo(gh)) == seeded
    names = [e["name"] for e in gh.raw("GET", "/repos/acme/orders/environments").json()["environments"]]
    assert names == ["production"]
    newer = _commit_on(gh, "fix-exports", "exports.py", "ok\n")
    deployment = gh.raw("POST", "/repos/acme/orders/deployments", json={"ref": newer}).json()
    assert production_sha(_repo(gh)) == seeded  # no status yet
    path = f"/repos/acme/orders/deployments/{deployment['id']}/statuses"
    gh.raw("POST", path, json={"state": "failure"})
    assert production_sha(_repo(gh)) == seeded
    gh.raw("POST", path, json={"state": "success"})
    assert production_sha(_repo(gh)) == newer
    staging = gh.raw("POST", "/repos/acme/orders/deployments", json={"ref": "main", "environment": "staging"}).json()
    gh.raw("POST", f"/repos/acme/orders/deployments/{staging['id']}/statuses", json={"state": "success"})
    assert production_sha(_repo(gh)) == newer


def test_production_sha__none_without_seed_or_deployments(gh: GH) -> None:
    assert production_sha(_repo(gh)) is None


def test_deployment_events_published(gh: GH) -> None:
    seen: list[Any] = []
    gh.replica.world.bus.subscribe("*", seen.append)
    deployment = gh.raw("POST", "/repos/acme/orders/deployments", json={"ref": "main"}).json()
    gh.raw("POST", f"/repos/acme/orders/deployments/{deployment['id']}/statuses", json={"state": "success"})
    kinds = [(e.type, e.data.get("deployment_id")) for e in seen if e.type.startswith("deployment")]
    assert kinds == [("deployment_created", deployment["id"]), ("deployment_status_created", deployment["id"])]
    mine = [e for e in seen if e.type.startswith("deployment")]
    assert mine[1].data["state"] == "success" and mine[0].data["sha"] == _main(gh)


def test_production_sha__seeded_commit_ref(make_github: Callable[..., GH], github_seed: dict[str, Any]) -> None:
    repo = github_seed["repos"][0]
    repo["commits"] = [{"ref": "hotfix", "branch": "fix-exports", "message": "Hotfix", "files": {"h.py": "1\n"}}]
    repo["production"] = "hotfix"
    gh = make_github(github_seed)
    tip = gh.raw("GET", "/repos/acme/orders/branches/fix-exports").json()["commit"]["sha"]
    assert production_sha(_repo(gh)) == tip
