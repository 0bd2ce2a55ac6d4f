"""Comments, labels, milestones, issue events and the timeline."""

from __future__ import annotations

import pytest
from github import GithubException, UnknownObjectException

# --- comments -----------------------------------------------------------------------------------


def test_create_comment__pygithub_and_list(gh, matches_spec):
    issue = gh.client.get_repo("acme/orders").get_issue(1)
    comment = issue.create_comment("Fixed in #3")
    assert comment.user.login == "ancha-agent"
    assert comment.body == "Fixed in #3"
    assert [c.body for c in issue.get_comments()] == ["Looking into it", "Fixed in #3"]
    body = gh.raw("GET", f"/repos/acme/orders/issues/comments/{comment.id}").json()
    matches_spec("GET", "/repos/{owner}/{repo}/issues/comments/{comment_id}", body)
    assert body["html_url"].endswith(f"/acme/orders/issues/1#issuecomment-{comment.id}")
    assert gh.client.get_repo("acme/orders").get_issue(1).comments == 2


def test_create_comment__githubkit_edit_and_delete(gh):
    comment = gh.kit.rest.issues.create_comment("acme", "orders", 1, body="first").parsed_data
    edited = gh.kit.rest.issues.update_comment("acme", "orders", comment.id, body="second").parsed_data
    assert edited.body == "second"
    gh.kit.rest.issues.delete_comment("acme", "orders", comment.id)
    assert gh.raw("GET", f"/repos/acme/orders/issues/comments/{comment.id}").status_code == 404


def test_create_comment__body_missing(gh):
    answer = gh.raw("POST", "/repos/acme/orders/issues/1/comments", json={})
    assert answer.status_code == 422
    assert answer.json()["message"] == "Invalid request.\n\n\"body\" wasn't supplied."


def test_update_comment__someone_elses_needs_push(gh):
    mine = gh.as_user("carol").get_repo("laura/notes").get_issue(1).create_comment("hi")
    with pytest.raises(GithubException) as caught:
        gh.client.get_repo("laura/notes").get_issue(1).get_comment(mine.id).edit("edited by the agent")
    assert caught.value.status == 403
    assert gh.as_user("laura").get_repo("laura/notes").get_issue(1).get_comment(mine.id).body == "hi"


def test_list_comments__for_repo_sorted_and_since(gh):
    repo = gh.client.get_repo("acme/orders")
    repo.get_issue(3).create_comment("on the pull")
    bodies = [c.body for c in repo.get_issues_comments()]
    assert bodies == ["Looking into it", "on the pull"]
    newest = gh.raw("GET", "/repos/acme/orders/issues/comments?sort=created&direction=desc").json()
    assert newest[0]["body"] == "on the pull"
    assert gh.raw("GET", "/repos/acme/orders/issues/comments?since=2026-03-02T09:00:00Z").json()[0]["body"] == \
        "on the pull"


def test_create_comment__locked_issue_refuses_readers(gh):
    laura = gh.as_user("laura")
    laura.get_repo("laura/notes").get_issue(1).lock("resolved")
    with pytest.raises(GithubException) as caught:
        gh.client.get_repo("laura/notes").get_issue(1).create_comment("me too")
    assert caught.value.status == 403
    assert caught.value.data["message"] == "Unable to create comment because issue is locked."


# --- labels ---------------------------------------------------------------------------------------


def test_labels__crud(gh, matches_spec):
    repo = gh.client.get_repo("acme/orders")
    label = repo.create_label("regression", "FBCA04", "Worked before")
    assert (label.name, label.color, label.description) == ("regression", "fbca04", "Worked before")
    matches_spec("POST", "/repos/{owner}/{repo}/labels", gh.raw("GET", "/repos/acme/orders/labels/regression").json(),
                 201)
    label.edit("regressed", "000000", "Broke again")
    assert repo.get_label("regressed").color == "000000"
    with pytest.raises(UnknownObjectException):
        repo.get_label("regression")
    repo.get_label("regressed").delete()
    assert "regressed" not in [x.name for x in repo.get_labels()]


def test_labels__slash_in_name(gh):
    label = gh.client.get_repo("acme/orders").get_label("area/ui")
    assert label.color == "0e8a16"


