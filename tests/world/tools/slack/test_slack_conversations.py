"""conversations.* through slack_sdk: listing, reading, pagination, joining, DMs."""

from __future__ import annotations

import pytest
from slack_sdk.errors import SlackApiError


def _error(excinfo: pytest.ExceptionInfo[SlackApiError]) -> str:
    return str(excinfo.value.response["error"])


def _post(slack, channel: str, n: int) -> list[str]:
    return [slack.client.chat_postMessage(channel=channel, text=f"m{i}")["ts"] for i in range(n)]


def test_history__newest_first_with_seeded_messages(slack, matches_spec):
    support = slack.channel("support")
    posted = _post(slack, support, 3)
    answer = slack.client.conversations_history(channel=support)
    matches_spec("conversations.history", answer.data)
    tss = [m["ts"] for m in answer["messages"]]
    assert tss[:3] == posted[::-1]
    assert answer["messages"][-1]["text"] == "Where did CSV exports go?"
    assert answer["has_more"] is False


def test_history__pages_through_every_message_with_cursors(slack):
    support = slack.channel("support")
    posted = _post(slack, support, 25)
    seen: list[str] = []
    pages = 0
    for page in slack.client.conversations_history(channel=support, limit=7):
        pages += 1
        seen += [m["ts"] for m in page["messages"]]
    assert pages == 4  # 26 top-level messages (25 + the seeded question), 7 a page
    assert seen[:25] == posted[::-1]
    assert len(seen) == len(set(seen)) == 26


def test_history__oldest_latest_inclusive(slack):
    support = slack.channel("support")
    a, b, c, d = _post(slack, support, 4)
    window = slack.client.conversations_history(channel=support, oldest=a, latest=d)
    assert [m["ts"] for m in window["messages"]] == [c, b]
    inclusive = slack.client.conversations_history(channel=support, oldest=a, latest=d, inclusive=True)
    assert [m["ts"] for m in inclusive["messages"]] == [d, c, b, a]


def test_history__invalid_ts(slack):
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.conversations_history(channel=slack.channel("support"), latest="yesterday")
    assert _error(excinfo) == "invalid_ts_latest"
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.conversations_history(channel=slack.channel("support"), oldest="-1")
    assert _error(excinfo) == "invalid_ts_oldest"


def test_history__not_in_channel_for_a_public_channel_the_bot_is_not_in(slack):
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.conversations_history(channel=slack.channel("random"))
    assert _error(excinfo) == "not_in_channel"


def test_history__private_channel_the_bot_is_not_in_does_not_exist(slack):
    state = slack.state()
    secret = next(c["id"] for c in state["channels"] if c["name"] == "secret")
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.conversations_history(channel=secret)
    assert _error(excinfo) == "channel_not_found"
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.conversations_info(channel=secret)
    assert _error(excinfo) == "channel_not_found"


def test_history__invalid_cursor(slack):
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.conversations_history(channel=slack.channel("support"), cursor="not-a-cursor")
    assert _error(excinfo) == "invalid_cursor"


def test_replies__parent_first_and_paginated(slack):
    support = slack.channel("support")
    parent = slack.client.chat_postMessage(channel=support, text="parent")["ts"]
    replies = [slack.client.chat_postMessage(channel=support, text=f"r{i}", thread_ts=parent)["ts"]
               for i in range(5)]
    seen: list[str] = []
    for page in slack.client.conversations_replies(channel=support, ts=parent, limit=2):
        seen += [m["ts"] for m in page["messages"]]
    assert seen == [parent, *replies]


def test_replies__seeded_thread(slack):
    support = slack.channel("support")
    question = slack.client.conversations_history(channel=support)["messages"][-1]
    thread = slack.client.conversations_replies(channel=support, ts=question["ts"])["messages"]
    assert [m["text"] for m in thread] == ["Where did CSV exports go?", "Looking"]
    assert question["reply_count"] == 1


