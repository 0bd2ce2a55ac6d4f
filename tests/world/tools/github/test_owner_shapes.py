"""Shapes that depend on who asks or what was set: an org's owner-only fields,
temp_clone_token for those who may push, branch protection's restrictions and dismissal
restrictions kept; the legacy PUT /teams/{id}/repos/{o}/{r}."""

from __future__ import annotations

from typing import Any

GH = Any  # conftest.GH

OWNER_ONLY = (
    "total_private_repos",
    "owned_private_repos",
    "private_gists",
    "disk_usage",
    "collaborators",
    "billing_email",
    "plan",
    "default_repository_permission",
    "members_can_create_repositories",
    "two_factor_requirement_enabled",
)


def test_get_org__owner_only_fields_for_owners(gh: GH, matches_spec: Any) -> None:
    owner = gh.raw("GET", "/orgs/acme", token=gh.token_for("laura")).json()
    matches_spec("GET", "/orgs/{org}", owner)
    assert all(key in owner for key in OWNER_ONLY) and owner["total_private_repos"] == 1
    assert gh.as_user("laura").get_organization("acme").plan.name == "team"
    member = gh.raw("GET", "/orgs/acme").json()
    assert not any(key in member for key in OWNER_ONLY)


def test_get_repo__temp_clone_token_for_pushers(gh: GH) -> None:
    assert gh.raw("GET", "/repos/acme/orders").json()["temp_clone_token"] == ""
    assert "temp_clone_token" not in gh.raw("GET", "/repos/laura/notes").json()


def test_branch_protection__keeps_restrictions(gh: GH) -> None:
    laura = gh.token_for("laura")
    body = {
        "required_status_checks": None,
        "enforce_admins": False,
        "restrictions": {"users": ["ben"], "teams": ["backend"]},
        "required_pull_request_reviews": {
            "required_approving_review_count": 1,
            "dismissal_restrictions": {"users": ["laura"], "teams": []},
        },
    }
    put = gh.raw("PUT", "/repos/acme/orders/branches/main/protection", token=laura, json=body)
    assert put.status_code == 200, put.text
    got = gh.raw("GET", "/repos/acme/orders/branches/main/protection", token=laura).json()
    assert [u["login"] for u in got["restrictions"]["users"]] == ["ben"]
    assert [t["slug"] for t in got["restrictions"]["teams"]] == ["backend"]
    dismissal = got["required_pull_request_reviews"]["dismissal_restrictions"]
    assert [u["login"] for u in dismissal["users"]] == ["laura"]
    protection = gh.as_user("laura").get_repo("acme/orders").get_branch("main").get_protection()
    assert [u.login for u in protection.required_pull_request_reviews.dismissal_users] == ["laura"]


def test_put_team_repo_by_team_id(gh: GH) -> None:
    laura = gh.as_user("laura")
    team = laura.get_organization("acme").get_team_by_slug("support")
    team.update_team_repository(laura.get_repo("acme/many"), "push")
    assert team.get_repo_permission(laura.get_repo("acme/many")).push is True
    answer = gh.raw(
        "PUT", f"/teams/{team.id}/repos/acme/orders", token=gh.token_for("laura"), json={"permission": "pull"}
    )
    assert answer.status_code == 204
