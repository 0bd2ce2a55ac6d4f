"""What slack_sdk's own integration tests (integration_tests/web) found missing, pinned
through slack_sdk: message metadata in both documented shapes, files.remote.*,
team.billing.info, team.preferences.list, and the ``while True: users_list()`` loop that
only a rate limit ends."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import httpx
import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.models.metadata import (
    EntityMetadata,
    EntityPayload,
    EventAndEntityMetadata,
    ExternalRef,
    Metadata,
)
from slack_sdk.web.async_client import AsyncWebClient


def _error(excinfo: pytest.ExceptionInfo[SlackApiError]) -> str:
    return str(excinfo.value.response["error"])


_ENTITY = {
    "entity_type": "slack#/entities/task",
    "url": "https://tasks.example.com/123",
    "external_ref": {"id": "123"},
    "entity_payload": {"attributes": {"title": {"text": "My task"}}},
}


# --- message metadata -----------------------------------------------------------------


def test_metadata__event_shape_is_kept_updated_and_scheduled(slack):
    support = slack.channel("support")
    posted = slack.client.chat_postMessage(
        channel=support, text="m", metadata=Metadata(event_type="task_created", event_payload={"id": "1"})
    )
    assert posted["message"]["metadata"] == {"event_type": "task_created", "event_payload": {"id": "1"}}
    updated = slack.client.chat_update(
        channel=support,
        ts=posted["ts"],
        text="m2",
        metadata={"event_type": "task_updated", "event_payload": {"id": "1"}},
    )
    assert updated["message"]["metadata"]["event_type"] == "task_updated"
    [latest] = slack.client.conversations_history(channel=support, limit=1, include_all_metadata=True)[
        "messages"
    ]
    assert latest["metadata"]["event_type"] == "task_updated"
    post_at = int(float(updated["message"]["edited"]["ts"])) + 60  # a minute after the world's now
    scheduled = slack.client.chat_scheduleMessage(
        channel=support, text="later", post_at=post_at, metadata={"event_type": "later", "event_payload": {}}
    )
    assert scheduled["message"]["metadata"] == {"event_type": "later", "event_payload": {}}


def test_metadata__work_object_entities_are_accepted(slack):
    support = slack.channel("support")
    posted = slack.client.chat_postMessage(channel=support, text="task", metadata={"entities": [_ENTITY]})
    assert posted["ok"] and "warning" not in posted.data
    assert posted["message"]["metadata"]["entities"][0]["external_ref"] == {"id": "123"}
    modelled = EventAndEntityMetadata(
        entities=[
            EntityMetadata(
                entity_type="slack#/entities/task",
                external_ref=ExternalRef(id="abc"),
                url="https://tasks.example.com/abc",
                entity_payload=EntityPayload(attributes={"title": {"text": "Modelled"}}),
            )
        ]
    )
    assert slack.client.chat_postMessage(channel=support, text="task", metadata=modelled)["ok"]


def test_metadata__both_shapes_at_once(slack):
    metadata = {"event_type": "task_created", "event_payload": {"id": "1"}, "entities": [_ENTITY]}
    posted = slack.client.chat_postMessage(channel=slack.channel("support"), text="both", metadata=metadata)
    assert posted["message"]["metadata"] == metadata


@pytest.mark.parametrize(
    ("metadata", "message"),
    [
        ({"event_payload": {}}, "[ERROR] missing required field: event_type [json-pointer:/metadata]"),
        ({"entities": []}, "[ERROR] entities must be a non-empty array [json-pointer:/metadata/entities]"),
        (
            {"entities": [{**_ENTITY, "url": None}]},
            "[ERROR] url must be a string [json-pointer:/metadata/entities/0/url]",
        ),
        (
            {"entities": [{k: v for k, v in _ENTITY.items() if k != "entity_type"}]},
            "[ERROR] missing required field: entity_type [json-pointer:/metadata/entities/0]",
        ),
        (
            {"entities": [{**_ENTITY, "external_ref": {}}]},
            "[ERROR] missing required field: id [json-pointer:/metadata/entities/0/external_ref]",
        ),
    ],
)
def test_metadata__a_malformed_shape_says_which_field(slack, metadata, message):
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.chat_postMessage(channel=slack.channel("support"), text="x", metadata=metadata)
    assert _error(excinfo) == "invalid_arguments"
    assert excinfo.value.response["response_metadata"]["messages"] == [message]


# --- files.remote.* -------------------------------------------------------------------


def test_files_remote__add_share_info_list_update_remove(slack):
    support = slack.channel("support")
    added = slack.client.files_remote_add(
        external_id="doc-1",
        external_url="https://docs.example.com/1",
        title="Design doc",
        indexable_file_contents=b"so many keywords",
        preview_image=b"\x89PNG\r\n\x1a\n",
    )["file"]
    assert added["mode"] == "external" and added["is_external"] and added["external_id"] == "doc-1"
    assert added["url_private"] == "https://docs.example.com/1" and added["has_rich_preview"]
    assert added["permalink"].startswith(slack.url + "/files/")
    assert httpx.get(added["permalink"], timeout=10).status_code == 200
    again = slack.client.files_remote_add(
        external_id="doc-1", external_url="https://docs.example.com/1b", title="Design doc v2"
    )["file"]
    assert again["id"] == added["id"] and again["title"] == "Design doc v2"  # an upsert
    shared = slack.client.files_remote_share(external_id="doc-1", channels=support)["file"]
    assert shared["channels"] == [support]
    [message] = slack.client.conversations_history(channel=support, limit=1)["messages"]
    assert message["files"][0]["id"] == added["id"]
    assert (
        slack.client.files_remote_info(file=added["id"])["file"]["external_url"]
        == "https://docs.example.com/1b"
    )
    listed = slack.client.files_remote_list(channel=support)
    assert [f["id"] for f in listed["files"]] == [added["id"]] and listed["response_metadata"][
        "next_cursor"
    ] == ""
    updated = slack.client.files_remote_update(file=added["id"], title="Final")["file"]
    assert updated["title"] == "Final"
    assert slack.client.files_remote_remove(external_id="doc-1")["ok"]
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.files_remote_info(external_id="doc-1")
    assert _error(excinfo) == "file_not_found"


def test_files_remote__list_pages_with_a_cursor(slack):
    for i in range(3):
        slack.client.files_remote_add(
            external_id=f"p{i}", external_url=f"https://x.example/{i}", title=f"P{i}"
        )
    first = slack.client.files_remote_list(limit=2)
    second = slack.client.files_remote_list(limit=2, cursor=first["response_metadata"]["next_cursor"])
    assert [f["title"] for f in first["files"] + second["files"]] == ["P2", "P1", "P0"]
    assert second["response_metadata"]["next_cursor"] == ""


@pytest.mark.parametrize(
    ("call", "code"),
    [
        (lambda c: c.files_remote_info(file="F0NOPE", external_id="nope"), "too_many_ids"),
        (lambda c: c.files_remote_info(external_id="never-added"), "file_not_found"),
        (lambda c: c.files_remote_share(external_id="never-added", channels="C1"), "file_not_found"),
        (
            lambda c: c.files_remote_add(external_id="x" * 256, external_url="https://x", title="t"),
            "invalid_external_id",
        ),
        (
            lambda c: c.files_remote_add(external_id="e", external_url="https://x", title="t" * 256),
            "bad_title",
        ),
    ],
)
def test_files_remote__errors(slack, call, code):
    with pytest.raises(SlackApiError) as excinfo:
        call(slack.client)
    assert _error(excinfo) == code


def test_files_remote__share_into_a_channel_the_bot_cannot_see(slack):
    slack.client.files_remote_add(external_id="s", external_url="https://x.example/s", title="S")
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.files_remote_share(external_id="s", channels=slack.channel("random"))
    assert _error(excinfo) == "not_in_channel"


# --- team.* ---------------------------------------------------------------------------


def test_team_billing_info__the_free_plan(slack):
    assert slack.client.team_billing_info().data == {"ok": True, "plan": ""}


def test_team_preferences_list__a_new_workspaces_defaults(slack):
    answer = slack.client.team_preferences_list().data
    assert answer == {
        "ok": True,
        "msg_edit_window_mins": -1,
        "display_real_names": False,
        "disable_file_uploads": "allow_all",
        "who_can_post_general": "everyone",
    }


# --- the loop that only a rate limit ends ---------------------------------------------


def test_users_list_loop__ends_at_the_rate_limit_with_retry_after(make_slack, slack_scene):
    """slack_sdk's test_issue_1143 calls users.list until Slack answers 429: with
    ``rate_limits: real`` that is after Tier 2's burst, for both clients."""
    scene: dict[str, Any] = copy.deepcopy(slack_scene)
    scene["world"]["slack"]["rate_limits"] = "real"
    slack = make_slack(scene)
    calls = 0
    with pytest.raises(SlackApiError) as excinfo:
        while calls < 100:
            calls += 1
            slack.client.users_list()
    assert (
        excinfo.value.response.status_code == 429 and int(excinfo.value.response.headers["Retry-After"]) >= 1
    )
    assert calls == 21

    async def loop() -> Any:
        client = AsyncWebClient(token=slack.token, base_url=slack.url + "/api/")
        for _ in range(100):
            await client.conversations_list()
        raise AssertionError("never limited")

    with pytest.raises(SlackApiError) as excinfo:
        asyncio.run(loop())
    assert excinfo.value.response.status_code == 429 and excinfo.value.response.headers["Retry-After"]


