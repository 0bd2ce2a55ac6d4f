"""A renamed repository: the old name answers 301 (307 for writes) to /repositories/{id},
which serves the repository and its sub-paths; PyGithub follows the redirect."""

from __future__ import annotations

from typing import Any

GH = Any  # conftest.GH


def test_old_name__redirects_and_repositories_id_serves(gh: GH) -> None:
    laura = gh.token_for("laura")
    renamed = gh.raw("PATCH", "/repos/acme/orders", token=laura, json={"name": "orders-api"}).json()
    repo_id = renamed["id"]
    moved = gh.raw("GET", "/repos/acme/orders/issues?state=all")
    assert moved.status_code == 301
    assert moved.headers["location"] == f"{gh.url}/repositories/{repo_id}/issues?state=all"
    assert moved.json()["message"] == "Moved Permanently"
    write = gh.raw("POST", "/repos/acme/orders/issues", json={"title": "x"})
    assert write.status_code == 307 and write.headers["location"] == f"{gh.url}/repositories/{repo_id}/issues"
    by_id = gh.raw("GET", f"/repositories/{repo_id}")
    assert by_id.status_code == 200 and by_id.json()["full_name"] == "acme/orders-api"
    assert gh.raw("GET", f"/repositories/{repo_id}/issues/1").json()["title"] == "CSV exports are gone"
    assert gh.raw("GET", "/repos/acme/orders", token=gh.token_for("carol")).status_code == 404  # private


def test_old_name__pygithub_follows_the_redirect(gh: GH) -> None:
    gh.as_user("laura").get_repo("acme/orders").edit(name="orders-api")
    repo = gh.client.get_repo("acme/orders")
    assert repo.full_name == "acme/orders-api"
    assert repo.get_issue(1).title == "CSV exports are gone"
