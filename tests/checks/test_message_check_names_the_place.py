"""A failed ``message`` check names where the closest messages were: a GitHub comment on the
wrong issue reads as that issue (never as ``None``). PyGithub acts as the agent."""

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
name: comment-place
world:
  github:
    repos:
      - ref: github_orders
        name: acme/orders
        permissions: { ancha-agent: write }
        issues:
          - { ref: github_old, title: "Old crash" }
          - { ref: github_new, title: "New crash" }
checks:
  - { id: told_in_old, message: { in: $github_old, text_contains: rolled back } }
"""


def test_message__a_comment_on_the_wrong_issue_names_that_issue(
    tmp_path: Path, make_env: Callable[..., dict[str, Any]], ancha_server: str
) -> None:
    (tmp_path / "scene.yaml").write_text(SCENE)
    context = make_env(load_scene(tmp_path / "scene.yaml", catalog()).model_dump(mode="json", by_alias=True))
    tool = context["tools"]["github"]
    repo = Github(auth=Auth.Token(tool["token"]), base_url=tool["url"], **UNTHROTTLED).get_repo("acme/orders")
    repo.get_issue(2).create_comment("We rolled back the deploy.")
    answer = httpx.post(f"{ancha_server}/envs/{context['env_id']}/checks", timeout=30)
    [result] = answer.json()["results"]
    assert not result["passed"]
    assert result["actual"] == (
        "1 message was written containing 'rolled back', but it was in "
        "issue acme/orders#2 instead of $github_old"
    )
    assert "None" not in result["explanation"]
