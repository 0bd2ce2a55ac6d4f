"""Pull request reviews, review comments and requested reviewers, on the seeded pull
(``acme/orders#3``, Ben's), through PyGithub, githubkit and the raw API."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

GH = Any  # conftest.GH
PULL = "/repos/acme/orders/pulls/3"


@pytest.fixture
def orders(make_github: Callable[..., GH], github_seed: dict[str, Any]) -> GH:
    github_seed["repos"][0]["commits"] = [
        {"branch": "fix-exports", "message": "Bring exports back", "files": {"exports.py": "a = 1\nb = 2\n"}}]
    github_seed["repos"][0]["permissions"]["gh_carol"] = "write"
    return make_github(github_seed)


def test_reviews__create_list_get(orders: GH, matches_spec: Callable[..., None]) -> None:
    answer = orders.raw("POST", f"{PULL}/reviews", json={"event": "APPROVE", "body": "Ship it"})
    assert answer.status_code == 200, answer.text
    matches_spec("POST", "/repos/{owner}/{repo}/pulls/{pull_number}/reviews", answer.json())
    assert answer.json()["state"] == "APPROVED"
    pull = orders.client.get_repo("acme/orders").get_pull(3)
    pull.create_review(body="One nit", event="COMMENT")
    listed = orders.raw("GET", f"{PULL}/reviews").json()
    matches_spec("GET", "/repos/{owner}/{repo}/pulls/{pull_number}/reviews", listed)
    assert [r["state"] for r in listed] == ["APPROVED", "COMMENTED"]
    one = orders.raw("GET", f"{PULL}/reviews/{answer.json()['id']}").json()
    matches_spec("GET", "/repos/{owner}/{repo}/pulls/{pull_number}/reviews/{review_id}", one)
    kit = orders.kit.rest.pulls.list_reviews("acme", "orders", 3).parsed_data
    assert [r.state for r in kit] == ["APPROVED", "COMMENTED"]
    assert orders.raw("POST", f"{PULL}/reviews", json={"event": "LOVE"}).status_code == 422
    assert orders.raw("POST", f"{PULL}/reviews", json={"event": "REQUEST_CHANGES"}).status_code == 422


def test_reviews__own_pull_refused(orders: GH) -> None:
    ben = orders.token_for("ben")
    own = orders.raw("POST", f"{PULL}/reviews", token=ben, json={"event": "APPROVE"})
    assert own.status_code == 422 and own.json()["errors"] == ["Can not approve your own pull request"]
    changes = orders.raw("POST", f"{PULL}/reviews", token=ben, json={"event": "REQUEST_CHANGES", "body": "x"})
    assert changes.json()["errors"] == ["Can not request changes on your own pull request"]


def test_reviews__pending_submit_and_dismiss(orders: GH, matches_spec: Callable[..., None]) -> None:
    pending = orders.raw("POST", f"{PULL}/reviews", json={"body": "Draft thoughts"}).json()
    assert pending["state"] == "PENDING" and "submitted_at" not in pending
    assert orders.raw("GET", f"{PULL}/reviews", token=orders.token_for("carol")).json() == []
    twice = orders.raw("POST", f"{PULL}/reviews", json={"body": "again"})
    assert twice.json()["errors"] == ["User can only have one pending review per pull request"]
    submitted = orders.raw("POST", f"{PULL}/reviews/{pending['id']}/events", json={"event": "REQUEST_CHANGES",
                                                                                 "body": "Fix the tests"})
    assert submitted.status_code == 200, submitted.text
    matches_spec("POST", "/repos/{owner}/{repo}/pulls/{pull_number}/reviews/{review_id}/events", submitted.json())
    assert submitted.json()["state"] == "CHANGES_REQUESTED"
    dismissed = orders.raw("PUT", f"{PULL}/reviews/{pending['id']}/dismissals",
                           token=orders.token_for("laura"), json={"message": "Outdated"})
    assert dismissed.status_code == 200, dismissed.text
    assert dismissed.json()["state"] == "DISMISSED"


def test_review_comments__create_reply_list(orders: GH, matches_spec: Callable[..., None]) -> None:
    head = orders.raw("GET", PULL).json()["head"]["sha"]
    answer = orders.raw("POST", f"{PULL}/comments", json={"body": "Why 2?", "commit_id": head,
                                                          "path": "exports.py", "line": 2})
    assert answer.status_code == 201, answer.text
    matches_spec("POST", "/repos/{owner}/{repo}/pulls/{pull_number}/comments", answer.json(), 201)
    assert "+b = 2" in answer.json()["diff_hunk"]
    reply = orders.raw("POST", f"{PULL}/comments/{answer.json()['id']}/replies", json={"body": "Because"})
    assert reply.status_code == 201 and reply.json()["in_reply_to_id"] == answer.json()["id"]
    matches_spec("POST", "/repos/{owner}/{repo}/pulls/{pull_number}/comments/{comment_id}/replies", reply.json(), 201)
    pull = orders.client.get_repo("acme/orders").get_pull(3)
    commit = orders.client.get_repo("acme/orders").get_commit(head)
    pull.create_review_comment("And here", commit, "exports.py", line=1)
    listed = orders.raw("GET", f"{PULL}/comments").json()
    matches_spec("GET", "/repos/{owner}/{repo}/pulls/{pull_number}/comments", listed)
    assert [c["body"] for c in listed] == ["Why 2?", "Because", "And here"]
    everywhere = orders.raw("GET", "/repos/acme/orders/pulls/comments").json()
    matches_spec("GET", "/repos/{owner}/{repo}/pulls/comments", everywhere)
    off = orders.raw("POST", f"{PULL}/comments", json={"body": "x", "commit_id": head, "path": "README.md",
                                                       "line": 1})
    assert off.status_code == 422
    far = orders.raw("POST", f"{PULL}/comments", json={"body": "x", "commit_id": head, "path": "exports.py",
                                                       "line": 40})
    assert far.status_code == 422
    assert far.json()["errors"][0]["message"] == "pull_request_review_thread.line must be part of the diff"
    got = orders.raw("GET", f"/repos/acme/orders/pulls/comments/{answer.json()['id']}").json()
    matches_spec("GET", "/repos/{owner}/{repo}/pulls/comments/{comment_id}", got)


def test_review_with_comments(orders: GH) -> None:
    answer = orders.raw("POST", f"{PULL}/reviews", json={
        "event": "COMMENT", "body": "See inline", "comments": [{"path": "exports.py", "line": 1, "body": "a?"}]})
    assert answer.status_code == 200, answer.text
    inline = orders.raw("GET", f"{PULL}/reviews/{answer.json()['id']}/comments").json()
    assert [c["body"] for c in inline] == ["a?"] and inline[0]["pull_request_review_id"] == answer.json()["id"]
    assert inline[0]["diff_hunk"] == "@@ -0,0 +1,2 @@\n+a = 1"
    outside = orders.raw("POST", f"{PULL}/reviews", json={
        "event": "COMMENT", "comments": [{"path": "exports.py", "line": 9, "body": "?"}]})
    assert outside.status_code == 422 and outside.json()["errors"] == [
        "Pull request review thread line must be part of the diff and Pull request review thread diff hunk "
        "can't be blank"]
    bare = orders.raw("POST", f"{PULL}/reviews", json={"event": "COMMENT"})
    assert bare.status_code == 422


def test_requested_reviewers__request_list_remove(orders: GH, matches_spec: Callable[..., None]) -> None:
    seen: list[Any] = []
    orders.replica.world.bus.subscribe("review_requested", seen.append)
    pull = orders.client.get_repo("acme/orders").get_pull(3)
    pull.create_review_request(reviewers=["laura"])
    listed = orders.raw("GET", f"{PULL}/requested_reviewers").json()
    matches_spec("GET", "/repos/{owner}/{repo}/pulls/{pull_number}/requested_reviewers", listed)
    assert [u["login"] for u in listed["users"]] == ["laura"]
    assert [e.data["reviewers"] for e in seen] == [["laura"]]
    author = orders.raw("POST", f"{PULL}/requested_reviewers", json={"reviewers": ["ben"]})
    assert author.status_code == 422
    assert author.json()["errors"] == ["Review cannot be requested from pull request author."]
    laura = orders.as_user("laura")
    laura.get_repo("acme/orders").get_pull(3).create_review(body="ok", event="APPROVE")
    assert orders.raw("GET", f"{PULL}/requested_reviewers").json()["users"] == []  # reviewing answers the request
    requested = orders.raw("POST", f"{PULL}/requested_reviewers", json={"reviewers": ["carol"]})
    matches_spec("POST", "/repos/{owner}/{repo}/pulls/{pull_number}/requested_reviewers", requested.json(), 201)
    orders.raw("DELETE", f"{PULL}/requested_reviewers", json={"reviewers": ["carol"]})
    orders.kit.rest.pulls.request_reviewers("acme", "orders", 3, data={"reviewers": ["carol"]})
    removed = orders.raw("DELETE", f"{PULL}/requested_reviewers", json={"reviewers": ["carol"]})
    assert removed.status_code == 200 and removed.json()["requested_reviewers"] == []


def test_review_events_published(orders: GH) -> None:
    seen: list[Any] = []
    orders.replica.world.bus.subscribe("*", seen.append)
    head = orders.raw("GET", PULL).json()["head"]["sha"]
    orders.raw("POST", f"{PULL}/reviews", json={"event": "APPROVE"})
    orders.raw("POST", f"{PULL}/comments", json={"body": "n", "commit_id": head, "path": "exports.py", "line": 1})
    kinds = [e.type for e in seen if e.type.startswith("pull_")]
    assert kinds == ["pull_review_submitted", "pull_review_comment_created"]
