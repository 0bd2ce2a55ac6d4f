"""reminders.* through slack_sdk with a person's user token (a bot's token is refused)."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from ancha.server.embedded import EmbeddedServer
from ancha.world.tools.slack.replica import SlackReplica


@pytest.fixture(scope="module")
def server() -> Iterator[EmbeddedServer]:
    # An own server, in this process: a person's token is minted on the replica itself.
    with EmbeddedServer() as running:
        yield running


@pytest.fixture
def workspace(server: EmbeddedServer, slack_scene: dict[str, Any]) -> tuple[dict[str, Any], SlackReplica]:
    body = {"scene": {"name": "reminders", **copy.deepcopy(slack_scene)}, "trial": 1}
    context = httpx.post(f"{server.url}/envs", json=body, timeout=30).json()
    replica = server.app.registry.envs[context["env_id"]].tools["slack"]
    assert isinstance(replica, SlackReplica)
    return context, replica


def _client(workspace: tuple[dict[str, Any], SlackReplica], ref: str | None) -> WebClient:
    context, replica = workspace
    tool = context["tools"]["slack"]
    token = tool["token"] if ref is None else replica.issue_user_token(replica.world.refs[ref].id, f"person:{ref}")
    return WebClient(token=token, base_url=tool["url"] + "/api/")


def _error(excinfo: pytest.ExceptionInfo[SlackApiError]) -> str:
    return str(excinfo.value.response["error"])


def test_reminders_add__a_person_sets_one_and_lists_completes_and_deletes_it(workspace, matches_spec):
    laura = _client(workspace, "laura")
    now = int(workspace[1].world.clock.peek())
    added = laura.reminders_add(text="Call the customer back", time="in 15 minutes")
    matches_spec("reminders.add", added.data)
    reminder = added["reminder"]
    assert reminder["id"].startswith("Rm") and reminder["text"] == "Call the customer back"
    assert now + 900 <= reminder["time"] <= now + 901 and reminder["recurring"] is False
    listed = laura.reminders_list()
    matches_spec("reminders.list", listed.data)
    assert [r["id"] for r in listed["reminders"]] == [reminder["id"]]
    info = laura.reminders_info(reminder=reminder["id"])
    matches_spec("reminders.info", info.data)
    matches_spec("reminders.complete", laura.reminders_complete(reminder=reminder["id"]).data)
    assert laura.reminders_info(reminder=reminder["id"])["reminder"]["complete_ts"] >= now
    matches_spec("reminders.delete", laura.reminders_delete(reminder=reminder["id"]).data)
    with pytest.raises(SlackApiError) as excinfo:
        laura.reminders_info(reminder=reminder["id"])
    assert _error(excinfo) == "not_found"


def test_reminders_add__times_slack_reads_and_one_it_cannot(workspace):
    laura = _client(workspace, "laura")
    now = int(workspace[1].world.clock.peek())
    assert laura.reminders_add(text="a", time=str(now + 7200))["reminder"]["time"] == now + 7200
    assert laura.reminders_add(text="b", time="60")["reminder"]["time"] - now in (60, 61)
    with pytest.raises(SlackApiError) as excinfo:
        laura.reminders_add(text="c", time="whenever you like")
    assert _error(excinfo) == "cannot_parse"


def test_reminders__a_bot_token_is_not_allowed_token_type(workspace):
    with pytest.raises(SlackApiError) as excinfo:
        _client(workspace, None).reminders_add(text="x", time="in 5 minutes")
    assert _error(excinfo) == "not_allowed_token_type"


def test_reminders_add__for_someone_else_is_cannot_add_others(workspace):
    laura = _client(workspace, "laura")
    with pytest.raises(SlackApiError) as excinfo:
        laura.reminders_add(text="x", time="in 5 minutes", user=workspace[1].world.refs["ben"].id)
    assert _error(excinfo) == "cannot_add_others"
    with pytest.raises(SlackApiError) as excinfo:
        laura.reminders_add(text="x", time="in 5 minutes", user=workspace[1].bot.id)
    assert _error(excinfo) == "cannot_add_bot"


def test_reminders__another_persons_reminder_is_not_found(workspace):
    laura, ben = _client(workspace, "laura"), _client(workspace, "ben")
    reminder = laura.reminders_add(text="mine", time="in 1 hour")["reminder"]
    with pytest.raises(SlackApiError) as excinfo:
        ben.reminders_delete(reminder=reminder["id"])
    assert _error(excinfo) == "not_found"
    assert ben.reminders_list()["reminders"] == []