def test_replies__thread_not_found(slack):
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.conversations_replies(channel=slack.channel("support"), ts="1234567890.000001")
    assert _error(excinfo) == "thread_not_found"


def test_list__public_channels_by_default(slack, matches_spec):
    answer = slack.client.conversations_list()
    matches_spec("conversations.list", answer.data)
    names = {c["name"] for c in answer["channels"]}
    assert names == {"support", "random", "old"}
    support = next(c for c in answer["channels"] if c["name"] == "support")
    assert support["is_member"] is True and support["topic"]["value"] == "Customer questions"


def test_list__types_and_exclude_archived(slack):
    answer = slack.client.conversations_list(types="public_channel,private_channel", exclude_archived=True)
    assert {c["name"] for c in answer["channels"]} == {"support", "random", "ops"}


def test_list__paginates(slack):
    names: list[str] = []
    for page in slack.client.conversations_list(types="public_channel,private_channel", limit=1):
        names += [c["name"] for c in page["channels"]]
    assert sorted(names) == ["old", "ops", "random", "support"]


def test_info__channel(slack, matches_spec):
    support = slack.channel("support")
    answer = slack.client.conversations_info(channel=support, include_num_members=True)
    matches_spec("conversations.info", answer.data)
    assert answer["channel"]["id"] == support and answer["channel"]["num_members"] == 3


def test_info__channel_not_found(slack):
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.conversations_info(channel="CNOPE000000")
    assert _error(excinfo) == "channel_not_found"


def test_members__paginates(slack, matches_spec):
    support = slack.channel("support")
    members: list[str] = []
    for page in slack.client.conversations_members(channel=support, limit=2):
        matches_spec("conversations.members", page.data)
        members += page["members"]
    assert len(members) == 3 and len(set(members)) == 3


def test_join__public_channel_then_read_and_post(slack, matches_spec):
    random = slack.channel("random")
    joined = slack.client.conversations_join(channel=random)
    matches_spec("conversations.join", joined.data)
    assert joined["channel"]["is_member"] is True
    newest, seeded = slack.client.conversations_history(channel=random)["messages"][:2]
    assert newest["subtype"] == "channel_join" and seeded["text"] == "hello"
    assert slack.client.chat_postMessage(channel=random, text="hi all")["ok"]
    again = slack.client.conversations_join(channel=random)
    assert again["warning"] == "already_in_channel"


def test_join__private_channel_is_not_supported(slack):
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.conversations_join(channel=slack.channel("ops"))
    assert _error(excinfo) == "method_not_supported_for_channel_type"


def test_join__archived(slack):
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.conversations_join(channel=slack.channel("old"))
    assert _error(excinfo) == "is_archived"


def test_open__dm_and_return_im(slack, matches_spec):
    laura = slack.client.users_lookupByEmail(email="laura@acme.test")["user"]["id"]
    opened = slack.client.conversations_open(users=laura)
    matches_spec("conversations.open", opened.data)
    dm = opened["channel"]["id"]
    assert dm.startswith("D")
    again = slack.client.conversations_open(users=[laura], return_im=True)
    assert again["already_open"] is True
    assert again["channel"]["id"] == dm and again["channel"]["is_im"] is True
    assert again["channel"]["user"] == laura
    slack.client.chat_postMessage(channel=dm, text="hi")
    assert slack.client.conversations_history(channel=dm)["messages"][0]["text"] == "hi"
    ims = slack.client.conversations_list(types="im")["channels"]
    assert [c["id"] for c in ims] == [dm]


def test_open__group_dm(slack):
    users = [u["id"] for u in slack.client.users_list()["members"] if u["name"] in ("laura", "ben")]
    opened = slack.client.conversations_open(users=",".join(users))
    assert opened["channel"]["is_mpim"] is True


def test_open__errors(slack):
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.api_call("conversations.open", params={})
    assert _error(excinfo) == "users_list_not_supplied"
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.conversations_open(users="UNOBODY0000")
    assert _error(excinfo) == "user_not_found"
