"""GitHub state checks and predicates, from a scene file, graded by a real server while
PyGithub acts as the agent: the reference's examples, each passing and failing."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from github import Auth, Github
from tests.pygithub_client import UNTHROTTLED

from ancha.scene import SceneInvalid, load_scene
from ancha.world.registry import catalog

SCENE = """\
name: github-checks
clock: { start: 2026-03-02T09:00:00Z }
world:
  github:
    users:
      - { ref: github_laura, login: laura }
      - { ref: github_ben, login: ben }
    orgs: [{ login: acme, members: [$github_laura] }]
    repos:
      - ref: github_orders
        name: acme/orders
        files: { docs/runbook.md: "Restart the pods.\\n", README.md: "orders\\n" }
        permissions: { $github_ben: write, ancha-agent: write }
        commits:
          - { ref: github_good, message: "Known good", files: { app.py: "print('ok')\\n" } }
          - { ref: github_bad, message: "Bad deploy", files: { app.py: "print('slow')\\n" } }
        production: $github_bad
        labels: [bug, p1]
        issues:
          - { ref: github_old, title: "Old crash", author: $github_ben, state: closed }
        pulls:
          - { ref: github_runbook_pr, title: "Runbook", head: runbook, author: $github_ben }
        branches: { runbook: { from: main } }
      - { ref: github_vault, name: acme/vault, private: true }
checks:
  - id: runbook_updated
    state: { github.file_at: [$github_orders, main, docs/runbook.md], contains: "verified health check" }
  - id: runbook_still_old
    state: { github.file_at: [$github_orders, default, docs/runbook.md], equals: "Restart the pods.\\n" }
  - id: good_code_at_commit
    state: { github.file_at: [$github_orders, $github_good, app.py], contains: "ok" }
  - id: pr_merged
    state: { github.pull: { pull: $github_runbook_pr, merged: true } }
  - id: rolled_back
    state: { github.production: { repo: $github_orders, commit: $github_good } }
  - id: issue_filed
    state: { github.issue: { repo: $github_orders, body_contains: [CSV, export], labels: [bug], state: open, count: 1 } }
  - id: ben_writes
    state: { github.permission: { repo: $github_orders, user: $github_ben, is: write } }
  - id: laura_vault
    state: { github.permission: { repo: $github_vault, user: $github_laura, is: write } }
  - id: ben_vault
    state: { github.permission: { repo: $github_vault, user: $github_ben, is: none } }
  - id: runbook_fixed_fast
    within:
      event: { github.file_at: [$github_orders, main, docs/runbook.md], contains: "verified health check" }
      limit: 30m
  - id: labeled_after_filing
    before: [{ called: "POST /repos/*/issues" }, { issue_labeled: { repo: $github_orders, labels: [p1] } }]
"""


@pytest.fixture
def github_world(tmp_path: Path, make_env: Callable[..., dict[str, Any]], ancha_server: str) -> \
        Callable[[], dict[str, Any]]:
    (tmp_path / "scene.yaml").write_text(SCENE)
    scene = load_scene(tmp_path / "scene.yaml", catalog())
    context = make_env(scene.model_dump(mode="json", by_alias=True))
    tool = context["tools"]["github"]
    context["client"] = Github(auth=Auth.Token(tool["token"]), base_url=tool["url"], **UNTHROTTLED)

    def grade() -> dict[str, Any]:
        answer = httpx.post(f"{ancha_server}/envs/{context['env_id']}/checks", timeout=30)
        assert answer.status_code == 200, answer.text
        return {r["id"]: r for r in answer.json()["results"]}

    context["grade"] = grade
    return lambda: context


def test_github_checks__the_seeded_world(github_world: Callable[[], dict[str, Any]]) -> None:
    results = github_world()["grade"]()
    assert not results["runbook_updated"]["passed"]
    assert "does not contain it" in results["runbook_updated"]["actual"]
    assert results["runbook_still_old"]["passed"]
    assert results["good_code_at_commit"]["passed"]
    assert not results["pr_merged"]["passed"] and "not merged (open)" in results["pr_merged"]["actual"]
    assert not results["rolled_back"]["passed"] and "production runs" in results["rolled_back"]["actual"]
    assert not results["issue_filed"]["passed"]
    assert "the closest, #1, fails because" in results["issue_filed"]["actual"]
    assert not results["runbook_fixed_fast"]["passed"]
    assert results["ben_writes"]["passed"]
    # An org member reads the org's private repositories (the org's base role), no more.
    assert not results["laura_vault"]["passed"] and results["laura_vault"]["actual"] == "it is read (role read)"
    assert results["ben_vault"]["passed"] and results["ben_vault"]["actual"] == "it is none (no access)"


def test_github_checks__after_the_agent_works(github_world: Callable[[], dict[str, Any]]) -> None:
    context = github_world()
    repo = context["client"].get_repo("acme/orders")
    runbook = repo.get_contents("docs/runbook.md", ref="main")
    assert not isinstance(runbook, list)
    repo.update_file("docs/runbook.md", "Runbook fix", "Restart the pods, then run the verified health check.\n",
                     runbook.sha, branch="main")
    issue = repo.create_issue(title="CSV exports fail", body="The CSV export button does nothing.",
                              labels=["bug"])
    issue.add_to_labels("p1")
    results = context["grade"]()
    assert results["runbook_updated"]["passed"], results["runbook_updated"]
    assert not results["runbook_still_old"]["passed"]
    assert results["issue_filed"]["passed"], results["issue_filed"]
    assert results["labeled_after_filing"]["passed"], results["labeled_after_filing"]
    # The push moved main (a ref_updated event): the file_at milestone was watched and held.
    assert results["runbook_fixed_fast"]["passed"], results["runbook_fixed_fast"]


def test_github_file_at__needs_exactly_one_of_contains_or_equals(tmp_path: Path) -> None:
    text = SCENE.split("checks:")[0] + (
        "checks:\n"
        "  - { id: a, state: { github.file_at: [$github_orders, main, x.md] } }\n"
        "  - { id: b, state: { github.file_at: [$github_orders, main, x.md], contains: x, equals: y } }\n"
        "  - { id: c, state: { github.pull: { pull: $github_orders, merged: true } } }\n"
        "  - { id: d, state: { github.issue: { repo: $github_orders, count: 1, count_gte: 1 } } }\n"
        "  - { id: e, state: { github.pull: { pull: $github_runbook_pr, merged: true }, contains: x } }\n")
    (tmp_path / "scene.yaml").write_text(text)
    with pytest.raises(SceneInvalid) as caught:
        load_scene(tmp_path / "scene.yaml", catalog())
    found = [f"{p.path}: {p.message}" for p in caught.value.problems]
    assert found == [
        "checks[0].state: github.file_at needs exactly one of contains or equals",
        "checks[1].state: github.file_at takes one of contains or equals, not both",
        "checks[2].state.github.pull.pull: $github_orders is a repo, not a pull",
        "checks[3].state.github.issue.count: count is not used together with count_gte or count_lte",
        "checks[4].state.contains: only applies with github.file_at",
    ]


PRIORITY_SCENE = """\
name: priority-before-label
clock: { start: 2026-03-02T09:00:00Z, limit: 2h }
world:
  slack:
    users: [{ ref: slack_mike, name: mike }]
    channels: [{ ref: slack_eng, name: eng, members: [$slack_bot, $slack_mike] }]
  github:
    users: [{ ref: github_mike, login: mike }]
    repos:
      - ref: github_orders
        name: acme/orders
        permissions: { github_agent: write }
        labels: [p1]
        issues: [{ ref: github_exports, number: 13, title: CSV exports fail, author: $github_mike }]
