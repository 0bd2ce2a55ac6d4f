"""Pull requests over real git, through PyGithub, githubkit and the raw API: open, list, get,
update, merge by each method (the base branch moves), conflicts and protection."""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

import pytest
from github import GithubException

GH = Any  # conftest.GH


def shop_seed(seed: dict[str, Any], **repo: Any) -> dict[str, Any]:
    """The shared seed plus ``acme/shop``: a feature branch, a conflicting branch, and ``main``
    moved on past both."""
    seed["repos"].append({
        "ref": "shop", "name": "acme/shop", "permissions": {"github_agent": "write", "gh_carol": "write"},
        "files": {"README.md": "# shop\n", "app.py": "print('v1')\n"},
        "branches": {"feature": {"from": "main"}, "clash": {"from": "main"}, "empty": {"from": "main"}},
        "commits": [
            {"branch": "feature", "message": "Add checkout", "files": {"checkout.py": "total = 1\n"}},
            {"branch": "feature", "message": "Tidy app", "files": {"app.py": "print('v2')\n"}},
            {"branch": "clash", "message": "Rewrite readme", "files": {"README.md": "# clash\n"}},
            {"branch": "main", "message": "Readme on main", "files": {"README.md": "# shop on main\n"}},
        ],
        **repo,
    })
    return seed


@pytest.fixture
def shop(make_github: Callable[..., GH], github_seed: dict[str, Any]) -> GH:
    return make_github(shop_seed(github_seed))


def test_merge__deletes_the_head_when_the_repo_says_so(make_github: Callable[..., GH],
                                                      github_seed: dict[str, Any]) -> None:
    gh = make_github(shop_seed(github_seed))
    repo = gh.replica.state.repo("acme", "shop")
    admin = gh.token_for("laura")
    assert gh.raw("PATCH", "/repos/acme/shop", token=admin, json={"delete_branch_on_merge": True}).status_code == 200
    repo.delete_branch_on_merge = True  # whether or not the repos route takes the setting
    _open(gh)
    assert gh.raw("PUT", "/repos/acme/shop/pulls/1/merge", json={}).status_code == 200
    assert gh.raw("GET", "/repos/acme/shop/branches/feature").status_code == 404
    assert gh.raw("GET", "/repos/acme/shop/pulls/1").json()["head"]["ref"] == "feature"


def _open(gh: GH, head: str = "feature", title: str = "Checkout") -> dict[str, Any]:
    answer = gh.raw("POST", "/repos/acme/shop/pulls", json={"title": title, "head": head, "base": "main",
                                                           "body": "Adds checkout"})
    assert answer.status_code == 201, answer.text
    return dict(answer.json())


def test_create_pull__shape_numbers_and_issue_side(shop: GH, matches_spec: Callable[..., None]) -> None:
    answer = shop.raw("POST", "/repos/acme/shop/pulls", json={"title": "Clash", "head": "acme:clash", "base": "main"})
    matches_spec("POST", "/repos/{owner}/{repo}/pulls", answer.json(), 201)
    shop.raw("PATCH", "/repos/acme/shop/pulls/1", json={"state": "closed"})
    pull = shop.client.get_repo("acme/shop").create_pull(title="Checkout", body="Adds checkout", head="feature",
                                                         base="main")
    assert pull.number == 2 and pull.head.ref == "feature" and pull.base.ref == "main"
    got = shop.raw("GET", "/repos/acme/shop/pulls/2").json()
    matches_spec("GET", "/repos/{owner}/{repo}/pulls/{pull_number}", got)
    assert got["commits"] == 2 and got["changed_files"] == 2 and got["additions"] == 2 and got["deletions"] == 1
    assert got["mergeable"] is True and got["mergeable_state"] == "clean" and got["merged"] is False
    assert got["head"]["sha"] == shop.raw("GET", "/repos/acme/shop/branches/feature").json()["commit"]["sha"]
    issue = shop.raw("GET", "/repos/acme/shop/issues/2").json()
    assert issue["title"] == "Checkout" and "pull_request" in issue
    following = shop.raw("POST", "/repos/acme/shop/issues", json={"title": "Next"}).json()
    assert following["number"] == 3


