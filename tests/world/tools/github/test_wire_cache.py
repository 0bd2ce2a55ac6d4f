"""Cached wire texts never go stale: after each kind of write, list, get and search answers
are byte-identical to the issue (or comment) serialized afresh from the model's ``to_dict``.

Each test reads first (so the caches are warm), writes through the API, then compares.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from ancha.world.tools.github.models import Issue, Milestone, Repo
from ancha.world.tools.github.models.wire import dumps

ALL = "state=all&per_page=100"
SLOW = "&since=1970-01-01T00:00:00Z"  # a filter that drops nothing but takes the general (unindexed) path


def _repo(gh: Any, full_name: str) -> Repo:
    owner, _, name = full_name.partition("/")
    repo = gh.replica.state.repo(owner, name)
    assert repo is not None
    return repo


def _fresh_issue(gh: Any, full_name: str, number: int, *, single: bool = False) -> bytes:
    issue: Issue = _repo(gh, full_name).issues[number]
    return dumps(issue.to_dict(gh.replica.base_url, single=single)).encode()


def assert_fresh(gh: Any, full_name: str = "acme/orders", query: str = ALL) -> list[int]:
    """List (indexed and general paths) and get of every listed issue match a fresh serialization."""
    answer = gh.raw("GET", f"/repos/{full_name}/issues?{query}")
    assert answer.status_code == 200, answer.text
    numbers = [item["number"] for item in answer.json()]
    repo = _repo(gh, full_name)
    base = gh.replica.base_url
    assert answer.content == dumps([repo.issues[n].to_dict(base) for n in numbers]).encode()
    general = gh.raw("GET", f"/repos/{full_name}/issues?{query}{SLOW}")
    assert general.content == answer.content
    for n in numbers:
        single = gh.raw("GET", f"/repos/{full_name}/issues/{n}")
        assert single.content == _fresh_issue(gh, full_name, n, single=True)
    return numbers


def assert_fresh_comments(gh: Any, full_name: str, number: int) -> None:
    repo = _repo(gh, full_name)
    base = gh.replica.base_url
    listed = gh.raw("GET", f"/repos/{full_name}/issues/{number}/comments")
    comments = repo.issues[number].comments
    assert listed.content == dumps([c.to_dict(base) for c in comments]).encode()
    every = gh.raw("GET", f"/repos/{full_name}/issues/comments")
    ids = [item["id"] for item in every.json()]
    by_id = {c.id: c for issue in repo.issues.values() for c in issue.comments}
    assert every.content == dumps([by_id[i].to_dict(base) for i in ids]).encode()
    for comment in comments:
        one = gh.raw("GET", f"/repos/{full_name}/issues/comments/{comment.id}")
        assert one.content == dumps(comment.to_dict(base)).encode()


def assert_fresh_search(gh: Any, q: str) -> None:
    answer = gh.raw("GET", "/search/issues", params={"q": q})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    base = gh.replica.base_url
    items = []
    for item in body["items"]:
        full_name = item["repository_url"].split("/repos/", 1)[1]
        fresh = {**_repo(gh, full_name).issues[item["number"]].to_dict(base), "score": 1.0}
        if fresh["body"] is None:
            del fresh["body"]
        items.append(fresh)
    assert answer.content == dumps({**body, "items": items}).encode()


# --- writes to the issue itself ---------------------------------------------------------------------


def test_wire_cache__edit_title_and_body(gh):
    assert_fresh(gh)
    gh.raw("PATCH", "/repos/acme/orders/issues/1", json={"title": "Exports gone", "body": "Still gone"})
    assert_fresh(gh)
    assert gh.raw("GET", "/repos/acme/orders/issues/1").json()["title"] == "Exports gone"


def test_wire_cache__close_reopen_and_reason(gh):
    assert_fresh(gh)
    assert_fresh(gh, query="per_page=100")
    gh.raw("PATCH", "/repos/acme/orders/issues/1", json={"state": "closed", "state_reason": "not_planned"})
    assert 1 not in assert_fresh(gh, query="per_page=100")
    assert 1 in assert_fresh(gh, query="state=closed")
    assert_fresh(gh)
    gh.raw("PATCH", "/repos/acme/orders/issues/1", json={"state": "open"})
    assert 1 in assert_fresh(gh, query="per_page=100")
    assert_fresh(gh, query="state=all&direction=asc")


def test_wire_cache__labels_added_removed_replaced(gh):
    assert_fresh(gh)
    gh.raw("POST", "/repos/acme/orders/issues/1/labels", json={"labels": ["p1", "brand-new"]})
    assert_fresh(gh)
    gh.raw("DELETE", "/repos/acme/orders/issues/1/labels/bug")
    assert_fresh(gh)
    gh.raw("PUT", "/repos/acme/orders/issues/1/labels", json={"labels": ["area/ui"]})
    assert_fresh(gh)
    assert [label["name"] for label in gh.raw("GET", "/repos/acme/orders/issues/1").json()["labels"]] == ["area/ui"]


def test_wire_cache__assignees(gh):
    assert_fresh(gh)
    gh.raw("POST", "/repos/acme/orders/issues/1/assignees", json={"assignees": ["ancha-agent"]})
    assert_fresh(gh)
    gh.raw("DELETE", "/repos/acme/orders/issues/1/assignees", json={"assignees": ["ben"]})
    assert_fresh(gh)
    assert gh.raw("GET", "/repos/acme/orders/issues/1").json()["assignee"]["login"] == "ancha-agent"


def test_wire_cache__lock_and_unlock(gh):
    assert_fresh(gh)
    gh.raw("PUT", "/repos/acme/orders/issues/1/lock", json={"lock_reason": "resolved"})
    assert_fresh(gh)
    gh.raw("DELETE", "/repos/acme/orders/issues/1/lock")
    assert_fresh(gh)


def test_wire_cache__comment_count_and_comment_edits(gh):
    assert_fresh(gh)
    assert_fresh_comments(gh, "acme/orders", 1)
    made = gh.raw("POST", "/repos/acme/orders/issues/1/comments", json={"body": "on it"}).json()
    assert_fresh(gh)
    assert_fresh_comments(gh, "acme/orders", 1)
    gh.raw("PATCH", f"/repos/acme/orders/issues/comments/{made['id']}", json={"body": "done"})
    assert_fresh_comments(gh, "acme/orders", 1)
    gh.raw("DELETE", f"/repos/acme/orders/issues/comments/{made['id']}")
    assert_fresh(gh)
    assert_fresh_comments(gh, "acme/orders", 1)
    assert gh.raw("GET", "/repos/acme/orders/issues/1").json()["comments"] == 1


def test_wire_cache__new_issue_joins_the_list(gh):
    before = assert_fresh(gh, query="per_page=100")
    made = gh.raw("POST", "/repos/acme/orders/issues", json={"title": "New", "milestone": 1}).json()
    after = assert_fresh(gh, query="per_page=100")
    assert after == [made["number"], *before]
    assert_fresh(gh)


# --- writes to what an issue embeds -------------------------------------------------------------


def test_wire_cache__label_renamed_recolored_deleted(gh):
    assert_fresh(gh)
    laura = gh.token_for("laura")
    gh.raw("PATCH", "/repos/acme/orders/labels/bug", token=laura,
           json={"new_name": "defect", "color": "000000", "description": "broken"})
    assert_fresh(gh)
    label = gh.raw("GET", "/repos/acme/orders/issues/1").json()["labels"][0]
    assert (label["name"], label["color"], label["description"]) == ("defect", "000000", "broken")
    assert label["url"].endswith("/labels/defect")
    gh.raw("DELETE", "/repos/acme/orders/labels/defect", token=laura)
    assert_fresh(gh)
    assert gh.raw("GET", "/repos/acme/orders/issues/1").json()["labels"] == []


def test_wire_cache__milestone_set_edited_counted_deleted(gh):
    assert_fresh(gh)
    gh.raw("PATCH", "/repos/acme/orders/issues/2", json={"milestone": 1})
    assert_fresh(gh)
    assert gh.raw("GET", "/repos/acme/orders/issues/1").json()["milestone"]["closed_issues"] == 1
    gh.raw("PATCH", "/repos/acme/orders/issues/2", json={"state": "open"})  # issue 1's milestone counts move
    assert_fresh(gh)
    assert gh.raw("GET", "/repos/acme/orders/issues/1").json()["milestone"]["open_issues"] == 2
    laura = gh.token_for("laura")
    gh.raw("PATCH", "/repos/acme/orders/milestones/1", token=laura, json={"title": "v1.1", "state": "closed"})
    assert_fresh(gh)
    assert gh.raw("GET", "/repos/acme/orders/issues/1").json()["milestone"]["title"] == "v1.1"
    gh.raw("PATCH", "/repos/acme/orders/issues/1", json={"milestone": None})
    assert_fresh(gh)
    gh.raw("DELETE", "/repos/acme/orders/milestones/1", token=laura)
    assert_fresh(gh)
    assert gh.raw("GET", "/repos/acme/orders/issues/2").json()["milestone"] is None


def test_wire_cache__author_association_follows_collaborators(gh):
    assert_fresh(gh, "acme/many")
    assert gh.raw("GET", "/repos/acme/many/issues/1").json()["author_association"] == "NONE"
    invited = gh.raw("PUT", "/repos/acme/many/collaborators/carol", token=gh.token_for("laura"),
                     json={"permission": "push"}).json()
    assert gh.raw("GET", "/repos/acme/many/issues/1").json()["author_association"] == "NONE"  # until accepted
    gh.raw("PATCH", f"/user/repository_invitations/{invited['id']}", token=gh.token_for("carol"))
    assert_fresh(gh, "acme/many")
    assert gh.raw("GET", "/repos/acme/many/issues/1").json()["author_association"] == "COLLABORATOR"


def test_wire_cache__repository_renamed(gh):
    assert_fresh(gh)
    answer = gh.raw("PATCH", "/repos/acme/orders", token=gh.token_for("laura"), json={"name": "orders-api"})
    assert answer.status_code == 200, answer.text
    numbers = assert_fresh(gh, "acme/orders-api")
    assert numbers
    assert gh.raw("GET", "/repos/acme/orders-api/issues/1").json()["url"].endswith("/repos/acme/orders-api/issues/1")


def test_wire_cache__pull_merged_shows_in_the_issue_list(gh):
    assert_fresh(gh)
    answer = gh.raw("PUT", "/repos/acme/orders/pulls/3/merge", json={})
    assert answer.status_code == 200, answer.text
    assert_fresh(gh)
    assert gh.raw("GET", "/repos/acme/orders/issues/3").json()["pull_request"]["merged_at"] is not None


def test_wire_cache__reaction_on_an_issue(gh):
    assert_fresh(gh)
    made = gh.raw("POST", "/repos/acme/orders/issues/1/reactions", json={"content": "heart"})
    assert made.status_code == 201, made.text
    assert_fresh(gh)
    assert gh.raw("GET", "/repos/acme/orders/issues/1").json()["reactions"]["heart"] == 1
    gh.raw("DELETE", f"/repos/acme/orders/issues/1/reactions/{made.json()['id']}")
    assert_fresh(gh)
    assert gh.raw("GET", "/repos/acme/orders/issues/1").json()["reactions"]["total_count"] == 0


def test_wire_cache__reaction_on_a_comment(gh):
    assert_fresh(gh)
    comment = _repo(gh, "acme/orders").issues[1].comments[0]
    assert_fresh_comments(gh, "acme/orders", 1)
    made = gh.raw("POST", f"/repos/acme/orders/issues/comments/{comment.id}/reactions", json={"content": "eyes"})
    assert made.status_code == 201, made.text
    assert_fresh_comments(gh, "acme/orders", 1)
    assert gh.raw("GET", f"/repos/acme/orders/issues/comments/{comment.id}").json()["reactions"]["eyes"] == 1


# --- other answers that splice cached texts ---------------------------------------------------------


def test_wire_cache__search_and_your_issues(gh):
    assert_fresh_search(gh, "repo:acme/orders")
    gh.raw("PATCH", "/repos/acme/orders/issues/1", json={"title": "Exports vanished", "labels": ["p1"]})
    gh.raw("POST", "/repos/acme/orders/issues", json={"title": "No body here"})
    assert_fresh_search(gh, "repo:acme/orders")
    assert_fresh_search(gh, "repo:acme/orders is:open sort:created")
    answer = gh.raw("GET", "/issues", params={"filter": "all", "state": "all"})
    repos = {r.full_name: r for r in gh.replica.state.repos.values()}
    base, agent = gh.replica.base_url, gh.replica.agent
    items = []
    for item in answer.json():
        repo = repos[item["repository"]["full_name"]]
        items.append({**repo.issues[item["number"]].to_dict(base),
                      "repository": repo.to_dict(base, role=gh.replica.state.role(repo, agent))})
    assert items and answer.content == dumps(items).encode()


def test_wire_cache__pages_etags_and_links_unchanged(gh):
    first = gh.raw("GET", "/repos/acme/many/issues?per_page=10&page=2")
    again = gh.raw("GET", "/repos/acme/many/issues?per_page=10&page=2")
    assert again.content == first.content and again.headers["etag"] == first.headers["etag"]
    assert again.headers["link"] == first.headers["link"]
    assert gh.raw("GET", "/repos/acme/many/issues?per_page=10&page=2",
                  headers={"If-None-Match": first.headers["etag"]}).status_code == 304
    numbers = [item["number"] for item in first.json()]
    gh.raw("PATCH", f"/repos/acme/many/issues/{numbers[0]}", json={"title": "changed"},
           token=gh.token_for("carol"))
    changed = gh.raw("GET", "/repos/acme/many/issues?per_page=10&page=2",
                     headers={"If-None-Match": first.headers["etag"]})
    assert changed.status_code == 200 and changed.headers["etag"] != first.headers["etag"]
    assert json.loads(changed.content)[0]["title"] == "changed"
    assert_fresh(gh, "acme/many", "per_page=10&page=2")


# --- the model itself: changes made without any route ----------------------------------------------


@pytest.mark.parametrize("change", ["title", "labels_in_place", "state", "label_color", "milestone_counts",
                                    "assignees_in_place", "comments_in_place", "user_login"])
def test_wire_cache__model_changed_directly(gh, change):
    repo = _repo(gh, "acme/orders")
    base = "http://example.test/github"
    issue, other = repo.issues[1], repo.issues[2]
    milestone: Milestone | None = issue.milestone
    assert milestone is not None
    for i in (issue, other):
        assert i.wire(base) == dumps(i.to_dict(base))
        assert i.wire(base, single=True) == dumps(i.to_dict(base, single=True))
    members = [i for i in repo.issues.values() if i.milestone is milestone]
    open_count = sum(1 for i in members if i.state == "open")
    assert milestone.counts() == (open_count, len(members) - open_count)  # counted afresh, not kept stale
    milestone.counts()
    if change == "title":
        issue.title = "Renamed directly"
    elif change == "labels_in_place":
        issue.labels.append(repo.labels["p1"])
    elif change == "state":
        issue.state = "closed"
    elif change == "label_color":
        repo.labels["bug"].color = "123456"
    elif change == "milestone_counts":
        other.milestone = milestone  # issue 1 shows the milestone's counts: they move
    elif change == "assignees_in_place":
        issue.assignees.append(gh.replica.agent)
    elif change == "comments_in_place":
        issue.comments.pop()
    elif change == "user_login":
        issue.user.login = "laura-renamed"
    for i in (issue, other):
        assert i.wire(base) == dumps(i.to_dict(base))
        assert i.wire(base, single=True) == dumps(i.to_dict(base, single=True))
    members = [i for i in repo.issues.values() if i.milestone is milestone]
    open_count = sum(1 for i in members if i.state == "open")
    assert milestone.counts() == (open_count, len(members) - open_count)  # counted afresh, not kept stale
