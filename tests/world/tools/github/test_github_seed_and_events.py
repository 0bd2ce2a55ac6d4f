"""The seed (refs, times, determinism, the state snapshot) and the domain events writes publish."""

from __future__ import annotations

from datetime import datetime

import pytest

from ancha.world.tools.github.events import EVENT_TYPES
from ancha.world.tools.github.scene_file import GitHubFile


@pytest.fixture
def published(gh):
    seen = []
    gh.replica.world.bus.subscribe("*", lambda event: seen.append(event) if event.type in EVENT_TYPES else None)
    return seen


def test_seed__refs_name_users_repos_issues_pulls_commits(gh):
    refs = gh.replica.world.refs
    assert (refs["gh_laura"].kind, refs["gh_laura"].id) == ("user", "laura")
    assert (refs["github_agent"].kind, refs["github_agent"].id) == ("user", "ancha-agent")
    assert (refs["orders"].kind, refs["orders"].id) == ("repo", "acme/orders")
    assert (refs["export_bug"].kind, refs["export_bug"].id) == ("issue", "acme/orders#1")
    assert (refs["fix_pull"].kind, refs["fix_pull"].id) == ("pull", "acme/orders#3")


def test_seed__undated_items_come_before_the_start_in_order(gh):
    issues = gh.client.get_repo("acme/orders").get_issues(state="all", direction="asc")
    created = [i.created_at for i in issues]
    start = datetime.fromisoformat("2026-03-02T09:00:00+00:00")
    assert created == sorted(created) and all(t < start for t in created)
    comment = gh.client.get_repo("acme/orders").get_issue(1).get_comments()[0]
    assert created[0] < comment.created_at < start


def test_seed__same_trial_same_ids_other_trial_other_ids(make_github):
    first, again, other = make_github(trial=1), make_github(trial=1), make_github(trial=2)
    ids = [g.raw("GET", "/repos/acme/orders/issues/1").json()["id"] for g in (first, again, other)]
    assert ids[0] == ids[1] != ids[2]
    assert first.token != again.token  # tokens never repeat across environments


def test_seed__accepts_the_model_and_user_logins(make_github):
    seed = GitHubFile.model_validate({"users": [{"login": "dana"}],
                                       "repos": [{"name": "dana/site", "issues": [{"title": "t", "author": "dana",
                                                                                   "assignees": ["dana"]}]}]})
    gh = make_github(seed.model_dump(mode="json", by_alias=True))
    issue = gh.client.get_repo("dana/site").get_issue(1)
    assert issue.user.login == "dana" and issue.assignee.login == "dana"


def test_snapshot__holds_repos_issues_and_comments(gh):
    gh.client.get_repo("acme/orders").get_issue(1).create_comment("from the agent")
    state = gh.state()
    orders = next(r for r in state["repos"] if r["full_name"] == "acme/orders")
    issue = next(i for i in orders["issues"] if i["number"] == 1)
    assert issue["ref"] == "export_bug" and issue["seeded"] is True
    assert [(c["body"], c["actor"]) for c in issue["comment_bodies"]] == [("Looking into it", "seed"),
                                                                          ("from the agent", "agent")]
    assert state["agent"] == {"login": "ancha-agent", "ref": "github_agent"}


def test_events__create_issue_publishes_opened_labeled_assigned(gh, published):
    gh.client.get_repo("acme/orders").create_issue("Broken", body="b", labels=["bug"], assignees=["ben"])
    assert [e.type for e in published] == ["issue_opened", "issue_labeled", "issue_assigned"]
    opened = published[0].data
    assert opened == {"repo": "acme/orders", "number": 4, "actor": "agent", "user": "ancha-agent",
                      "is_pull": False, "title": "Broken", "body": "b", "labels": ["bug"], "assignees": ["ben"]}
    assert published[1].data["label"] == "bug" and published[2].data["assignee"] == "ben"
    assert all(e.type in EVENT_TYPES for e in published)


def test_events__close_comment_label_milestone(gh, published):
    repo = gh.client.get_repo("acme/orders")
    issue = repo.get_issue(1)
    issue.create_comment("done")
    issue.remove_from_labels("bug")
    issue.edit(state="closed", state_reason="completed")
    repo.create_label("triaged", "ffffff")
    repo.create_milestone("v9")
    kinds = [e.type for e in published]
    assert kinds == ["issue_comment_created", "issue_unlabeled", "issue_closed", "label_created", "milestone_created"]
    assert published[2].data["state_reason"] == "completed"
    assert published[0].data["body"] == "done"


def test_events__people_act_with_their_actor(gh, published):
    gh.as_user("laura").get_repo("acme/orders").get_issue(1).create_comment("any news?")
    assert published[-1].data["actor"] == "world" and published[-1].data["user"] == "laura"


def test_events__issues_api_on_a_pull_is_flagged(gh, published):
    gh.client.get_repo("acme/orders").get_issue(3).add_to_labels("p1")
    assert published[-1].type == "issue_labeled" and published[-1].data["is_pull"] is True


def test_events__closing_a_pull_through_the_issues_api_publishes_pull_events(gh, published):
    """Issues and Pulls APIs publish the same events for a pull's state (pull_closed, pull_reopened)."""
    for api in ("issues", "pulls"):
        assert gh.raw("PATCH", f"/repos/acme/orders/{api}/3", json={"state": "closed"}).status_code == 200
        assert gh.raw("PATCH", f"/repos/acme/orders/{api}/3", json={"state": "open"}).status_code == 200
    kinds = [(e.type, e.data.get("merged")) for e in published]
    assert kinds == [("pull_closed", False), ("pull_reopened", None)] * 2
    assert all(e.data["is_pull"] is True and e.data["number"] == 3 for e in published)