def test_create_pull__github_refusals(shop: GH) -> None:
    _open(shop)
    again = shop.raw("POST", "/repos/acme/shop/pulls", json={"title": "x", "head": "feature", "base": "main"})
    assert again.status_code == 422
    assert again.json()["errors"][0]["message"] == "A pull request already exists for acme:feature."
    empty = shop.raw("POST", "/repos/acme/shop/pulls", json={"title": "x", "head": "empty", "base": "main"})
    assert empty.status_code == 422 and empty.json()["errors"][0]["message"] == "No commits between main and empty"
    missing = shop.raw("POST", "/repos/acme/shop/pulls", json={"title": "x", "head": "nope", "base": "main"})
    assert missing.json()["errors"] == [{"resource": "PullRequest", "field": "head", "code": "invalid"}]
    no_title = shop.raw("POST", "/repos/acme/shop/pulls", json={"head": "clash", "base": "main"})
    assert no_title.status_code == 422 and no_title.json()["errors"][0]["field"] == "title"


def test_list_pulls__filters_and_link(shop: GH, matches_spec: Callable[..., None]) -> None:
    _open(shop)
    _open(shop, "clash", "Clash")
    listed = shop.raw("GET", "/repos/acme/shop/pulls?per_page=1")
    matches_spec("GET", "/repos/{owner}/{repo}/pulls", listed.json())
    assert [p["number"] for p in listed.json()] == [2] and 'rel="next"' in listed.headers["link"]
    assert [p["number"] for p in shop.raw("GET", "/repos/acme/shop/pulls?head=acme:clash").json()] == [2]
    assert [p["number"] for p in shop.raw("GET", "/repos/acme/shop/pulls?direction=asc").json()] == [1, 2]
    assert shop.raw("GET", "/repos/acme/shop/pulls?state=closed").json() == []
    assert shop.raw("GET", "/repos/acme/shop/pulls?state=weird").status_code == 422
    kit = shop.kit.rest.pulls.list("acme", "shop", state="all").parsed_data
    assert sorted(p.number for p in kit) == [1, 2]


def test_update_pull__title_close_reopen(shop: GH, matches_spec: Callable[..., None]) -> None:
    _open(shop)
    pull = shop.client.get_repo("acme/shop").get_pull(1)
    pull.edit(title="Checkout v2", state="closed")
    assert pull.title == "Checkout v2" and pull.state == "closed"
    assert shop.raw("GET", "/repos/acme/shop/issues/1").json()["state"] == "closed"
    reopened = shop.raw("PATCH", "/repos/acme/shop/pulls/1", json={"state": "open"})
    assert reopened.json()["state"] == "open"
    matches_spec("PATCH", "/repos/{owner}/{repo}/pulls/{pull_number}", reopened.json())
    assert shop.raw("PATCH", "/repos/acme/shop/pulls/1", json={"base": "nope"}).status_code == 422


@pytest.mark.parametrize("method", ["merge", "squash", "rebase"])
def test_merge__each_method_moves_the_base(shop: GH, method: str, matches_spec: Callable[..., None]) -> None:
    _open(shop)
    before = shop.raw("GET", "/repos/acme/shop/branches/main").json()["commit"]["sha"]
    answer = shop.raw("PUT", "/repos/acme/shop/pulls/1/merge", json={"merge_method": method})
    assert answer.status_code == 200, answer.text
    matches_spec("PUT", "/repos/{owner}/{repo}/pulls/{pull_number}/merge", answer.json())
    tip = shop.raw("GET", "/repos/acme/shop/branches/main").json()["commit"]["sha"]
    assert tip == answer.json()["sha"] != before
    content = shop.client.get_repo("acme/shop").get_contents("checkout.py", ref="main")
    assert base64.b64decode(content.content) == b"total = 1\n"
    readme = shop.raw("GET", "/repos/acme/shop/contents/README.md").json()
    assert base64.b64decode(readme["content"]) == b"# shop on main\n"
    parents = shop.raw("GET", f"/repos/acme/shop/commits/{tip}").json()["parents"]
    assert len(parents) == (2 if method == "merge" else 1)
    got = shop.raw("GET", "/repos/acme/shop/pulls/1").json()
    assert got["merged"] and got["state"] == "closed" and got["merge_commit_sha"] == tip
    assert got["merged_by"]["login"] == "ancha-agent" and got["commits"] == 2
    assert shop.raw("GET", "/repos/acme/shop/pulls/1/merge").status_code == 204
    again = shop.raw("PUT", "/repos/acme/shop/pulls/1/merge", json={})
    assert again.status_code == 405


