"""Users, organizations, teams, repositories and collaborators."""

from __future__ import annotations

import pytest
from github import GithubException, UnknownObjectException


def test_get_authenticated_user__is_the_agent(gh, matches_spec):
    me = gh.client.get_user()
    assert me.login == "ancha-agent"
    matches_spec("GET", "/user", gh.raw("GET", "/user").json())
    assert gh.kit.rest.users.get_authenticated().parsed_data.login == "ancha-agent"


def test_get_user__by_login_and_unknown(gh, matches_spec):
    laura = gh.client.get_user("laura")
    assert (laura.name, laura.email, laura.public_repos) == ("Laura Diaz", "laura@acme.test", 1)
    matches_spec("GET", "/users/{username}", gh.raw("GET", "/users/laura").json())
    with pytest.raises(UnknownObjectException):
        gh.client.get_user("nobody-at-all")
    assert gh.raw("GET", "/users/acme").json()["type"] == "Organization"


def test_org__get_members_teams(gh, matches_spec):
    org = gh.client.get_organization("acme")
    assert org.login == "acme"
    matches_spec("GET", "/orgs/{org}", gh.raw("GET", "/orgs/acme").json())
    assert sorted(m.login for m in org.get_members()) == ["ancha-agent", "ben", "laura"]
    assert [m.login for m in org.get_members(role="admin")] == ["laura"]
    assert org.has_in_members(gh.client.get_user("ben"))
    team = org.get_team_by_slug("backend")
    assert team.name == "Backend"
    assert [m.login for m in team.get_members()] == ["ben"]
    assert [r.full_name for r in team.get_repos()] == ["acme/orders"]
    assert [o.login for o in gh.client.get_user().get_orgs()] == ["acme"]
    assert gh.raw("GET", "/orgs/nope").status_code == 404


def test_get_repo__full_shape_with_permissions(gh, matches_spec):
    body = gh.raw("GET", "/repos/acme/orders").json()
    matches_spec("GET", "/repos/{owner}/{repo}", body)
    assert body["permissions"] == {"admin": False, "maintain": False, "push": True, "triage": True, "pull": True}
    assert body["owner"]["type"] == "Organization" and body["organization"]["login"] == "acme"
    assert body["open_issues_count"] == 2
    assert body["clone_url"] == f"{gh.url}/acme/orders.git"
    kit = gh.kit.rest.repos.get("acme", "orders").parsed_data
    assert kit.default_branch == "main" and kit.private is True


def test_get_repo__case_insensitive_names(gh):
    assert gh.client.get_repo("ACME/Orders").full_name == "acme/orders"


def test_list_repos__authenticated_user_and_org_and_user(gh):
    mine = [r.full_name for r in gh.client.get_user().get_repos()]
    assert mine == ["acme/many", "acme/orders"]  # org member + collaborator; laura's private vault is hidden
    assert [r.full_name for r in gh.client.get_organization("acme").get_repos()] == ["acme/many", "acme/orders"]
    assert [r.full_name for r in gh.client.get_user("laura").get_repos()] == ["laura/notes"]
    assert gh.raw("GET", "/user/repos?type=owner&visibility=all").status_code == 422


def test_create_repo__for_user_and_org(gh, matches_spec):
    repo = gh.client.get_user().create_repo("scratch", description="tmp", private=True, auto_init=True)
    assert repo.full_name == "ancha-agent/scratch" and repo.private
    body = gh.raw("GET", "/repos/ancha-agent/scratch").json()
    matches_spec("POST", "/user/repos", body, 201)
    assert body["permissions"]["admin"] is True
    assert "bug" in [x.name for x in repo.get_labels()]
    org_repo = gh.client.get_organization("acme").create_repo("tools")
    assert org_repo.owner.login == "acme"
    again = gh.raw("POST", "/user/repos", json={"name": "scratch"})
    assert again.status_code == 422
    assert again.json()["errors"][0]["message"] == "name already exists on this account"


def test_create_repo__githubkit_and_bad_name(gh):
    made = gh.kit.rest.repos.create_for_authenticated_user(name="kit-made").parsed_data
    assert made.name == "kit-made"
    assert gh.raw("POST", "/user/repos", json={"name": "bad name!"}).status_code == 422
    assert gh.raw("POST", "/user/repos", json={}).json()["errors"] == [
        {"resource": "Repository", "code": "missing_field", "field": "name"}]


