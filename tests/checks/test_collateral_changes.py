"""Collateral changes: what the agent changed in the world that no check mentions ("also changed")."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from slack_sdk import WebClient

from ancha.checks.collateral import Collateral, collateral_changes
from ancha.scene.loading import load_scene
from ancha.scene.model import Scene
from ancha.world.registry import catalog

SCENE_YAML = """\
name: tidy-answer
task: Answer Laura in #support.
world:
  slack:
    users:
      - { ref: slack_laura, name: laura }
    channels:
      - { ref: slack_support, name: support, members: [$slack_bot, $slack_laura] }
      - { ref: slack_general, name: general, members: [$slack_bot, $slack_laura] }
    messages:
      - { ref: slack_question, channel: $slack_support, from: $slack_laura, text: "Where is the export?" }
      - { ref: slack_notice, channel: $slack_general, from: $slack_bot, text: "Deploy freeze until Monday" }
checks:
  - id: answered
    state: { slack.message: { channel: $slack_support, from: $slack_bot, in_thread_of: $slack_question } }
"""

Agent = Callable[[WebClient, dict[str, str]], None]


def answer(slack: WebClient, channels: dict[str, str]) -> None:
    question = slack.conversations_history(channel=channels["support"])["messages"][0]
    slack.chat_postMessage(channel=channels["support"], thread_ts=question["ts"], text="Reports > Export")


def answer_and_tidy(slack: WebClient, channels: dict[str, str]) -> None:
    answer(slack, channels)
    notice = slack.conversations_history(channel=channels["general"])["messages"][0]
    slack.chat_delete(channel=channels["general"], ts=notice["ts"])


def write_scene(folder: Path, extra: str = "") -> Scene:
    path = folder / "scene.yaml"
    path.write_text(SCENE_YAML + extra)
    return load_scene(path, catalog())


def run_trial(ancha_server: str, scene: Scene, agent: Agent) -> tuple[Collateral, list[dict[str, Any]]]:
    """One trial of ``scene`` with ``agent`` on a real world, read as the runner reads it after the trial."""
    with httpx.Client(base_url=ancha_server, timeout=30) as control:
        created = control.post("/envs", json={"scene": scene.model_dump(mode="json", by_alias=True), "trial": 1})
        assert created.status_code == 201, created.text
        context = created.json()
        env = f"/envs/{context['env_id']}"
        try:
            tool = context["tools"]["slack"]
            slack = WebClient(token=tool["token"], base_url=tool["url"] + "/api/")
            channels = {c["name"]: c["id"] for c in slack.conversations_list()["channels"]}
            agent(slack, channels)
            world = control.get(f"{env}/state").content
            trace = [json.loads(line) for line in control.get(f"{env}/trace").text.splitlines()]
        finally:
            control.delete(env)
    return collateral_changes(scene, 1, world, trace), trace


def test_collateral__a_deleted_message_no_check_mentions_is_listed_as_also_changed(
        ancha_server: str, tmp_path: Path) -> None:
    collateral, trace = run_trial(ancha_server, write_scene(tmp_path), answer_and_tidy)
    deleting = next(e["seq"] for e in trace if e["path"] == "/api/chat.delete")
    assert list(collateral.also_changed) == ["slack"]
    (listed,) = collateral.also_changed["slack"]
    assert listed.endswith("removed") and "($slack_notice)" in listed
    removed = next(obj for obj in collateral.agent_changes if obj.ref == "slack_notice")
    assert removed.calls == [deleting]
    assert collateral.unchanged is None  # the scene declares no expect_unchanged


def test_collateral__what_a_check_mentions_is_not_also_changed(ancha_server: str, tmp_path: Path) -> None:
    collateral, trace = run_trial(ancha_server, write_scene(tmp_path), answer)
    posting = next(e["seq"] for e in trace if e["path"] == "/api/chat.postMessage")
    assert collateral.also_changed == {}
    # the agent did change #support (its reply, the question's thread): the check mentions that channel
    assert collateral.agent_changes and all(obj.calls == [posting] for obj in collateral.agent_changes)


def test_collateral__reads_change_nothing(ancha_server: str, tmp_path: Path) -> None:
    def read_only(slack: WebClient, channels: dict[str, str]) -> None:
        for channel in channels.values():
            slack.conversations_history(channel=channel)
        slack.users_list()

    collateral, _trace = run_trial(ancha_server, write_scene(tmp_path), read_only)
    assert collateral.agent_changes == [] and collateral.also_changed == {}
