"""pins.* and bookmarks.* through slack_sdk."""

from __future__ import annotations

import pytest
from slack_sdk.errors import SlackApiError


def _error(excinfo: pytest.ExceptionInfo[SlackApiError]) -> str:
    return str(excinfo.value.response["error"])


def _question(slack) -> tuple[str, str]:
    support = slack.channel("support")
    return support, slack.client.conversations_history(channel=support)["messages"][-1]["ts"]


# --- pins -------------------------------------------------------------------------------


def test_pins__add_list_remove_and_pin_count(slack, matches_spec):
    channel, ts = _question(slack)
    added = slack.client.pins_add(channel=channel, timestamp=ts)
    matches_spec("pins.add", added.data)
    listed = slack.client.pins_list(channel=channel)
    matches_spec("pins.list", listed.data)
    [item] = listed["items"]
    bot = slack.client.auth_test()["user_id"]
    assert item["type"] == "message" and item["channel"] == channel and item["created_by"] == bot
    assert item["message"]["ts"] == ts and item["message"]["pinned_to"] == [channel]
    assert slack.client.conversations_history(channel=channel)["pin_count"] == 1
    removed = slack.client.pins_remove(channel=channel, timestamp=ts)
    matches_spec("pins.remove", removed.data)
    assert slack.client.pins_list(channel=channel)["items"] == []
    assert slack.client.conversations_history(channel=channel)["pin_count"] == 0


def test_pins_list__newest_pin_first(slack):
    channel = slack.channel("support")
    posted = [slack.client.chat_postMessage(channel=channel, text=f"step {i}")["ts"] for i in range(2)]
    for ts in posted:
        slack.client.pins_add(channel=channel, timestamp=ts)
    assert [i["message"]["ts"] for i in slack.client.pins_list(channel=channel)["items"]] == posted[::-1]


def test_pins_add__a_pinned_message_is_already_pinned(slack):
    channel, ts = _question(slack)
    slack.client.pins_add(channel=channel, timestamp=ts)
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.pins_add(channel=channel, timestamp=ts)
    assert _error(excinfo) == "already_pinned"


def test_pins_remove__an_unpinned_message_has_no_pin(slack):
    channel, ts = _question(slack)
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.pins_remove(channel=channel, timestamp=ts)
    assert _error(excinfo) == "no_pin"


def test_pins__a_deleted_message_is_no_longer_pinned(slack):
    channel = slack.channel("support")
    ts = slack.client.chat_postMessage(channel=channel, text="pin me")["ts"]
    slack.client.pins_add(channel=channel, timestamp=ts)
    slack.client.chat_delete(channel=channel, ts=ts)
    assert slack.client.pins_list(channel=channel)["items"] == []
    assert slack.client.conversations_history(channel=channel)["pin_count"] == 0


def test_pins__pins_show_in_world_json(slack):
    channel, ts = _question(slack)
    slack.client.pins_add(channel=channel, timestamp=ts)
    [pin] = slack.state()["pins"]
    assert pin["channel"] == channel and pin["ts"] == ts


@pytest.mark.parametrize(("args", "code"), [
    ({"timestamp": "1767603600.000001"}, "message_not_found"),
    ({"timestamp": "yesterday"}, "bad_timestamp"),
    ({}, "no_item_specified"),
])
def test_pins_add__bad_items_get_slacks_errors(slack, args, code):
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.pins_add(channel=slack.channel("support"), **args)
    assert _error(excinfo) == code


def test_pins_add__the_bot_must_be_in_the_channel(slack):
    random = slack.channel("random")
    [hello] = slack.state()["messages"][random]
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.pins_add(channel=random, timestamp=hello["ts"])
    assert _error(excinfo) == "not_in_channel"
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.pins_list(channel="CNOSUCH0000")
    assert _error(excinfo) == "channel_not_found"


# --- bookmarks --------------------------------------------------------------------------


def test_bookmarks__add_edit_list_remove(slack):
    channel = slack.channel("support")
    added = slack.client.bookmarks_add(channel_id=channel, title="Runbook", type="link",
                                       link="https://wiki.acme.test/runbook", emoji=":books:")
    mark = added["bookmark"]
    bot = slack.client.auth_test()["user_id"]
    assert mark["id"].startswith("Bk") and mark["channel_id"] == channel and mark["type"] == "link"
    assert mark["title"] == "Runbook" and mark["emoji"] == ":books:" and mark["last_updated_by_user_id"] == bot
    second = slack.client.bookmarks_add(channel_id=channel, title="Status", type="link",
                                        link="https://status.acme.test")["bookmark"]
    edited = slack.client.bookmarks_edit(channel_id=channel, bookmark_id=mark["id"], title="Runbook v2")
    assert edited["bookmark"]["title"] == "Runbook v2" and edited["bookmark"]["link"] == mark["link"]
    assert edited["bookmark"]["date_updated"] >= mark["date_created"]
    listed = slack.client.bookmarks_list(channel_id=channel)["bookmarks"]
    assert [b["title"] for b in listed] == ["Runbook v2", "Status"]
    assert slack.client.bookmarks_remove(channel_id=channel, bookmark_id=second["id"])["ok"]
    assert [b["id"] for b in slack.client.bookmarks_list(channel_id=channel)["bookmarks"]] == [mark["id"]]
    assert [b["title"] for b in slack.state()["bookmarks"]] == ["Runbook v2"]


@pytest.mark.parametrize(("args", "code"), [
    ({"type": "message", "link": "https://acme.test"}, "invalid_bookmark_type"),
    ({"type": "link", "link": "ftp://acme.test"}, "invalid_link"),
    ({"type": "link"}, "invalid_link"),
    ({"type": "link", "link": "https://acme.test", "emoji": "books"}, "invalid_emoji"),
])
def test_bookmarks_add__bad_bookmarks_get_slacks_errors(slack, args, code):
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.bookmarks_add(channel_id=slack.channel("support"), title="x", **args)
    assert _error(excinfo) == code


def test_bookmarks_edit__an_unknown_bookmark_is_not_found(slack):
    channel = slack.channel("support")
    for call in (lambda: slack.client.bookmarks_edit(channel_id=channel, bookmark_id="Bk0000000000", title="x"),
                 lambda: slack.client.bookmarks_remove(channel_id=channel, bookmark_id="Bk0000000000")):
        with pytest.raises(SlackApiError) as excinfo:
            call()
        assert _error(excinfo) == "not_found"


def test_bookmarks__a_channel_the_caller_cannot_see_is_channel_not_found(slack):
    with pytest.raises(SlackApiError) as excinfo:
        secret = next(c["id"] for c in slack.state()["channels"] if c["name"] == "secret")
        slack.client.bookmarks_list(channel_id=secret)
    assert _error(excinfo) == "channel_not_found"
