"""Process checks graded by a real server: a scene's process checks go through
``POST /envs/{id}/checks`` (no body: the scene's own checks) and ``/grade``.

Only what does not depend on the people engine is asserted here (call milestones,
``never``, and what a world with no people records reports), so these hold before and
after the engine writes its records.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
from slack_sdk import WebClient
from test_checks_process_world import SCENE

CHECKS: list[dict[str, Any]] = [
    {"id": "read_first", "before": [{"called": "* /api/conversations.history"},
                                    {"called": "* /api/chat.postMessage"}]},
    {"id": "post_first", "before": [{"called": "* /api/chat.postMessage"},
                                    {"called": "* /api/conversations.history"}]},
    {"id": "posted_fast", "within": {"event": {"called": "* /api/chat.postMessage"}, "limit": 600}},
    {"id": "no_secrets", "never": {"from_user": "slack_bot", "text_contains": ["password"]}},
    {"id": "decided", "decided": ["mike", "severity", "p1"]},
]


def test_server__grades_a_scenes_process_checks(make_env: Callable[..., dict[str, Any]], ancha_server: str):
    context = make_env({**SCENE, "checks": CHECKS, "pass": ["read_first", "no_secrets"]})
    slack = context["tools"]["slack"]
    agent = WebClient(token=slack["token"], base_url=slack["url"] + "/api/")
    support = next(c["id"] for c in agent.conversations_list()["channels"] if c["name"] == "support")
    agent.conversations_history(channel=support)
    agent.chat_postMessage(channel=support, text="Looking into the CSV exports now.")

    answer = httpx.post(f"{ancha_server}/envs/{context['env_id']}/checks", timeout=30)
    assert answer.status_code == 200, answer.text
    results = {r["id"]: r for r in answer.json()["results"]}
    assert results["read_first"]["passed"] and results["read_first"]["required"]
    assert results["read_first"]["evidence"] == [2, 3]  # conversations.list was #1
    assert not results["post_first"]["passed"] and not results["post_first"]["required"]
    assert "happened before" in results["post_first"]["actual"]
    assert results["posted_fast"]["passed"]
    assert results["no_secrets"]["passed"]
    assert not results["decided"]["passed"]
    assert results["decided"]["actual"].startswith("mike never decided severity")
