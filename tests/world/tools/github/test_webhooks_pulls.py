"""``pull_request``, ``pull_request_review``, ``pull_request_review_comment``, ``deployment``
and ``deployment_status`` webhooks, each validated against the vendor's webhook schema."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from test_webhooks import Hooks, hooks_for

PULLS = "/repos/acme/shop/pulls"


def shop_seed(seed: dict[str, Any]) -> dict[str, Any]:
    """The shared seed plus ``acme/shop`` with a ``feature`` branch two commits ahead of ``main``."""
    seed["repos"].append({
        "ref": "shop", "name": "acme/shop", "permissions": {"github_agent": "write", "gh_carol": "write"},
        "files": {"README.md": "# shop\n", "app.py": "print('v1')\n"}, "branches": {"feature": {"from": "main"}},
        "labels": [{"name": "bug", "color": "d73a4a"}],
        "commits": [
            {"branch": "feature", "message": "Add checkout", "files": {"checkout.py": "total = 1\n"}},
            {"branch": "feature", "message": "Tidy app", "files": {"app.py": "print('v2')\n"}},
        ],
    })
    return seed


@pytest.fixture
def shop(make_github: Callable[..., Any], github_seed: dict[str, Any], embedded_server: Any) -> Hooks:
    return hooks_for(make_github(shop_seed(github_seed)), embedded_server)


def _open(shop: Hooks, token: str | None = None) -> dict[str, Any]:
    pull: dict[str, Any] = shop.as_person("POST", PULLS, token=token, json={
        "title": "Checkout", "head": "feature", "base": "main", "body": "Adds checkout"})
    return pull


def test_pull_request_opened(shop: Hooks) -> None:
    made = _open(shop)
    [(kind, body)] = shop.take()
    assert (kind, body["action"], body["number"]) == ("pull_request", "opened", made["number"])
    pull = body["pull_request"]
    assert (pull["title"], pull["head"]["ref"], pull["base"]["ref"]) == ("Checkout", "feature", "main")
    assert pull["head"]["sha"] == made["head"]["sha"] and pull["merged"] is False
    assert pull["head"]["repo"]["full_name"] == "acme/shop" and "user_view_type" not in pull["user"]
    assert body["sender"]["login"] == "laura"


def test_pull_request_edited_labeled_closed_reopened(shop: Hooks) -> None:
    number = _open(shop)["number"]
    shop.take()
    shop.as_person("PATCH", f"{PULLS}/{number}", json={"title": "Checkout v2"})
    shop.as_person("POST", f"/repos/acme/shop/issues/{number}/labels", json={"labels": ["bug"]})
    shop.as_person("PATCH", f"{PULLS}/{number}", json={"state": "closed"})
    shop.as_person("PATCH", f"{PULLS}/{number}", json={"state": "open"})
    delivered = shop.take()
    assert [(k, b["action"]) for k, b in delivered] == [
        ("pull_request", "edited"), ("pull_request", "labeled"), ("pull_request", "closed"),
        ("pull_request", "reopened")]
    edited, labeled, closed, reopened = (b for _, b in delivered)
    assert edited["changes"] == {"title": {"from": "Checkout"}}
    assert labeled["label"]["name"] == "bug"
    assert closed["pull_request"]["merged"] is False and closed["pull_request"]["state"] == "closed"
    assert reopened["pull_request"]["state"] == "open"


def test_pull_request_closed_reopened__through_the_issues_api(shop: Hooks) -> None:
    number = _open(shop)["number"]
    shop.take()
    closed_issue = shop.as_person("PATCH", f"/repos/acme/shop/issues/{number}", json={"state": "closed"})
    assert closed_issue["state"] == "closed" and "pull_request" in closed_issue
    [(kind, closed)] = shop.take()
    assert (kind, closed["action"], closed["number"]) == ("pull_request", "closed", number)
    assert closed["pull_request"]["merged"] is False and closed["pull_request"]["state"] == "closed"
    shop.as_person("PATCH", f"/repos/acme/shop/issues/{number}", json={"state": "open"})
    [(kind, reopened)] = shop.take()
    assert (kind, reopened["action"]) == ("pull_request", "reopened")
    assert reopened["pull_request"]["state"] == "open"


def test_pull_request_closed__merged(shop: Hooks) -> None:
    number = _open(shop)["number"]
    shop.take()
    merged = shop.as_person("PUT", f"{PULLS}/{number}/merge", json={"merge_method": "squash"})
    delivered = shop.take()
    kinds = [(k, b.get("action")) for k, b in delivered]
    assert kinds.count(("pull_request", "closed")) == 1
    assert ("push", None) in kinds  # the base branch moved
    closed = next(b for k, b in delivered if k == "pull_request")
    assert closed["pull_request"]["merged"] is True
    assert closed["pull_request"]["merge_commit_sha"] == merged["sha"]
    assert closed["pull_request"]["merged_by"]["login"] == "laura"
    push = next(b for k, b in delivered if k == "push")
    assert (push["ref"], push["after"]) == ("refs/heads/main", merged["sha"])


def test_pull_request_review_requested(shop: Hooks) -> None:
    number = _open(shop)["number"]
    shop.take()
    shop.as_person("POST", f"{PULLS}/{number}/requested_reviewers", json={"reviewers": ["ben", "carol"]})
    delivered = shop.take()
    assert [(k, b["action"], b["requested_reviewer"]["login"]) for k, b in delivered] == [
        ("pull_request", "review_requested", "ben"), ("pull_request", "review_requested", "carol")]


def test_pull_request_review_submitted(shop: Hooks) -> None:
    number = _open(shop)["number"]
    shop.take()
    review = shop.as_person("POST", f"{PULLS}/{number}/reviews", token=shop.ben,
                            json={"event": "APPROVE", "body": "Ship it"})
    [(kind, body)] = shop.take()
    assert (kind, body["action"]) == ("pull_request_review", "submitted")
    assert body["review"]["id"] == review["id"] and body["review"]["state"] == "approved"
    assert body["review"]["body"] == "Ship it" and body["sender"]["login"] == "ben"
    assert "merged" not in body["pull_request"]  # simple-pull-request


def test_pull_request_review_comment_created(shop: Hooks) -> None:
    made = _open(shop)
    shop.take()
    note = shop.as_person("POST", f"{PULLS}/{made['number']}/comments", token=shop.ben, json={
        "body": "Name this total_cents", "commit_id": made["head"]["sha"], "path": "checkout.py", "line": 1,
        "side": "RIGHT"})
    [(kind, body)] = shop.take()
    assert (kind, body["action"]) == ("pull_request_review_comment", "created")
    assert body["comment"]["id"] == note["id"] and body["comment"]["path"] == "checkout.py"
    assert body["pull_request"]["number"] == made["number"]


def test_pull_request__agents_own_not_delivered(shop: Hooks) -> None:
    made = shop.gh.raw("POST", PULLS, json={"title": "Mine", "head": "feature", "base": "main"})
    assert made.status_code == 201
    assert shop.gh.raw("PUT", f"{PULLS}/{made.json()['number']}/merge", json={}).status_code == 200
    assert shop.take() == []


# --- deployments: the replica publishes these from its deployments routes ------------------------


def _publish(shop: Hooks, type: str, login: str, **data: Any) -> None:
    replica = shop.gh.replica
    repo = replica.state.repo("acme", "shop")
    replica.publish(type, repo, replica.state.user(login), f"person:{login}", **data)


def test_deployment_created_and_status(shop: Hooks) -> None:
    sha = shop.gh.raw("GET", "/repos/acme/shop/branches/main").json()["commit"]["sha"]
    _publish(shop, "deployment_created", "laura", deployment_id=42, ref="main", sha=sha, environment="production")
    _publish(shop, "deployment_status_created", "ben", deployment_id=42, state="success", environment="production",
             status_id=7)
    delivered = shop.take()
    assert [(k, b["action"]) for k, b in delivered] == [("deployment", "created"), ("deployment_status", "created")]
    deployment, status = (b for _, b in delivered)
    assert (deployment["deployment"]["id"], deployment["deployment"]["sha"]) == (42, sha)
    assert deployment["deployment"]["environment"] == "production"
    assert (deployment["workflow"], deployment["workflow_run"]) == (None, None)
    assert (status["deployment_status"]["state"], status["deployment_status"]["id"]) == ("success", 7)
    assert status["deployment_status"]["deployment_url"] == status["deployment"]["url"]
    assert status["sender"]["login"] == "ben"


def test_deployment__stored_deployment_is_rendered(shop: Hooks) -> None:
    repo = shop.gh.replica.state.repo("acme", "shop")
    base = shop.gh.replica.base_url
    stored = {"url": f"{base}/repos/acme/shop/deployments/9", "id": 9, "node_id": "DE_9", "sha": "a" * 40,
              "ref": "v1", "task": "deploy:migrations", "payload": {"db": True}, "original_environment": "staging",
              "environment": "staging", "description": "Migrate", "creator": copy.deepcopy(
                  repo.owner.simple(base)), "created_at": "2026-03-02T09:00:00Z",
              "updated_at": "2026-03-02T09:00:00Z", "statuses_url": f"{base}/repos/acme/shop/deployments/9/statuses",
              "repository_url": f"{base}/repos/acme/shop", "transient_environment": False,
              "production_environment": False}
    repo.extra["deployments"] = {9: stored}
    _publish(shop, "deployment_created", "laura", deployment_id=9, ref="v1", sha="a" * 40, environment="staging")
    [(kind, body)] = shop.take()
    assert (kind, body["deployment"]["task"], body["deployment"]["payload"]) == ("deployment", "deploy:migrations",
                                                                                {"db": True})