# --- calls.* --------------------------------------------------------------------------


def test_calls__add_post_info_participants_update_end(slack):
    """slack_sdk's test_calls: register a Call, show it in a call block, change it, end it."""
    laura = next(u["id"] for u in slack.client.users_list()["members"] if u["name"] == "laura")
    anon = {"external_id": "anon-1", "display_name": "Guest", "avatar_url": "https://calls.example/a.png"}
    added = slack.client.calls_add(
        external_unique_id="ext-1",
        join_url="https://calls.example/1",
        title="Sync",
        users=[{"slack_id": laura}, anon],
    )["call"]
    assert added["id"].startswith("R") and added["users"] == [{"slack_id": laura}, anon]
    assert slack.client.chat_postMessage(
        channel=slack.channel("support"), text="call", blocks=[{"type": "call", "call_id": added["id"]}]
    )["ok"]
    guest = {"external_id": "anon-2", "display_name": "Guest 2", "avatar_url": "https://calls.example/b.png"}
    slack.client.calls_participants_add(id=added["id"], users=[guest])
    slack.client.calls_participants_remove(id=added["id"], users=[anon])
    assert slack.client.calls_info(id=added["id"])["call"]["users"] == [{"slack_id": laura}, guest]
    updated = slack.client.calls_update(id=added["id"], join_url="https://calls.example/2")["call"]
    assert updated["join_url"] == "https://calls.example/2"
    assert slack.client.calls_end(id=added["id"], duration=120)["ok"]
    assert slack.client.calls_info(id=added["id"])["call"]["duration"] == 120


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda c: c.calls_info(id="R0NOPE"), "[ERROR] no Call with id R0NOPE [json-pointer:/id]"),
        (
            lambda c: c.calls_add(
                external_unique_id="e", join_url="https://x", users=[{"slack_id": "U0NOPE"}]
            ),
            "[ERROR] unknown slack_id U0NOPE [json-pointer:/users/0]",
        ),
    ],
)
def test_calls__errors_name_the_argument(slack, call, message):
    with pytest.raises(SlackApiError) as excinfo:
        call(slack.client)
    assert _error(excinfo) == "invalid_arguments"
    assert excinfo.value.response["response_metadata"]["messages"] == [message]


