"""Releases through PyGithub, githubkit and the raw API: tags made on publish, drafts,
latest, by tag, update and delete."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from github import GithubException

GH = Any  # conftest.GH


def test_create_release__makes_the_tag(gh: GH, matches_spec: Callable[..., None]) -> None:
    main = gh.raw("GET", "/repos/acme/orders/branches/main").json()["commit"]["sha"]
    answer = gh.raw("POST", "/repos/acme/orders/releases", json={"tag_name": "v1.0.0", "name": "One",
                                                                 "body": "First"})
    assert answer.status_code == 201, answer.text
    matches_spec("POST", "/repos/{owner}/{repo}/releases", answer.json(), 201)
    assert answer.json()["target_commitish"] == "main" and answer.json()["published_at"]
    tag = gh.raw("GET", "/repos/acme/orders/git/ref/tags/v1.0.0").json()
    assert tag["object"]["sha"] == main
    again = gh.raw("POST", "/repos/acme/orders/releases", json={"tag_name": "v1.0.0"})
    assert again.status_code == 422 and again.json()["errors"][0]["code"] == "already_exists"
    bad = gh.raw("POST", "/repos/acme/orders/releases", json={"tag_name": "v2", "target_commitish": "nope"})
    assert bad.status_code == 422 and bad.json()["errors"][0]["field"] == "target_commitish"


def test_releases__list_latest_by_tag(gh: GH, matches_spec: Callable[..., None]) -> None:
    repo = gh.client.get_repo("acme/orders")
    first = repo.create_git_release("v1.0.0", "One", "First")
    second = repo.create_git_release("v1.1.0", "Two", "Second", target_commitish="fix-exports")
    repo.create_git_release("v2.0.0-rc1", "RC", "Soon", prerelease=True)
    draft = repo.create_git_release("v3.0.0", "Draft", "Later", draft=True)
    listed = gh.raw("GET", "/repos/acme/orders/releases").json()
    matches_spec("GET", "/repos/{owner}/{repo}/releases", listed)
    assert [r["tag_name"] for r in listed] == ["v3.0.0", "v2.0.0-rc1", "v1.1.0", "v1.0.0"]
    latest = gh.raw("GET", "/repos/acme/orders/releases/latest").json()
    matches_spec("GET", "/repos/{owner}/{repo}/releases/latest", latest)
    assert latest["id"] == second.id
    assert repo.get_release("v1.0.0").id == first.id
    by_tag = gh.raw("GET", "/repos/acme/orders/releases/tags/v1.1.0").json()
    matches_spec("GET", "/repos/{owner}/{repo}/releases/tags/{tag}", by_tag)
    assert gh.raw("GET", "/repos/acme/orders/releases/tags/v3.0.0").status_code == 404  # a draft has no tag yet
    assert gh.raw("GET", "/repos/acme/orders/git/ref/tags/v3.0.0").status_code == 404
    reader = gh.token_for("carol")
    assert gh.raw("GET", f"/repos/acme/orders/releases/{draft.id}", token=reader).status_code == 404
    kit = gh.kit.rest.repos.get_release("acme", "orders", draft.id).parsed_data
    assert kit.draft is True


def test_update_release__publish_draft_and_delete(gh: GH, matches_spec: Callable[..., None]) -> None:
    seen: list[Any] = []
    gh.replica.world.bus.subscribe("release_published", seen.append)
    draft = gh.raw("POST", "/repos/acme/orders/releases", json={"tag_name": "v2.0.0", "draft": True}).json()
    assert draft["published_at"] is None and seen == []
    published = gh.raw("PATCH", f"/repos/acme/orders/releases/{draft['id']}", json={"draft": False, "name": "Two"})
    assert published.status_code == 200, published.text
    matches_spec("PATCH", "/repos/{owner}/{repo}/releases/{release_id}", published.json())
    assert published.json()["name"] == "Two" and not published.json()["draft"]
    assert [e.data["tag_name"] for e in seen] == ["v2.0.0"]
    assert gh.raw("GET", "/repos/acme/orders/git/ref/tags/v2.0.0").status_code == 200
    assert gh.raw("DELETE", f"/repos/acme/orders/releases/{draft['id']}").status_code == 204
    with pytest.raises(GithubException) as gone:
        gh.client.get_repo("acme/orders").get_release(draft["id"])
    assert gone.value.status == 404
    assert gh.raw("GET", "/repos/acme/orders/git/ref/tags/v2.0.0").status_code == 200  # the tag stays
    assert gh.raw("GET", "/repos/acme/orders/releases/latest").status_code == 404
