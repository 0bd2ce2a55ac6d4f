"""``issue_labeled`` holds the first time a label is given during the trial: an issue seeded
with the label does not make it hold (the seed was not given during the trial), nor does
giving that issue another label; opening an issue with the label, or adding the last missing
one, does. PyGithub acts as the agent against a real server."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from github import Auth, Github
from tests.pygithub_client import UNTHROTTLED

from ancha.scene import load_scene
from ancha.world.registry import catalog

SCENE = """\
name: labeled-seed
clock: { start: 2026-03-02T09:00:00Z }
world:
  github:
    repos:
      - ref: github_orders
        name: acme/orders
        permissions: { ancha-agent: write }
        labels: [bug, p1]
        issues:
          - { ref: github_crash, title: "Checkout crashes", labels: [p1] }
checks:
  - id: p1_after_reading
    before: [{ called: "GET /repos/acme/orders" }, { issue_labeled: { repo: $github_orders, labels: [p1] } }]
  - id: p1_and_bug_after_reading
    before: [{ called: "GET /repos/acme/orders" }, { issue_labeled: { repo: $github_orders, labels: [p1, bug] } }]
  - id: p1_as_state_after_reading
    before: [{ called: "GET /repos/acme/orders" }, { github.issue: { repo: $github_orders, labels: [p1] } }]
"""


def _world(
    tmp_path: Path, make_env: Callable[..., dict[str, Any]], server: str
) -> tuple[Any, Callable[[], Any]]:
    (tmp_path / "scene.yaml").write_text(SCENE)
    context = make_env(load_scene(tmp_path / "scene.yaml", catalog()).model_dump(mode="json", by_alias=True))
    tool = context["tools"]["github"]
    client = Github(auth=Auth.Token(tool["token"]), base_url=tool["url"], **UNTHROTTLED)

    def grade() -> dict[str, dict[str, Any]]:
        answer = httpx.post(f"{server}/envs/{context['env_id']}/checks", timeout=30)
        assert answer.status_code == 200, answer.text
        return {r["id"]: r for r in answer.json()["results"]}

    return client, grade


def test_issue_labeled__a_seeded_label_never_makes_it_hold(
    tmp_path: Path, make_env: Callable[..., dict[str, Any]], ancha_server: str
) -> None:
    client, grade = _world(tmp_path, make_env, ancha_server)
    repo = client.get_repo("acme/orders")
    repo.get_issue(1).add_to_labels("bug")  # #1 was seeded with p1: giving it bug does not give it p1
    results = grade()
    assert not results["p1_after_reading"]["passed"]
    assert "never happened" in results["p1_after_reading"]["actual"]
    # The set p1 + bug was first complete when the agent gave bug: that is when it held.
    assert results["p1_and_bug_after_reading"]["passed"], results["p1_and_bug_after_reading"]
    # github.issue reads the world as it stands, seed included: it held from the start.
    assert not results["p1_as_state_after_reading"]["passed"]

    repo.create_issue(title="Refunds fail", labels=["p1"])
    assert grade()["p1_after_reading"]["passed"]