people:
  mike:
    name: Mike Chen
    accounts: { slack: $slack_mike, github: $github_mike }
    listens: [$slack_eng]
    replies_after: 5m
    decisions:
      severity: { asked_by: [severity], options: [p1, p2, p3], chooses: p1, text: "Let's treat it as {option}." }
checks:
  - { id: priority_before_label, before: [{ decided: [mike, severity, p1] }, { called: "POST /repos/*/issues/*/labels" }] }
"""


def _priority_world(tmp_path: Path, make_env: Callable[..., dict[str, Any]]) -> dict[str, Any]:
    (tmp_path / "scene.yaml").write_text(PRIORITY_SCENE)
    return make_env(load_scene(tmp_path / "scene.yaml", catalog()).model_dump(mode="json", by_alias=True))


def _ask_mike_and_wait(context: dict[str, Any]) -> None:
    from slack_sdk import WebClient

    slack = context["tools"]["slack"]
    client = WebClient(token=slack["token"], base_url=slack["url"] + "/api/")
    eng = client.conversations_list()["channels"][0]["id"]
    client.chat_postMessage(channel=eng, text="mike, what severity should CSV exports failing be?")
    cursor = "0"
    feed = httpx.Client(timeout=30, headers={"authorization": f"Bearer {context['events']['token']}"})
    until = time.monotonic() + 60
    while time.monotonic() < until:  # waiting on the feed lets the clock jump to Mike's answer
        body = feed.get(context["events"]["url"], params={"after": cursor, "wait": "20s"}).json()
        cursor = body["cursor"]
        if any("p1" in str(e["payload"].get("event", {}).get("text")) for e in body["events"]):
            return
    raise AssertionError("Mike never answered")


def _label(context: dict[str, Any]) -> None:
    tool = context["tools"]["github"]
    Github(auth=Auth.Token(tool["token"]), base_url=tool["url"], **UNTHROTTLED).get_repo("acme/orders").get_issue(13) \
        .add_to_labels("p1")


def test_reference_priority_before_label__runs_verbatim_on_github(
        tmp_path: Path, make_env: Callable[..., dict[str, Any]], ancha_server: str) -> None:
    context = _priority_world(tmp_path, make_env)
    _ask_mike_and_wait(context)
    _label(context)
    [result] = httpx.post(f"{ancha_server}/envs/{context['env_id']}/checks", timeout=30).json()["results"]
    assert result["passed"], result
    assert len(result["evidence"]) == 2, result  # the decision's message, then the labels call


def test_reference_priority_before_label__labeling_first_fails(
        tmp_path: Path, make_env: Callable[..., dict[str, Any]], ancha_server: str) -> None:
    context = _priority_world(tmp_path, make_env)
    _label(context)
    _ask_mike_and_wait(context)
    [result] = httpx.post(f"{ancha_server}/envs/{context['env_id']}/checks", timeout=30).json()["results"]
    assert not result["passed"], result
    assert "POST /repos/*/issues/*/labels" in result["actual"], result
