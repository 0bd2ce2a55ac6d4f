"""Stars and watching through PyGithub and the raw API: counts follow, dates on request."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

GH = Any  # conftest.GH


def test_star__put_check_list_delete(gh: GH, matches_spec: Callable[..., None]) -> None:
    me = gh.client.get_user()
    repo = gh.client.get_repo("acme/orders")
    assert not me.has_in_starred(repo)
    me.add_to_starred(repo)
    assert me.has_in_starred(repo)
    assert gh.raw("GET", "/user/starred/acme/orders").status_code == 204
    listed = gh.raw("GET", "/user/starred")
    matches_spec("GET", "/user/starred", listed.json())
    assert [r["full_name"] for r in listed.json()] == ["acme/orders"]
    assert gh.client.get_repo("acme/orders").stargazers_count == 1
    dated = gh.raw("GET", "/user/starred", headers={"Accept": "application/vnd.github.star+json"}).json()
    assert dated[0]["repo"]["full_name"] == "acme/orders" and dated[0]["starred_at"].endswith("Z")
    me.remove_from_starred(repo)
    assert gh.raw("GET", "/user/starred/acme/orders").status_code == 404
    assert gh.client.get_repo("acme/orders").stargazers_count == 0


def test_star__twice_is_one_star_and_private_repos_stay_hidden(gh: GH) -> None:
    for _ in range(2):
        assert gh.raw("PUT", "/user/starred/acme/orders").status_code == 204
    assert gh.raw("GET", "/repos/acme/orders").json()["stargazers_count"] == 1
    assert gh.raw("PUT", "/user/starred/laura/vault").status_code == 404
    assert gh.raw("PUT", "/user/starred/acme/orders", token=None).status_code == 401
    carol = gh.token_for("carol")
    assert gh.raw("GET", "/users/ancha-agent/starred", token=carol).json() == []  # a private repo's star


def test_stargazers__with_dates(gh: GH, matches_spec: Callable[..., None]) -> None:
    gh.raw("PUT", "/user/starred/acme/many")
    gh.raw("PUT", "/user/starred/acme/many", token=gh.token_for("carol"))
    users = gh.raw("GET", "/repos/acme/many/stargazers").json()
    matches_spec("GET", "/repos/{owner}/{repo}/stargazers", users)
    assert [u["login"] for u in users] == ["ancha-agent", "carol"]
    dated = list(gh.client.get_repo("acme/many").get_stargazers_with_dates())
    assert [s.user.login for s in dated] == ["ancha-agent", "carol"] and dated[0].starred_at is not None
    assert [r.full_name for r in gh.client.get_user("carol").get_starred()] == ["acme/many"]


def test_subscription__watch_ignore_unwatch(gh: GH, matches_spec: Callable[..., None]) -> None:
    me = gh.client.get_user()
    repo = gh.client.get_repo("acme/orders")
    assert gh.raw("GET", "/repos/acme/orders/subscription").status_code == 404
    assert not me.has_in_watched(repo)
    me.add_to_watched(repo)
    assert me.has_in_watched(repo)
    got = gh.raw("GET", "/repos/acme/orders/subscription")
    matches_spec("GET", "/repos/{owner}/{repo}/subscription", got.json())
    assert got.json()["subscribed"] is True
    assert [u.login for u in repo.get_subscribers()] == ["ancha-agent"]
    assert [r.full_name for r in me.get_watched()] == ["acme/orders"]
    assert gh.raw("GET", "/repos/acme/orders").json()["subscribers_count"] == 1
    ignored = gh.raw("PUT", "/repos/acme/orders/subscription", json={"ignored": True})
    matches_spec("PUT", "/repos/{owner}/{repo}/subscription", ignored.json())
    assert ignored.json()["ignored"] is True and gh.raw("GET", "/repos/acme/orders/subscribers").json() == []
    me.remove_from_watched(repo)
    assert gh.raw("GET", "/repos/acme/orders/subscription").status_code == 404
    assert gh.raw("GET", "/users/ancha-agent/subscriptions").json() == []
    assert gh.raw("PUT", "/repos/acme/orders/subscription", json={"subscribed": "yes"}).status_code == 422
