"""Contents API over real git: PyGithub and githubkit against the live replica."""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

import pytest
from github import GithubException

GH = Any  # conftest.GH


def test_get_file__base64_sha_links_and_schema(gh: GH, matches_spec: Callable[..., None]) -> None:
    answer = gh.raw("GET", "/repos/acme/orders/contents/README.md")
    assert answer.status_code == 200
    body = answer.json()
    matches_spec("GET", "/repos/{owner}/{repo}/contents/{path}", body)
    assert base64.b64decode(body["content"]) == b"# orders\n"
    assert body["encoding"] == "base64" and body["type"] == "file" and body["size"] == 9
    assert body["_links"]["self"] == body["url"] and body["url"].endswith("/contents/README.md?ref=main")
    assert body["sha"] == gh.replica.state.repo("acme", "orders").git.entry(
        gh.replica.state.repo("acme", "orders").git.branch_sha("main"), "README.md").sha.decode()


def test_get_dir_and_readme__through_pygithub(gh: GH) -> None:
    repo = gh.client.get_repo("acme/orders")
    repo.create_file("docs/guide.md", "Add guide", "guide\n", branch="main")
    listing = repo.get_contents("")
    assert isinstance(listing, list)
    assert sorted((c.path, c.type) for c in listing) == [("README.md", "file"), ("docs", "dir")]
    assert repo.get_readme().decoded_content == b"# orders\n"
    docs = repo.get_contents("docs")
    assert isinstance(docs, list) and [c.name for c in docs] == ["guide.md"]


def test_get_missing_file_or_ref__404(gh: GH) -> None:
    assert gh.raw("GET", "/repos/acme/orders/contents/nope.txt").status_code == 404
    answer = gh.raw("GET", "/repos/acme/orders/contents/README.md?ref=nope")
    assert answer.status_code == 404
    assert answer.json()["message"] == "No commit found for the ref nope"


def test_accept_raw__answers_the_bytes(gh: GH) -> None:
    answer = gh.raw("GET", "/repos/acme/orders/contents/README.md",
                    headers={"Accept": "application/vnd.github.raw"})
    assert answer.status_code == 200
    assert answer.content == b"# orders\n"
    assert answer.headers["content-type"].startswith("application/vnd.github.raw")


def test_create_update_delete__commits_on_the_branch(gh: GH, matches_spec: Callable[..., None]) -> None:
    repo = gh.client.get_repo("acme/orders")
    made = repo.create_file("src/app.py", "Add app", "print('hi')\n", branch="fix-exports")
    assert repo.get_branch("fix-exports").commit.sha == made["commit"].sha
    updated = repo.update_file("src/app.py", "Change app", "print('bye')\n", made["content"].sha,
                               branch="fix-exports")
    assert updated["commit"].parents[0].sha == made["commit"].sha
    assert repo.get_contents("src/app.py", ref="fix-exports").decoded_content == b"print('bye')\n"  # type: ignore[union-attr]
    gone = repo.delete_file("src/app.py", "Remove app", updated["content"].sha, branch="fix-exports")
    assert repo.get_branch("fix-exports").commit.sha == gone["commit"].sha
    with pytest.raises(GithubException) as missing:
        repo.get_contents("src/app.py", ref="fix-exports")
    assert missing.value.status == 404
    body = {"message": "Again", "content": base64.b64encode(b"x").decode(), "branch": "main"}
    answer = gh.raw("PUT", "/repos/acme/orders/contents/new.txt", json=body)
    assert answer.status_code == 201
    matches_spec("PUT", "/repos/{owner}/{repo}/contents/{path}", answer.json(), 201)
    info = answer.json()["commit"]
    assert info["author"]["name"] and info["message"] == "Again"


def test_update_with_stale_sha__409(gh: GH) -> None:
    repo = gh.client.get_repo("acme/orders")
    old = repo.get_contents("README.md")
    assert not isinstance(old, list)
    repo.update_file("README.md", "First", "one\n", old.sha)
    with pytest.raises(GithubException) as stale:
        repo.update_file("README.md", "Second", "two\n", old.sha)
    assert stale.value.status == 409
    assert stale.value.data["message"] == f"README.md does not match {old.sha}"


def test_update_without_sha__422(gh: GH) -> None:
    body = {"message": "No sha", "content": base64.b64encode(b"x").decode()}
    answer = gh.raw("PUT", "/repos/acme/orders/contents/README.md", json=body)
    assert answer.status_code == 422
    assert answer.json()["message"] == "Invalid request.\n\n\"sha\" wasn't supplied."


@pytest.mark.parametrize("body", [{}, {"message": "m"}, {"message": "m", "content": "%%%"},
                                  {"message": 5, "content": "eA=="}, {"message": "m", "content": "eA==",
                                                                      "branch": "nope"},
                                  {"message": "m", "content": "eA==", "author": "me"}])
def test_put_bad_bodies__4xx(gh: GH, body: dict[str, Any]) -> None:
    answer = gh.raw("PUT", "/repos/acme/orders/contents/x.txt", json=body)
    assert 400 <= answer.status_code < 500


def test_write_without_push_access__403_and_protected_branch_409(make_github: Callable[..., GH],
                                                                 github_seed: dict[str, Any]) -> None:
    github_seed["repos"][0]["protected_branches"] = ["main"]
    gh = make_github(github_seed)
    body = {"message": "m", "content": "eA=="}
    assert gh.raw("PUT", "/repos/acme/orders/contents/x.txt", json=body).status_code == 409
    carol = gh.token_for("carol")
    assert gh.raw("PUT", "/repos/laura/notes/contents/x.txt", token=carol, json=body).status_code == 403


def test_githubkit__get_and_create(gh: GH) -> None:
    kit = gh.kit
    got = kit.rest.repos.get_content("acme", "orders", "README.md").parsed_data
    assert base64.b64decode(got.content) == b"# orders\n"  # type: ignore[union-attr]
    made = kit.rest.repos.create_or_update_file_contents(
        "acme", "orders", "kit.txt", message="From githubkit", content=base64.b64encode(b"kit\n").decode())
    assert made.status_code == 201
    assert made.parsed_data.commit.message == "From githubkit"
