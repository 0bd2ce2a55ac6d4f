"""Issues through PyGithub and githubkit: list, get, create, update, lock, assignees."""

from __future__ import annotations

import pytest
from github import GithubException, UnknownObjectException
from githubkit.exception import RequestFailed


def test_list_issues__open_by_default_and_pulls_included(gh, matches_spec):
    repo = gh.client.get_repo("acme/orders")
    issues = list(repo.get_issues())
    assert [i.number for i in issues] == [3, 1]  # newest first; #2 is closed; #3 is the pull
    assert issues[0].pull_request is not None
    body = gh.raw("GET", "/repos/acme/orders/issues").json()
    matches_spec("GET", "/repos/{owner}/{repo}/issues", body)
    assert "pull_request" in body[0] and "pull_request" not in body[1]


def test_list_issues__filters(gh):
    repo = gh.client.get_repo("acme/orders")
    assert [i.number for i in repo.get_issues(state="closed")] == [2]
    assert [i.number for i in repo.get_issues(state="all", direction="asc")] == [1, 2, 3]
    assert [i.number for i in repo.get_issues(labels=["bug"])] == [1]
    assert [i.number for i in repo.get_issues(assignee="ben")] == [1]
    assert [i.number for i in repo.get_issues(assignee="none")] == [3]
    assert [i.number for i in repo.get_issues(creator="laura")] == [1]
    assert [i.number for i in repo.get_issues(mentioned=gh.client.get_user("ben"))] == [1]
    milestone = repo.get_milestone(1)
    assert [i.number for i in repo.get_issues(milestone=milestone)] == [1]
    assert [i.number for i in repo.get_issues(milestone="none")] == [3]


def test_list_issues__githubkit(gh):
    issues = gh.kit.rest.issues.list_for_repo("acme", "orders", state="all", labels="bug").parsed_data
    assert [i.number for i in issues] == [1]
    assert issues[0].labels[0].name == "bug"


def test_list_issues__unknown_assignee_is_422(gh):
    answer = gh.raw("GET", "/repos/acme/orders/issues?assignee=nobody-here")
    assert answer.status_code == 422
    assert answer.json()["errors"] == [{"value": "nobody-here", "resource": "Issue", "field": "assignee",
                                        "code": "invalid"}]


def test_get_issue__seeded_fields(gh, matches_spec):
    issue = gh.client.get_repo("acme/orders").get_issue(1)
    assert issue.title == "CSV exports are gone"
    assert issue.user.login == "laura"
    assert [a.login for a in issue.assignees] == ["ben"]
    assert issue.milestone.title == "v1.0"
    assert issue.comments == 1
    assert issue.created_at.isoformat().startswith("2026-03-02T0")
    matches_spec("GET", "/repos/{owner}/{repo}/issues/{issue_number}", gh.raw("GET", "/repos/acme/orders/issues/1").json())


def test_get_issue__not_found(gh):
    with pytest.raises(UnknownObjectException):
        gh.client.get_repo("acme/orders").get_issue(99)
    assert gh.raw("GET", "/repos/acme/orders/issues/abc").status_code == 404


def test_create_issue__pygithub_with_labels_assignees_milestone(gh, matches_spec):
    repo = gh.client.get_repo("acme/orders")
    issue = repo.create_issue("Exports 500", body="Stack trace attached", labels=["bug", "p1"], assignees=["ben"],
                              milestone=repo.get_milestone(1))
    assert issue.number == 4  # after the seeded issues and the pull
    assert sorted(label.name for label in issue.labels) == ["bug", "p1"]
    assert issue.assignee.login == "ben"
    assert issue.user.login == "ancha-agent"
    assert issue.milestone.number == 1
    again = repo.get_issue(4)
    assert again.body == "Stack trace attached"
    body = gh.raw("GET", "/repos/acme/orders/issues/4").json()
    matches_spec("POST", "/repos/{owner}/{repo}/issues", body, 201)
    events = [e.event for e in again.get_events()]
    assert events == ["labeled", "labeled", "assigned", "milestoned"]


def test_create_issue__githubkit(gh):
    issue = gh.kit.rest.issues.create("acme", "orders", title="From githubkit", labels=["area/ui"]).parsed_data
    assert issue.title == "From githubkit"
    assert issue.labels[0].name == "area/ui"
    assert gh.kit.rest.issues.get("acme", "orders", issue.number).parsed_data.state == "open"


def test_create_issue__unknown_label_is_created(gh):
    issue = gh.client.get_repo("acme/orders").create_issue("x", labels=["needs-triage"])
    assert [label.name for label in issue.labels] == ["needs-triage"]
    assert gh.client.get_repo("acme/orders").get_label("needs-triage").color == "ededed"


def test_create_issue__title_missing(gh):
    answer = gh.raw("POST", "/repos/acme/orders/issues", json={"body": "no title"})
    assert answer.status_code == 422
    assert answer.json()["message"] == "Invalid request.\n\n\"title\" wasn't supplied."
    empty = gh.raw("POST", "/repos/acme/orders/issues", json={"title": ""})
    assert empty.json()["errors"] == [{"resource": "Issue", "code": "missing_field", "field": "title"}]


