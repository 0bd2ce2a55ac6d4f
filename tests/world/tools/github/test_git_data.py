"""The git database API: build a commit from blobs and trees, move refs, tag it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from github import GithubException, InputGitTreeElement

GH = Any  # conftest.GH


def test_blob_tree_commit_ref__a_commit_made_by_hand(gh: GH, matches_spec: Callable[..., None]) -> None:
    repo = gh.client.get_repo("acme/orders")
    main = repo.get_branch("main").commit
    blob = repo.create_git_blob("hello\n", "utf-8")
    assert repo.get_git_blob(blob.sha).content.replace("\n", "") == "aGVsbG8K"
    base = repo.get_git_tree(main.sha)
    tree = repo.create_git_tree([InputGitTreeElement("docs/hello.txt", "100644", "blob", sha=blob.sha)], base)
    assert sorted(e.path for e in tree.tree) == ["README.md", "docs"]
    parent = repo.get_git_commit(main.sha)
    made = repo.create_git_commit("Hello by hand", tree, [parent])
    assert repo.get_branch("main").commit.sha == main.sha  # a new commit moves no ref
    ref = repo.create_git_ref("refs/heads/by-hand", made.sha)
    assert ref.object.sha == made.sha
    assert repo.get_contents("docs/hello.txt", ref="by-hand").decoded_content == b"hello\n"  # type: ignore[union-attr]
    matches_spec("GET", "/repos/{owner}/{repo}/git/commits/{commit_sha}",
                 gh.raw("GET", f"/repos/acme/orders/git/commits/{made.sha}").json())
    recursive = gh.raw("GET", f"/repos/acme/orders/git/trees/{tree.sha}?recursive=1").json()
    matches_spec("GET", "/repos/{owner}/{repo}/git/trees/{tree_sha}", recursive)
    assert [e["path"] for e in recursive["tree"]] == ["README.md", "docs", "docs/hello.txt"]


def test_refs__list_matching_update_force_delete(gh: GH, matches_spec: Callable[..., None]) -> None:
    repo = gh.client.get_repo("acme/orders")
    main = repo.get_branch("main").commit.sha
    made = repo.create_file("x.txt", "x", "x\n", branch="fix-exports")["commit"].sha
    refs = gh.raw("GET", "/repos/acme/orders/git/matching-refs/heads/fix").json()
    matches_spec("GET", "/repos/{owner}/{repo}/git/matching-refs/{ref}", refs)
    assert [r["ref"] for r in refs] == ["refs/heads/fix-exports"]
    ref = repo.get_git_ref("heads/fix-exports")
    with pytest.raises(GithubException) as not_ff:
        ref.edit(main)
    assert not_ff.value.status == 422 and not_ff.value.data["message"] == "Update is not a fast forward"
    ref.edit(main, force=True)
    assert repo.get_branch("fix-exports").commit.sha == main
    ref.edit(made)  # forward again
    ref.delete()
    assert gh.raw("GET", "/repos/acme/orders/git/ref/heads/fix-exports").status_code == 404
    again = gh.raw("DELETE", "/repos/acme/orders/git/refs/heads/fix-exports")
    assert again.status_code == 422 and again.json()["message"] == "Reference does not exist"
    exists = gh.raw("POST", "/repos/acme/orders/git/refs", json={"ref": "refs/heads/main", "sha": main})
    assert exists.status_code == 422 and exists.json()["message"] == "Reference already exists"


def test_annotated_tag__create_get_and_ref(gh: GH, matches_spec: Callable[..., None]) -> None:
    repo = gh.client.get_repo("acme/orders")
    main = repo.get_branch("main").commit.sha
    tag = repo.create_git_tag("v1.0", "First release", main, "commit")
    got = gh.raw("GET", f"/repos/acme/orders/git/tags/{tag.sha}").json()
    matches_spec("GET", "/repos/{owner}/{repo}/git/tags/{tag_sha}", got)
    assert got["object"] == {"sha": main, "type": "commit", "url": got["object"]["url"]}
    repo.create_git_ref("refs/tags/v1.0", tag.sha)
    assert repo.get_git_ref("tags/v1.0").object.type == "tag"
    assert repo.get_commits(sha="v1.0")[0].sha == main


@pytest.mark.parametrize(("method", "path", "body"), [
    ("POST", "/git/blobs", {"content": "x", "encoding": "rot13"}),
    ("POST", "/git/blobs", {}),
    ("POST", "/git/trees", {"tree": [{"path": "a", "mode": "100644", "type": "blob", "sha": "0" * 40}]}),
    ("POST", "/git/trees", {"tree": [{"path": "a", "mode": "777", "content": "x"}]}),
    ("POST", "/git/trees", {"tree": "nope"}),
    ("POST", "/git/trees", {"tree": [], "base_tree": "nope"}),
    ("POST", "/git/commits", {"message": "m", "tree": "0" * 40}),
    ("POST", "/git/commits", {"message": "m", "tree": "nope", "parents": "x"}),
    ("POST", "/git/refs", {"ref": "main", "sha": "0" * 40}),
    ("POST", "/git/refs", {"ref": "refs/heads/a..b", "sha": "0" * 40}),
    ("PATCH", "/git/refs/heads/main", {"sha": "nope"}),
    ("POST", "/git/tags", {"tag": "v", "message": "m", "object": "0" * 40, "type": "commit"}),
    ("GET", "/git/blobs/nope", None),
    ("GET", "/git/trees/nope", None),
    ("GET", "/git/commits/nope", None),
    ("GET", "/git/tags/nope", None),
])
def test_bad_input__4xx_never_5xx(gh: GH, method: str, path: str, body: dict[str, Any] | None) -> None:
    answer = gh.raw(method, f"/repos/acme/orders{path}", json=body)
    assert 400 <= answer.status_code < 500, answer.text
