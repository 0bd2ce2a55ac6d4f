"""Reactions on issues, issue comments, review comments and releases, through PyGithub
and the raw API."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

GH = Any  # conftest.GH


def test_issue_reactions__create_list_delete(gh: GH, matches_spec: Callable[..., None]) -> None:
    issue = gh.client.get_repo("acme/orders").get_issue(1)
    reaction = issue.create_reaction("heart")
    assert reaction.content == "heart" and reaction.user.login == "ancha-agent"
    path = "/repos/acme/orders/issues/1/reactions"
    again = gh.raw("POST", path, json={"content": "heart"})
    assert again.status_code == 200 and again.json()["id"] == reaction.id  # the same reaction back
    other = gh.raw("POST", path, json={"content": "+1"})
    assert other.status_code == 201
    matches_spec("POST", "/repos/{owner}/{repo}/issues/{issue_number}/reactions", other.json(), 201)
    listed = gh.raw("GET", path).json()
    matches_spec("GET", "/repos/{owner}/{repo}/issues/{issue_number}/reactions", listed)
    assert [r["content"] for r in listed] == ["heart", "+1"]
    assert [r.content for r in issue.get_reactions()] == ["heart", "+1"]
    assert [r["content"] for r in gh.raw("GET", path, params={"content": "+1"}).json()] == ["+1"]
    issue.delete_reaction(reaction.id)
    assert [r["content"] for r in gh.raw("GET", path).json()] == ["+1"]
    assert gh.raw("DELETE", f"{path}/{reaction.id}").status_code == 404


def test_reactions__bad_content_and_others_reactions(gh: GH) -> None:
    path = "/repos/acme/orders/issues/1/reactions"
    assert gh.raw("POST", path, json={"content": "thumbsup"}).status_code == 422
    assert gh.raw("POST", path, json={}).status_code == 422
    assert gh.raw("POST", path, json={"content": "eyes"}, token=None).status_code in (401, 404)
    ben = gh.raw("POST", path, json={"content": "eyes"}, token=gh.token_for("ben")).json()
    assert gh.raw("DELETE", f"{path}/{ben['id']}").status_code == 403  # not the agent's own
    assert gh.raw("POST", "/repos/acme/orders/issues/999/reactions", json={"content": "eyes"}).status_code == 404


def test_comment_reactions(gh: GH, matches_spec: Callable[..., None]) -> None:
    comment = gh.client.get_repo("acme/orders").get_issue(1).get_comments()[0]
    comment.create_reaction("rocket")
    listed = gh.raw("GET", f"/repos/acme/orders/issues/comments/{comment.id}/reactions").json()
    matches_spec("GET", "/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions", listed)
    assert [r["content"] for r in listed] == ["rocket"]
    assert comment.delete_reaction(listed[0]["id"])
    assert gh.raw("GET", f"/repos/acme/many/issues/comments/{comment.id}/reactions").status_code == 404


def test_review_comment_and_release_reactions(gh: GH) -> None:
    repo = gh.client.get_repo("acme/orders")
    repo.create_file("exports.py", "add exports", "print('csv')\n", branch="fix-exports")
    head = repo.get_pull(3).head.sha
    made = gh.raw("POST", "/repos/acme/orders/pulls/3/comments",
                  json={"body": "nit", "commit_id": head, "path": "exports.py", "line": 1, "side": "RIGHT"})
    assert made.status_code == 201, made.text
    path = f"/repos/acme/orders/pulls/comments/{made.json()['id']}/reactions"
    assert gh.raw("POST", path, json={"content": "laugh"}).status_code == 201
    assert [r["content"] for r in gh.raw("GET", path).json()] == ["laugh"]
    release = gh.raw("POST", "/repos/acme/orders/releases", json={"tag_name": "v1"}).json()
    path = f"/repos/acme/orders/releases/{release['id']}/reactions"
    assert gh.raw("POST", path, json={"content": "-1"}).status_code == 422  # releases take fewer
    hooray = gh.raw("POST", path, json={"content": "hooray"})
    assert hooray.status_code == 201
    assert gh.raw("DELETE", f"{path}/{hooray.json()['id']}").status_code == 204


ROLLUP_KEYS = ["url", "total_count", "+1", "-1", "laugh", "hooray", "confused", "heart", "rocket", "eyes"]


def test_issue_json_shows_the_reaction_rollup(gh: GH) -> None:
    issue = gh.client.get_repo("acme/orders").get_issue(1)
    assert gh.raw("GET", "/repos/acme/orders/issues/1").json()["reactions"]["total_count"] == 0  # warm the cache
    heart = issue.create_reaction("heart")
    issue.create_reaction("+1")
    gh.raw("POST", "/repos/acme/orders/issues/1/reactions", json={"content": "heart"}, token=gh.token_for("ben"))
    assert sorted(r.content for r in issue.get_reactions()) == ["+1", "heart", "heart"]
    rollup = gh.raw("GET", "/repos/acme/orders/issues/1").json()["reactions"]
    assert list(rollup) == ROLLUP_KEYS
    assert rollup["url"].endswith("/repos/acme/orders/issues/1/reactions")
    assert (rollup["total_count"], rollup["heart"], rollup["+1"], rollup["eyes"]) == (3, 2, 1, 0)
    listed = gh.raw("GET", "/repos/acme/orders/issues", params={"state": "all"}).json()
    assert next(i for i in listed if i["number"] == 1)["reactions"] == rollup
    assert all(i["reactions"]["total_count"] == 0 for i in listed if i["number"] != 1)
    again = gh.client.get_repo("acme/orders").get_issue(1)
    assert again.raw_data["reactions"]["total_count"] == 3
    issue.delete_reaction(heart.id)
    after = gh.raw("GET", "/repos/acme/orders/issues/1").json()["reactions"]
    assert (after["total_count"], after["heart"], after["+1"]) == (2, 1, 1)


def test_comment_and_review_comment_json_show_the_rollup(gh: GH) -> None:
    repo = gh.client.get_repo("acme/orders")
    comment = repo.get_issue(1).get_comments()[0]
    one = f"/repos/acme/orders/issues/comments/{comment.id}"
    assert gh.raw("GET", one).json()["reactions"]["total_count"] == 0  # warm the cache
    made = comment.create_reaction("rocket")
    shown = gh.raw("GET", one).json()["reactions"]
    assert list(shown) == ROLLUP_KEYS and (shown["total_count"], shown["rocket"]) == (1, 1)
    assert shown["url"].endswith(f"{one}/reactions")
    listed = gh.raw("GET", "/repos/acme/orders/issues/1/comments").json()
    assert next(c for c in listed if c["id"] == comment.id)["reactions"] == shown
    assert gh.raw("GET", "/repos/acme/orders/issues/1").json()["reactions"]["total_count"] == 0  # not the issue's
    comment.delete_reaction(made.id)
    assert gh.raw("GET", one).json()["reactions"]["total_count"] == 0

    repo.create_file("exports.py", "add exports", "print('csv')\n", branch="fix-exports")
    head = repo.get_pull(3).head.sha
    review = gh.raw("POST", "/repos/acme/orders/pulls/3/comments",
                    json={"body": "nit", "commit_id": head, "path": "exports.py", "line": 1, "side": "RIGHT"}).json()
    gh.raw("POST", f"/repos/acme/orders/pulls/comments/{review['id']}/reactions", json={"content": "eyes"})
    shown = gh.raw("GET", f"/repos/acme/orders/pulls/comments/{review['id']}").json()["reactions"]
    assert (shown["total_count"], shown["eyes"]) == (1, 1)