def test_create_issue__assignee_not_assignable(gh):
    with pytest.raises(GithubException) as caught:
        gh.client.get_repo("acme/orders").create_issue("x", assignees=["carol"])
    assert caught.value.status == 422
    assert caught.value.data["errors"][0] == {"value": "carol", "resource": "Issue", "field": "assignees",
                                              "code": "invalid"}


def test_create_issue__milestone_not_found(gh):
    answer = gh.raw("POST", "/repos/acme/orders/issues", json={"title": "x", "milestone": 42})
    assert answer.status_code == 422
    assert answer.json()["errors"][0]["field"] == "milestone"


def test_create_issue__private_repo_without_access_is_404(gh):
    with pytest.raises(UnknownObjectException):
        gh.client.get_repo("laura/vault")
    assert gh.raw("POST", "/repos/laura/vault/issues", json={"title": "x"}).status_code == 404


def test_create_issue__reader_cannot_label(gh):
    issue = gh.client.get_repo("laura/notes").create_issue("Typo", labels=["bug"], assignees=["laura"])
    assert issue.labels == [] and issue.assignees == []  # silently dropped without triage, as GitHub does


def test_update_issue__close_with_reason_and_reopen(gh):
    issue = gh.client.get_repo("acme/orders").get_issue(1)
    issue.edit(state="closed", state_reason="not_planned")
    closed = gh.client.get_repo("acme/orders").get_issue(1)
    assert closed.state == "closed" and closed.state_reason == "not_planned"
    assert closed.closed_by.login == "ancha-agent"
    closed.edit(state="open")
    reopened = gh.client.get_repo("acme/orders").get_issue(1)
    assert reopened.state == "open" and reopened.state_reason == "reopened" and reopened.closed_at is None


def test_update_issue__title_labels_assignees_githubkit(gh):
    updated = gh.kit.rest.issues.update("acme", "orders", 1, title="Exports missing", labels=["p1"],
                                        assignees=[]).parsed_data
    assert updated.title == "Exports missing"
    assert [label.name for label in updated.labels] == ["p1"]
    assert updated.assignees == []
    events = [e.event for e in gh.client.get_repo("acme/orders").get_issue(1).get_events()]
    assert events == ["renamed", "unlabeled", "labeled", "unassigned"]


def test_update_issue__bad_state_is_422(gh):
    answer = gh.raw("PATCH", "/repos/acme/orders/issues/1", json={"state": "done"})
    assert answer.status_code == 422
    assert answer.json()["errors"][0]["field"] == "state"


def test_update_issue__stranger_gets_403(gh):
    with pytest.raises(GithubException) as caught:
        gh.as_user("carol").get_repo("laura/notes").get_issue(1).edit(title="mine now")
    assert caught.value.status == 403


def test_update_issue__githubkit_error_status(gh):
    with pytest.raises(RequestFailed) as caught:
        gh.kit.rest.issues.get("acme", "orders", 404)
    assert caught.value.response.status_code == 404


def test_lock_and_unlock(gh):
    issue = gh.client.get_repo("acme/orders").get_issue(1)
    issue.lock("too heated")
    locked = gh.client.get_repo("acme/orders").get_issue(1)
    assert locked.locked and locked.active_lock_reason == "too heated"
    locked.unlock()
    assert gh.client.get_repo("acme/orders").get_issue(1).locked is False
    assert gh.raw("PUT", "/repos/acme/orders/issues/1/lock", json={"lock_reason": "boring"}).status_code == 422


def test_assignees__list_check_add_remove(gh):
    repo = gh.client.get_repo("acme/orders")
    assert sorted(u.login for u in repo.get_assignees()) == ["ancha-agent", "ben", "laura"]
    assert repo.has_in_assignees("ben") and not repo.has_in_assignees("carol")
    issue = repo.get_issue(3)
    issue.add_to_assignees("laura", "carol")  # carol cannot be assigned: ignored
    assert [a.login for a in repo.get_issue(3).assignees] == ["laura"]
    issue.remove_from_assignees("laura")
    assert repo.get_issue(3).assignees == []
    assert gh.raw("GET", "/repos/acme/orders/issues/1/assignees/ben").status_code == 204
    assert gh.raw("GET", "/repos/acme/orders/issues/1/assignees/carol").status_code == 404


def test_list_issues__for_authenticated_user(gh):
    repo = gh.client.get_repo("acme/orders")
    repo.create_issue("Mine", assignees=["ancha-agent"])
    mine = list(gh.client.get_user().get_issues())
    assert [i.title for i in mine] == ["Mine"]
    created = gh.raw("GET", "/issues?filter=created&state=all").json()
    assert [i["title"] for i in created] == ["Mine"]
    assert created[0]["repository"]["full_name"] == "acme/orders"