def test_merge__through_pygithub_and_githubkit(shop: GH) -> None:
    _open(shop)
    _open(shop, "clash", "Clash")
    status = shop.client.get_repo("acme/shop").get_pull(1).merge(merge_method="squash", commit_title="Checkout")
    assert status.merged
    assert shop.client.get_repo("acme/shop").get_pull(1).is_merged()
    message = shop.raw("GET", f"/repos/acme/shop/commits/{status.sha}").json()["commit"]["message"]
    assert message.startswith("Checkout\n\n* Add checkout")
    with pytest.raises(Exception) as refused:
        shop.kit.rest.pulls.merge("acme", "shop", 2)
    assert "405" in str(refused.value) or "not mergeable" in str(refused.value)


def test_merge__conflict_405_and_stale_sha_409(shop: GH) -> None:
    _open(shop, "clash", "Clash")
    got = shop.raw("GET", "/repos/acme/shop/pulls/1").json()
    assert got["mergeable"] is False and got["mergeable_state"] == "dirty"
    conflict = shop.raw("PUT", "/repos/acme/shop/pulls/1/merge", json={})
    assert conflict.status_code == 405 and conflict.json()["message"] == "Pull Request is not mergeable"
    _open(shop)
    stale = shop.raw("PUT", "/repos/acme/shop/pulls/2/merge", json={"sha": "0" * 40})
    assert stale.status_code == 409
    assert stale.json()["message"] == "Head branch was modified. Review and try the merge again."
    assert shop.raw("GET", "/repos/acme/shop/pulls/2/merge").status_code == 404


def test_merge__protected_branch_needs_an_approval(make_github: Callable[..., GH],
                                                  github_seed: dict[str, Any]) -> None:
    gh = make_github(shop_seed(github_seed, protected_branches=[{"branch": "main", "required_reviews": 1}]))
    _open(gh)
    assert gh.raw("GET", "/repos/acme/shop/pulls/1").json()["mergeable_state"] == "blocked"
    blocked = gh.raw("PUT", "/repos/acme/shop/pulls/1/merge", json={"merge_method": "squash"})
    assert blocked.status_code == 405
    assert blocked.json()["message"] == "At least 1 approving review is required by reviewers with write access."
    own = gh.raw("POST", "/repos/acme/shop/pulls/1/reviews", json={"event": "APPROVE"})
    assert own.status_code == 422 and own.json()["errors"] == ["Can not approve your own pull request"]
    carol = gh.as_user("carol")
    carol.get_repo("acme/shop").get_pull(1).create_review(body="LGTM", event="APPROVE")
    merged = gh.raw("PUT", "/repos/acme/shop/pulls/1/merge", json={"merge_method": "squash"})
    assert merged.status_code == 200, merged.text


def test_merge__publishes_pull_merged(shop: GH) -> None:
    seen: list[Any] = []
    shop.replica.world.bus.subscribe("pull_merged", seen.append)
    _open(shop)
    admin = shop.token_for("laura")  # an org admin
    assert shop.raw("PUT", "/repos/acme/shop/pulls/1/merge", token=admin, json={}).status_code == 200
    assert len(seen) == 1 and seen[0].data["number"] == 1 and seen[0].data["user"] == "laura"
    assert seen[0].data["merge_commit_sha"] == shop.raw("GET", "/repos/acme/shop/branches/main").json()["commit"]["sha"]
    assert shop.raw("PUT", "/repos/acme/shop/pulls/1/merge", token=shop.token_for("ben"), json={}).status_code == 403


def test_files_and_commits(shop: GH, matches_spec: Callable[..., None]) -> None:
    _open(shop)
    files = shop.raw("GET", "/repos/acme/shop/pulls/1/files").json()
    matches_spec("GET", "/repos/{owner}/{repo}/pulls/{pull_number}/files", files)
    by_name = {f["filename"]: f for f in files}
    assert by_name["checkout.py"]["status"] == "added" and by_name["app.py"]["status"] == "modified"
    assert "+print('v2')" in by_name["app.py"]["patch"]
    commits = shop.raw("GET", "/repos/acme/shop/pulls/1/commits").json()
    matches_spec("GET", "/repos/{owner}/{repo}/pulls/{pull_number}/commits", commits)
    assert [c["commit"]["message"] for c in commits] == ["Add checkout", "Tidy app"]
    assert [f.filename for f in shop.client.get_repo("acme/shop").get_pull(1).get_files()] == \
        [f["filename"] for f in files]


def test_unknown_pull_404(shop: GH) -> None:
    with pytest.raises(GithubException) as missing:
        shop.client.get_repo("acme/shop").get_pull(99)
    assert missing.value.status == 404
    assert shop.raw("GET", "/repos/acme/shop/pulls/abc").status_code == 404
