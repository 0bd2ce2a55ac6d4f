"""Org memberships and team writes: invitations wait for acceptance, roles and team
repositories change what people may do at once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

GH = Any  # conftest.GH


def _perms(gh: GH, token: str, repo: str = "acme/orders") -> dict[str, bool] | None:
    answer = gh.raw("GET", f"/repos/{repo}", token=token)
    return answer.json()["permissions"] if answer.status_code == 200 else None


def test_invite__pending_until_accepted(gh: GH, matches_spec: Callable[..., None]) -> None:
    laura, carol = gh.token_for("laura"), gh.token_for("carol")
    assert _perms(gh, carol) is None
    invited = gh.raw("PUT", "/orgs/acme/memberships/carol", token=laura, json={"role": "member"})
    assert invited.status_code == 200, invited.text
    matches_spec("PUT", "/orgs/{org}/memberships/{username}", invited.json())
    assert invited.json()["state"] == "pending" and _perms(gh, carol) is None  # nothing before acceptance
    mine = gh.raw("GET", "/user/memberships/orgs", token=carol).json()
    matches_spec("GET", "/user/memberships/orgs", mine)
    assert [(m["organization"]["login"], m["state"]) for m in mine] == [("acme", "pending")]
    accepted = gh.raw("PATCH", "/user/memberships/orgs/acme", token=carol, json={"state": "active"})
    matches_spec("PATCH", "/user/memberships/orgs/{org}", accepted.json())
    assert accepted.json()["state"] == "active"
    assert _perms(gh, carol) == {"admin": False, "maintain": False, "push": False, "triage": False, "pull": True}
    assert gh.raw("GET", "/orgs/acme/members/carol").status_code == 204
    got = gh.raw("GET", "/user/memberships/orgs/acme", token=carol).json()
    matches_spec("GET", "/user/memberships/orgs/{org}", got)


def test_membership__role_change_and_removal(gh: GH) -> None:
    laura, ben = gh.token_for("laura"), gh.token_for("ben")
    assert gh.raw("PUT", "/orgs/acme/memberships/ben", token=laura, json={"role": "admin"}).json()["state"] == \
        "active"
    assert _perms(gh, ben)["admin"] is True  # type: ignore[index]
    assert gh.raw("PUT", "/orgs/acme/memberships/ben", token=laura, json={"role": "owner"}).status_code == 422
    assert gh.raw("DELETE", "/orgs/acme/memberships/ben", token=laura).status_code == 204
    assert _perms(gh, ben) is None and gh.raw("GET", "/orgs/acme/members/ben").status_code == 404
    assert gh.raw("GET", "/orgs/acme/teams/backend/members", token=laura).json() == []


def test_membership__only_owners_manage(gh: GH) -> None:
    assert gh.raw("PUT", "/orgs/acme/memberships/carol", json={"role": "member"}).status_code == 403
    assert gh.raw("DELETE", "/orgs/acme/members/ben").status_code == 403
    carol = gh.token_for("carol")
    assert gh.raw("PUT", "/orgs/acme/memberships/ben", token=carol).status_code == 404
    assert gh.raw("PATCH", "/user/memberships/orgs/acme", token=carol, json={"state": "active"}).status_code == 404
    assert gh.raw("GET", "/user/memberships/orgs/acme", token=carol).status_code == 404


def test_org_remove_member__pygithub(gh: GH) -> None:
    org = gh.as_user("laura").get_organization("acme")
    org.remove_from_members(gh.client.get_user("ben"))
    assert [m.login for m in org.get_members()] == ["ancha-agent", "laura"]


def test_team_membership__add_get_remove(gh: GH, matches_spec: Callable[..., None]) -> None:
    laura = gh.token_for("laura")
    path = "/orgs/acme/teams/backend/memberships/ancha-agent"
    assert gh.raw("GET", path).status_code == 404
    added = gh.raw("PUT", path, token=laura, json={"role": "maintainer"})
    matches_spec("PUT", "/orgs/{org}/teams/{team_slug}/memberships/{username}", added.json())
    assert added.json() == {"url": added.json()["url"], "role": "maintainer", "state": "active"}
    assert _perms(gh, gh.token)["maintain"] is True  # type: ignore[index]  # Backend maintains orders
    got = gh.raw("GET", path)
    matches_spec("GET", "/orgs/{org}/teams/{team_slug}/memberships/{username}", got.json())
    assert gh.raw("DELETE", path).status_code == 204  # a maintainer manages the team, themself too
    assert _perms(gh, gh.token)["maintain"] is False  # type: ignore[index]
    assert gh.raw("PUT", path, json={"role": "member"}).status_code == 403


def test_team_membership__outsider_is_invited_to_the_org(gh: GH) -> None:
    laura, carol = gh.token_for("laura"), gh.token_for("carol")
    added = gh.raw("PUT", "/orgs/acme/teams/backend/memberships/carol", token=laura).json()
    assert added["state"] == "pending" and _perms(gh, carol) is None
    gh.raw("PATCH", "/user/memberships/orgs/acme", token=carol, json={"state": "active"})
    assert _perms(gh, carol)["maintain"] is True  # type: ignore[index]


def test_team_repos__check_add_remove(gh: GH, matches_spec: Callable[..., None]) -> None:
    laura, ben = gh.token_for("laura"), gh.token_for("ben")
    team = gh.as_user("laura").get_organization("acme").get_team_by_slug("backend")
    repo = gh.client.get_repo("acme/orders")
    assert team.has_in_repos(repo)
    full = gh.raw("GET", "/orgs/acme/teams/backend/repos/acme/orders", token=laura,
                  headers={"Accept": "application/vnd.github.v3.repository+json"})
    matches_spec("GET", "/orgs/{org}/teams/{team_slug}/repos/{owner}/{repo}", full.json())
    assert full.json()["permissions"]["maintain"] is True
    assert gh.raw("PUT", "/orgs/acme/teams/backend/repos/acme/orders", token=laura,
                  json={"permission": "admin"}).status_code == 204
    assert _perms(gh, ben)["admin"] is True  # type: ignore[index]
    assert gh.raw("PUT", "/orgs/acme/teams/backend/repos/acme/orders", token=laura,
                  json={"permission": "owner"}).status_code == 422
    team.remove_from_repos(repo)
    assert not team.has_in_repos(repo)
    assert _perms(gh, ben) == {"admin": False, "maintain": False, "push": False, "triage": False, "pull": True}
    assert gh.raw("PUT", "/orgs/acme/teams/backend/repos/laura/notes", token=laura).status_code == 422
    assert gh.raw("PUT", "/orgs/acme/teams/backend/repos/acme/many", token=ben).status_code == 403