# --- canvases.* -----------------------------------------------------------------------

_MARKDOWN = "# My canvas\n\n## Hey\n\nWhat's up?\n\n- foo\n- bar\n"


def test_canvases__create_lookup_edit_share_delete(slack):
    """slack_sdk's test_canvases: a channel canvas, then a standalone one edited by section."""
    channel = slack.client.conversations_create(name="canvas-room")["channel"]["id"]
    content = {"type": "markdown", "markdown": _MARKDOWN}
    assert slack.client.conversations_canvases_create(channel_id=channel, document_content=content)["ok"]
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.conversations_canvases_create(channel_id=channel, document_content=content)
    assert _error(excinfo) == "channel_canvas_already_exists"
    canvas = slack.client.canvases_create(title="My canvas", document_content=content)["canvas_id"]
    [hey] = slack.client.canvases_sections_lookup(canvas_id=canvas, criteria={"contains_text": "Hey"})[
        "sections"
    ]
    headers = slack.client.canvases_sections_lookup(
        canvas_id=canvas, criteria={"section_types": ["any_header"]}
    )
    assert len(headers["sections"]) == 2 and hey in headers["sections"]
    slack.client.canvases_edit(
        canvas_id=canvas,
        changes=[
            {
                "operation": "replace",
                "section_id": hey["id"],
                "document_content": {"type": "markdown", "markdown": "## Hey Hey"},
            }
        ],
    )
    assert slack.client.canvases_sections_lookup(canvas_id=canvas, criteria={"contains_text": "Hey Hey"})[
        "sections"
    ]
    me = slack.client.auth_test()["user_id"]
    assert slack.client.canvases_access_set(canvas_id=canvas, access_level="write", user_ids=[me])["ok"]
    assert slack.client.canvases_access_delete(canvas_id=canvas, user_ids=[me])["ok"]
    assert slack.client.canvases_delete(canvas_id=canvas)["ok"]
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.canvases_delete(canvas_id=canvas)
    assert _error(excinfo) == "canvas_not_found"