def test_create_label__already_exists_and_bad_color(gh):
    answer = gh.raw("POST", "/repos/acme/orders/labels", json={"name": "BUG"})
    assert answer.status_code == 422
    assert answer.json()["errors"] == [{"resource": "Label", "code": "already_exists", "field": "name"}]
    bad = gh.raw("POST", "/repos/acme/orders/labels", json={"name": "x", "color": "red"})
    assert bad.json()["errors"] == [{"resource": "Label", "code": "invalid", "field": "color"}]


def test_create_label__reader_gets_403(gh):
    answer = gh.raw("POST", "/repos/laura/notes/labels", json={"name": "x"})
    assert answer.status_code == 403
    assert answer.json()["message"] == "Must have push access to repository."


def test_issue_labels__add_set_remove(gh):
    issue = gh.client.get_repo("acme/orders").get_issue(1)
    issue.add_to_labels("p1")
    assert sorted(x.name for x in issue.get_labels()) == ["bug", "p1"]
    issue.remove_from_labels("bug")
    assert [x.name for x in issue.get_labels()] == ["p1"]
    issue.set_labels("area/ui", "bug")
    assert sorted(x.name for x in issue.get_labels()) == ["area/ui", "bug"]
    issue.delete_labels()
    assert list(issue.get_labels()) == []
    missing = gh.raw("DELETE", "/repos/acme/orders/issues/1/labels/p1")
    assert missing.status_code == 404 and missing.json()["message"] == "Label does not exist"


def test_issue_labels__githubkit_add(gh):
    labels = gh.kit.rest.issues.add_labels("acme", "orders", 3, data={"labels": ["p1"]}).parsed_data
    assert [x.name for x in labels] == ["p1"]
    array = gh.raw("POST", "/repos/acme/orders/issues/3/labels", json=["bug"])
    assert sorted(x["name"] for x in array.json()) == ["bug", "p1"]


# --- milestones -------------------------------------------------------------------------------------


def test_milestones__crud_and_counts(gh, matches_spec):
    repo = gh.client.get_repo("acme/orders")
    first = repo.get_milestone(1)
    assert (first.open_issues, first.closed_issues) == (1, 0)
    made = repo.create_milestone("v2.0", description="Next")
    assert made.number == 2
    matches_spec("GET", "/repos/{owner}/{repo}/milestones/{milestone_number}",
                 gh.raw("GET", "/repos/acme/orders/milestones/2").json())
    made.edit("v2.0", state="closed")
    assert [m.title for m in repo.get_milestones(state="closed")] == ["v2.0"]
    assert [m.title for m in repo.get_milestones()] == ["v1.0"]
    made.delete()
    assert gh.raw("GET", "/repos/acme/orders/milestones/2").status_code == 404
    dup = gh.raw("POST", "/repos/acme/orders/milestones", json={"title": "v1.0"})
    assert dup.json()["errors"] == [{"resource": "Milestone", "code": "already_exists", "field": "title"}]


# --- events and the timeline ---------------------------------------------------------------------


def test_issue_events__close_and_label_are_logged(gh, matches_spec):
    repo = gh.client.get_repo("acme/orders")
    issue = repo.get_issue(1)
    issue.add_to_labels("p1")
    issue.edit(state="closed")
    events = [(e.event, e.actor.login) for e in issue.get_events()]
    assert events == [("labeled", "ancha-agent"), ("closed", "ancha-agent")]
    body = gh.raw("GET", "/repos/acme/orders/issues/1/events").json()
    assert body[0]["label"] == {"name": "p1", "color": "ededed"}
    repo_events = gh.raw("GET", "/repos/acme/orders/issues/events").json()
    assert [e["event"] for e in repo_events] == ["closed", "labeled"]
    assert repo_events[0]["issue"]["number"] == 1
    matches_spec("GET", "/repos/{owner}/{repo}/issues/events/{event_id}",
                 gh.raw("GET", f"/repos/acme/orders/issues/events/{repo_events[0]['id']}").json())


def test_timeline__comments_and_events_in_order(gh):
    issue = gh.client.get_repo("acme/orders").get_issue(1)
    issue.create_comment("on it")
    issue.edit(state="closed")
    kinds = [e.event for e in issue.get_timeline()]
    assert kinds == ["commented", "commented", "closed"]