def test_update_repo__needs_admin(gh):
    with pytest.raises(GithubException) as caught:
        gh.client.get_repo("acme/orders").edit(description="mine")
    assert caught.value.status == 403
    assert caught.value.data["message"] == "Must have admin rights to Repository."


def test_update_repo__rename_and_settings(gh):
    laura = gh.as_user("laura")
    repo = laura.get_repo("laura/notes")
    repo.edit(name="journal", description="Renamed", has_wiki=False)
    renamed = laura.get_repo("laura/journal")
    assert (renamed.description, renamed.has_wiki) == ("Renamed", False)
    assert laura.get_repo("laura/journal").get_issue(1).title == "Read me"
    assert gh.raw("GET", "/repos/laura/notes").status_code == 301  # the old name redirects (test_renamed_repos)


def test_delete_repo__admin_only(gh):
    assert gh.raw("DELETE", "/repos/acme/orders").status_code == 403
    gh.as_user("laura").get_repo("laura/vault").delete()
    assert gh.raw("GET", "/repos/laura/vault", token=gh.token_for("laura")).status_code == 404


def test_topics__replace_and_read(gh):
    repo = gh.as_user("laura").get_repo("laura/notes")
    repo.replace_topics(["notes", "personal"])
    assert gh.client.get_repo("laura/notes").get_topics() == ["notes", "personal"]


def test_collaborators__list_check_permission(gh, matches_spec):
    repo = gh.client.get_repo("acme/orders")
    people = {c.login: c.role_name for c in repo.get_collaborators()}
    assert people == {"laura": "admin", "ben": "maintain", "ancha-agent": "write"}
    assert repo.has_in_collaborators("ben") and not repo.has_in_collaborators("carol")
    assert repo.get_collaborator_permission("ben") == "write"  # GitHub's legacy name for maintain
    body = gh.raw("GET", "/repos/acme/orders/collaborators/carol/permission").json()
    matches_spec("GET", "/repos/{owner}/{repo}/collaborators/{username}/permission", body)
    assert body["permission"] == "none"


def test_collaborators__reader_cannot_list(gh):
    answer = gh.raw("GET", "/repos/laura/notes/collaborators")
    assert answer.status_code == 403
    assert answer.json()["message"] == "Must have push access to view repository collaborators."


def test_collaborators__add_and_remove(gh):
    laura = gh.as_user("laura")
    repo = laura.get_repo("laura/vault")
    repo.add_to_collaborators("carol", permission="triage")
    carol = gh.as_user("carol")
    with pytest.raises(UnknownObjectException):  # invited, not yet a collaborator
        carol.get_repo("laura/vault")
    [invitation] = carol.get_user().get_invitations()
    carol.get_user().accept_invitation(invitation)
    assert carol.get_repo("laura/vault").permissions.triage is True
    repo.remove_from_collaborators("carol")
    with pytest.raises(UnknownObjectException):
        gh.as_user("carol").get_repo("laura/vault")
    bad = gh.raw("PUT", "/repos/laura/vault/collaborators/carol", token=gh.token_for("laura"),
                 json={"permission": "owner"})
    assert bad.status_code == 422


def test_githubkit__orgs_teams_collaborators_milestones(gh):
    kit = gh.kit.rest
    assert kit.orgs.get("acme").parsed_data.login == "acme"
    assert [m.login for m in kit.orgs.list_members("acme", role="admin").parsed_data] == ["laura"]
    assert kit.teams.get_by_name("acme", "backend").parsed_data.members_count == 1
    assert kit.repos.get_collaborator_permission_level("acme", "orders", "ben").parsed_data.role_name == "maintain"
    assert {c.login for c in kit.repos.list_collaborators("acme", "orders").parsed_data} == {
        "laura", "ben", "ancha-agent"}
    made = kit.issues.create_milestone("acme", "orders", title="v3", due_on="2026-04-01T00:00:00Z").parsed_data
    assert made.due_on is not None and made.due_on.isoformat().startswith("2026-04-01")
    assert [m.title for m in kit.issues.list_milestones("acme", "orders", sort="due_on").parsed_data] == [
        "v3", "v1.0"]
    assert [r.full_name for r in kit.repos.list_for_org("acme", sort="full_name", direction="asc").parsed_data] == [
        "acme/many", "acme/orders"]
