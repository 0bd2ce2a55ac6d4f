"""Branches and branch protection over real git, through PyGithub and the raw API."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from github import GithubException

GH = Any  # conftest.GH


def test_list_and_get_branch__shapes(gh: GH, matches_spec: Callable[..., None]) -> None:
    answer = gh.raw("GET", "/repos/acme/orders/branches")
    assert answer.status_code == 200
    matches_spec("GET", "/repos/{owner}/{repo}/branches", answer.json())
    assert [b["name"] for b in answer.json()] == ["fix-exports", "main"]
    one = gh.raw("GET", "/repos/acme/orders/branches/main")
    matches_spec("GET", "/repos/{owner}/{repo}/branches/{branch}", one.json())
    branch = gh.client.get_repo("acme/orders").get_branch("main")
    assert branch.commit.sha == one.json()["commit"]["sha"] and not branch.protected
    assert gh.raw("GET", "/repos/acme/orders/branches/nope").json()["message"] == "Branch not found"


def test_branch_with_a_slash__listed_and_got(gh: GH) -> None:
    repo = gh.client.get_repo("acme/orders")
    repo.create_git_ref("refs/heads/feature/x", repo.get_branch("main").commit.sha)
    assert repo.get_branch("feature/x").name == "feature/x"


def test_protection__put_get_delete(make_github: Callable[..., GH], github_seed: dict[str, Any],
                                    matches_spec: Callable[..., None]) -> None:
    github_seed["repos"][0]["permissions"]["github_agent"] = "admin"
    gh = make_github(github_seed)
    path = "/repos/acme/orders/branches/main/protection"
    assert gh.raw("GET", path).json()["message"] == "Branch not protected"
    body = {"required_status_checks": {"strict": True, "contexts": ["ci"]}, "enforce_admins": True,
            "required_pull_request_reviews": {"required_approving_review_count": 2}, "restrictions": None}
    put = gh.raw("PUT", path, json=body)
    assert put.status_code == 200, put.text
    matches_spec("PUT", "/repos/{owner}/{repo}/branches/{branch}/protection", put.json())
    got = gh.raw("GET", path).json()
    matches_spec("GET", "/repos/{owner}/{repo}/branches/{branch}/protection", got)
    assert got["required_pull_request_reviews"]["required_approving_review_count"] == 2
    assert got["required_status_checks"]["contexts"] == ["ci"] and got["enforce_admins"]["enabled"]
    protection = gh.client.get_repo("acme/orders").get_branch("main").get_protection()
    assert protection.required_pull_request_reviews.required_approving_review_count == 2
    assert gh.client.get_repo("acme/orders").get_branch("main").protected
    assert gh.raw("DELETE", path).status_code == 204
    assert gh.raw("GET", path).status_code == 404


def test_protection__bad_bodies_422_and_writers_403(gh: GH) -> None:
    path = "/repos/acme/orders/branches/main/protection"
    assert gh.raw("PUT", path, json={"enforce_admins": True}).status_code == 403  # the agent only writes
    laura = gh.token_for("laura")
    for body in [{}, {"required_status_checks": None, "enforce_admins": None, "required_pull_request_reviews":
                      {"required_approving_review_count": 9}, "restrictions": None},
                 {"required_status_checks": 5, "enforce_admins": None, "required_pull_request_reviews": None,
                  "restrictions": None}]:
        assert gh.raw("PUT", path, token=laura, json=body).status_code == 422


def test_seeded_protection__seen_by_the_api(make_github: Callable[..., GH], github_seed: dict[str, Any]) -> None:
    github_seed["repos"][0]["protected_branches"] = [{"branch": "main", "required_reviews": 1}]
    gh = make_github(github_seed)
    branch = gh.raw("GET", "/repos/acme/orders/branches/main").json()
    assert branch["protected"] and branch["required_approving_review_count"] == 1
    laura = gh.token_for("laura")
    got = gh.raw("GET", "/repos/acme/orders/branches/main/protection", token=laura).json()
    assert got["required_pull_request_reviews"]["required_approving_review_count"] == 1


def test_rename_branch(gh: GH) -> None:
    answer = gh.raw("POST", "/repos/acme/orders/branches/fix-exports/rename", json={"new_name": "fix-csv"})
    assert answer.status_code == 201, answer.text
    assert answer.json()["name"] == "fix-csv"
    names = [b.name for b in gh.client.get_repo("acme/orders").get_branches()]
    assert names == ["fix-csv", "main"]
    with pytest.raises(GithubException):
        gh.client.get_repo("acme/orders").get_branch("fix-exports")
    clash = gh.raw("POST", "/repos/acme/orders/branches/fix-csv/rename", json={"new_name": "main"})
    assert clash.status_code == 422
