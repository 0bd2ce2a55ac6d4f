"""Commits: list with filters and pages, one commit with files, compare base...head."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

GH = Any  # conftest.GH


def history_seed(seed: dict[str, Any]) -> dict[str, Any]:
    seed["repos"][0]["commits"] = [
        {"ref": "c1", "message": "Add exporter", "author": "gh_laura", "at": "2026-02-01T10:00:00Z",
         "files": {"src/export.py": "def export():\n    return 'csv'\n"}},
        {"ref": "c2", "message": "Tweak docs", "author": "gh_ben", "at": "2026-02-10T10:00:00Z",
         "files": {"README.md": "# orders\n\nDocs.\n"}},
        {"ref": "c3", "branch": "fix-exports", "message": "Fix exporter", "author": "gh_ben",
         "at": "2026-02-12T10:00:00Z", "files": {"src/export.py": "def export():\n    return 'xlsx'\n"}},
    ]
    seed["repos"][0]["branches"] = {"fix-exports": {"from": "c1"}}
    return seed


def test_list_commits__order_filters_and_schema(make_github: Callable[..., GH], github_seed: dict[str, Any],
                                               matches_spec: Callable[..., None]) -> None:
    gh = make_github(history_seed(github_seed))
    answer = gh.raw("GET", "/repos/acme/orders/commits")
    matches_spec("GET", "/repos/{owner}/{repo}/commits", answer.json())
    assert [c["commit"]["message"] for c in answer.json()] == ["Tweak docs", "Add exporter", "Initial commit"]
    assert answer.json()[1]["author"]["login"] == "laura"  # matched by the seeded email
    repo = gh.client.get_repo("acme/orders")
    assert [c.commit.message for c in repo.get_commits(sha="fix-exports", path="src/export.py")] == [
        "Fix exporter", "Add exporter"]
    assert [c.commit.message for c in repo.get_commits(author="ben")] == ["Tweak docs"]
    since = gh.raw("GET", "/repos/acme/orders/commits?since=2026-02-05T00:00:00Z").json()
    assert [c["commit"]["message"] for c in since] == ["Tweak docs"]
    assert gh.raw("GET", "/repos/acme/orders/commits?sha=nope").status_code == 404
    assert gh.raw("GET", "/repos/acme/orders/commits?since=yesterday").status_code == 422


def test_list_commits__pages_with_link(gh: GH) -> None:
    repo = gh.client.get_repo("acme/orders")
    for i in range(4):
        repo.create_file(f"f{i}.txt", f"File {i}", "x\n")
    first = gh.raw("GET", "/repos/acme/orders/commits?per_page=2")
    assert len(first.json()) == 2 and 'rel="next"' in first.headers["link"]
    assert [c.commit.message for c in repo.get_commits()][:5] == ["File 3", "File 2", "File 1", "File 0",
                                                                   "Initial commit"]


def test_get_commit__files_stats_and_schema(make_github: Callable[..., GH], github_seed: dict[str, Any],
                                            matches_spec: Callable[..., None]) -> None:
    gh = make_github(history_seed(github_seed))
    sha = gh.replica.state.repo("acme", "orders").git.commits["c3"]
    answer = gh.raw("GET", f"/repos/acme/orders/commits/{sha}")
    matches_spec("GET", "/repos/{owner}/{repo}/commits/{ref}", answer.json())
    body = answer.json()
    assert body["stats"] == {"total": 2, "additions": 1, "deletions": 1}
    assert body["files"][0]["patch"] == "@@ -1,2 +1,2 @@\n def export():\n-    return 'csv'\n+    return 'xlsx'"
    commit = gh.client.get_repo("acme/orders").get_commit("fix-exports")
    assert commit.sha == sha and [f.filename for f in commit.files] == ["src/export.py"]
    assert gh.raw("GET", "/repos/acme/orders/commits/nope").status_code == 422


def test_compare__diverged_with_merge_base(make_github: Callable[..., GH], github_seed: dict[str, Any],
                                           matches_spec: Callable[..., None]) -> None:
    gh = make_github(history_seed(github_seed))
    answer = gh.raw("GET", "/repos/acme/orders/compare/main...fix-exports")
    assert answer.status_code == 200, answer.text
    matches_spec("GET", "/repos/{owner}/{repo}/compare/{basehead}", answer.json())
    body = answer.json()
    assert (body["status"], body["ahead_by"], body["behind_by"], body["total_commits"]) == ("diverged", 1, 1, 1)
    assert body["merge_base_commit"]["sha"] == gh.replica.state.repo("acme", "orders").git.commits["c1"]
    assert [f["filename"] for f in body["files"]] == ["src/export.py"]
    compare = gh.client.get_repo("acme/orders").compare("fix-exports", "main")
    assert (compare.status, compare.ahead_by, compare.behind_by) == ("diverged", 1, 1)
    assert gh.raw("GET", "/repos/acme/orders/compare/main...nope").status_code == 404
    kit = gh.kit.rest.repos.compare_commits("acme", "orders", "main...main").parsed_data
    assert kit.status == "identical"


def test_combined_status__pending_without_statuses(gh: GH) -> None:
    answer = gh.raw("GET", "/repos/acme/orders/commits/main/status")
    assert answer.status_code == 200
    assert answer.json()["state"] == "pending" and answer.json()["total_count"] == 0
