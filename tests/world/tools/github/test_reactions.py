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
