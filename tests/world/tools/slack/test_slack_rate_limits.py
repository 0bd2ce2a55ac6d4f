"""Slack's rate limits (``world.slack.rate_limits: real``) through slack_sdk: 429 with
Retry-After and ``ratelimited``, budgets that refill in simulated time, chat.postMessage's
per-channel limit, and slack_sdk's own retry handler recovering."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_handlers import RateLimitErrorRetryHandler
from tests.scene.scene_files import problems_of, scene_of, slack_seed

from ancha.server.embedded import EmbeddedServer
from ancha.world.environment import Environment
from ancha.world.tools.slack import rate_limits
from ancha.world.tools.slack.rate_limits import TIERS

Slack = Any  # conftest's Slack: the workspace's URL, bot client and context
SLOW = 0.01
"""A clock speed at which a test's real seconds barely move simulated time: budgets refill
only when the test advances the clock."""


@pytest.fixture(scope="module")
def embedded() -> Iterator[EmbeddedServer]:
    """A server of this module's own, so tests can move an environment's clock."""
    with EmbeddedServer() as server:
        yield server


@pytest.fixture(scope="module")
def ancha_server(embedded: EmbeddedServer) -> str:
    return embedded.url


def _limited(scene: dict[str, Any], speed: float = SLOW) -> dict[str, Any]:
    limited = copy.deepcopy(scene)
    limited["world"]["slack"]["rate_limits"] = "real"
    limited["clock"]["speed"] = speed
    return limited


def _env(embedded: EmbeddedServer, slack: Slack) -> Environment:
    env = embedded.app.registry.get(slack.context["env_id"])
    assert env is not None
    return env


def _trace(slack: Slack) -> list[dict[str, Any]]:
    base = slack.url.rsplit("/slack", 1)[0]
    return [json.loads(line) for line in httpx.get(base + "/trace", timeout=10).text.splitlines()]


def test_rate_limits__off_by_default__many_calls_go_through(slack):
    for _ in range(30):  # past Tier 2's budget of 20
        assert slack.client.conversations_list()["ok"] is True


def test_rate_limits__tier2_past_its_budget__429_ratelimited_with_retry_after(make_slack, slack_scene):
    slack = make_slack(_limited(slack_scene))
    assert TIERS["conversations.list"] == "Tier2"
    for _ in range(20):
        assert slack.client.conversations_list()["ok"] is True
    with pytest.raises(SlackApiError) as caught:
        slack.client.conversations_list()
    response = caught.value.response
    assert response.status_code == 429
    assert response.data == {"ok": False, "error": "ratelimited"}
    # Three simulated seconds refill one of Tier 2's 20 a minute; at speed 0.01 that is 300 real ones.
    assert int(response.headers["Retry-After"]) == 300
    last = _trace(slack)[-1]
    assert (last["method"], last["path"], last["status"], last["worked"]) == ("POST", "/api/conversations.list",
                                                                             429, False)
    # Other methods keep their own budgets.
    assert slack.client.users_list()["ok"] is True


def test_rate_limits__the_budget_refills_as_simulated_time_passes(make_slack, slack_scene, embedded):
    slack = make_slack(_limited(slack_scene))
    env = _env(embedded, slack)
    for _ in range(20):
        slack.client.users_list()
    with pytest.raises(SlackApiError):
        slack.client.users_list()
    env.clock.advance_to(env.clock.peek() + 3.0)  # one call's worth of Tier 2
    assert slack.client.users_list()["ok"] is True
    with pytest.raises(SlackApiError):
        slack.client.users_list()
    env.clock.advance_to(env.clock.peek() + 60.0)  # a whole minute: the full burst again
    for _ in range(20):
        assert slack.client.users_list()["ok"] is True


def test_rate_limits__chat_post_message_is_limited_per_channel(make_slack, slack_scene):
    slack = make_slack(_limited(slack_scene))
    support, ops = slack.channel("support"), slack.channel("ops")
    burst = rate_limits.budget_of("chat.postMessage").burst
    for i in range(burst):
        slack.client.chat_postMessage(channel=support, text=f"update {i}")
    with pytest.raises(SlackApiError) as caught:
        slack.client.chat_postMessage(channel=support, text="one too many")
    assert caught.value.response.status_code == 429
    assert caught.value.response["error"] == "ratelimited"
    assert slack.client.chat_postMessage(channel=ops, text="another channel")["ok"] is True
    texts = [m["text"] for m in slack.client.conversations_history(channel=support, limit=50)["messages"]]
    assert "one too many" not in texts and f"update {burst - 1}" in texts


def test_rate_limits__people_are_never_limited(make_slack, slack_scene, embedded):
    slack = make_slack(_limited(slack_scene))
    env = _env(embedded, slack)
    replica = env.tools["slack"]
    token = replica.issue_user_token(env.refs["laura"].id, "person:laura")  # type: ignore[attr-defined]
    laura = WebClient(token=token, base_url=slack.url + "/api/")
    for _ in range(25):
        assert laura.users_list()["ok"] is True


def test_rate_limits__slack_sdks_retry_handler_waits_and_recovers(make_slack, slack_scene, embedded):
    # At speed 3 a Tier 2 call refills in one real second: Retry-After 1.
    slack = make_slack(_limited(slack_scene, speed=3.0))
    env = _env(embedded, slack)
    limiter = env.tools["slack"].rate_limiter  # type: ignore[attr-defined]
    # Spend the budget as 20 calls would, at once, so the SDK's call below is the one limited.
    for _ in range(20):
        assert limiter.take(slack.token, "conversations.list", None, env.clock.peek()) == 0
    client = WebClient(token=slack.token, base_url=slack.url + "/api/",
                       retry_handlers=[RateLimitErrorRetryHandler(max_retry_count=2)])
    assert client.conversations_list()["ok"] is True
    statuses = [e["status"] for e in _trace(slack) if e["path"] == "/api/conversations.list"]
    assert statuses[0] == 429 and statuses[-1] == 200


def test_rate_limits__a_limited_agent_counts_as_working_until_retry_after(make_slack, slack_scene, embedded):
    slack = make_slack(_limited(slack_scene))
    env = _env(embedded, slack)
    for _ in range(20):
        slack.client.emoji_list()
    assert env._held_until == 0.0
    with pytest.raises(SlackApiError):
        slack.client.emoji_list()
    # Retry-After is 300 real seconds here: the clock must flow through that sleep, not jump.
    assert env._held_until > 0.0 and env.agent_waiting is False


def test_rate_limits__unknown_value__the_walkers_error_lists_the_allowed_ones(tmp_path):
    problems = problems_of(tmp_path, "world:\n  slack:\n    rate_limits: strict\n")
    assert [(p.path, p.message) for p in problems] == [
        ("world.slack.rate_limits", "expected one of off, real, got 'strict'")]


def test_rate_limits__a_scene_file_turns_them_on(tmp_path):
    assert slack_seed(scene_of(tmp_path, "world:\n  slack:\n    rate_limits: real\n")).rate_limits == "real"
    assert slack_seed(scene_of(tmp_path, "world:\n  slack: {}\n")).rate_limits == "off"


def test_rate_limits__retry_after_is_real_seconds_at_the_clocks_speed():
    assert rate_limits.retry_after(3.0, 1.0) == 3
    assert rate_limits.retry_after(3.0, 60.0) == 1
    assert rate_limits.retry_after(60.0, 0.5) == 120
    assert rate_limits.retry_after(2.5, 1.0) == 3


def test_rate_tiers__every_tier_slack_names_has_a_budget():
    assert len(TIERS) >= 326 and TIERS["chat.postMessage"] == "SpecialTier_chat_postMessage"
    assert set(rate_limits.BUDGETS) >= set(TIERS.values())
