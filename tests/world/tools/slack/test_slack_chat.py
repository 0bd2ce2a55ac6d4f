"""chat.postMessage, chat.update, chat.delete and chat.getPermalink through slack_sdk."""

from __future__ import annotations

import json

import httpx
import pytest
from slack_sdk.errors import SlackApiError


def _error(excinfo: pytest.ExceptionInfo[SlackApiError]) -> str:
    return str(excinfo.value.response["error"])


def test_post_message__stores_and_echoes_the_message(slack, matches_spec):
    support = slack.channel("support")
    answer = slack.client.chat_postMessage(channel=support, text="Exports moved to Reports")
    matches_spec("chat.postMessage", answer.data)
    assert answer["channel"] == support
    message = answer["message"]
    assert message["text"] == "Exports moved to Reports"
    assert message["ts"] == answer["ts"]
    assert message["bot_id"].startswith("B") and message["user"].startswith("U")
    history = slack.client.conversations_history(channel=support, limit=1)
    assert history["messages"][0]["ts"] == answer["ts"]


def test_post_message__by_channel_name(slack):
    answer = slack.client.chat_postMessage(channel="#support", text="hi")
    assert answer["channel"] == slack.channel("support")


def test_post_message__blocks_and_attachments_are_echoed(slack, matches_spec):
    blocks = [{"type": "section", "text": {"type": "mrkdwn", "text": "*bold*"}}]
    answer = slack.client.chat_postMessage(channel="#support", text="fallback", blocks=blocks,
                                           attachments=[{"fallback": "f", "text": "attached"}],
                                           unfurl_links=False, mrkdwn=True)
    matches_spec("chat.postMessage", answer.data)
    assert answer["message"]["blocks"] == blocks
    assert answer["message"]["attachments"] == [{"fallback": "f", "text": "attached", "id": 1}]


def test_post_message__thread_reply_updates_the_parent(slack, matches_spec):
    support = slack.channel("support")
    parent = slack.client.chat_postMessage(channel=support, text="parent")
    reply = slack.client.chat_postMessage(channel=support, text="reply", thread_ts=parent["ts"])
    assert reply["message"]["thread_ts"] == parent["ts"]
    thread = slack.client.conversations_replies(channel=support, ts=parent["ts"])
    matches_spec("conversations.replies", thread.data)
    first, second = thread["messages"]
    assert first["reply_count"] == 1 and first["latest_reply"] == reply["ts"]
    assert first["reply_users"] == [reply["message"]["user"]]
    assert second["parent_user_id"] == parent["message"]["user"]
    top = [m["ts"] for m in slack.client.conversations_history(channel=support)["messages"]]
    assert reply["ts"] not in top


def test_post_message__reply_broadcast_shows_in_history(slack):
    support = slack.channel("support")
    parent = slack.client.chat_postMessage(channel=support, text="parent")
    reply = slack.client.chat_postMessage(channel=support, text="to all", thread_ts=parent["ts"],
                                          reply_broadcast=True)
    assert reply["message"]["subtype"] == "thread_broadcast"
    top = slack.client.conversations_history(channel=support, limit=1)["messages"]
    assert top[0]["ts"] == reply["ts"]


def test_post_message__to_a_user_id_opens_a_dm(slack):
    laura = slack.client.users_lookupByEmail(email="laura@acme.test")["user"]["id"]
    answer = slack.client.chat_postMessage(channel=laura, text="hi Laura")
    assert answer["channel"].startswith("D")
    opened = slack.client.conversations_open(users=laura)
    assert opened["channel"]["id"] == answer["channel"]


@pytest.mark.parametrize(("channel", "code"), [
    ("C0000000000", "channel_not_found"),
    ("#nope", "channel_not_found"),
    ("#random", "not_in_channel"),
    ("#secret", "channel_not_found"),
    ("#old", "is_archived"),
])
def test_post_message__channel_errors(slack, channel, code):
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.chat_postMessage(channel=channel, text="hi")
    assert _error(excinfo) == code


def test_post_message__no_text(slack):
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.chat_postMessage(channel="#support")
    assert _error(excinfo) == "no_text"


def test_post_message__msg_too_long(slack):
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.chat_postMessage(channel="#support", text="x" * 40_001)
    assert _error(excinfo) == "msg_too_long"


def test_post_message__invalid_blocks(slack):
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.chat_postMessage(channel="#support", text="t", blocks=[{"text": "no type"}])
    assert _error(excinfo) == "invalid_blocks"
    answer = slack.raw("chat.postMessage", headers={"Authorization": f"Bearer {slack.token}"},
                       data={"channel": "#support", "text": "t", "blocks": "{not json"})
    assert answer.status_code == 200
    assert answer.json() == {"ok": False, "error": "invalid_blocks_format"}


def test_post_message__too_many_attachments(slack):
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.chat_postMessage(channel="#support", text="t", attachments=[{"text": "a"}] * 101)
    assert _error(excinfo) == "too_many_attachments"


def test_post_message__thread_not_found(slack):
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.chat_postMessage(channel="#support", text="t", thread_ts="1234567890.123456")
    assert _error(excinfo) == "thread_not_found"


def test_update__edits_text_and_marks_edited(slack, matches_spec):
    posted = slack.client.chat_postMessage(channel="#support", text="typo")
    updated = slack.client.chat_update(channel=posted["channel"], ts=posted["ts"], text="fixed")
    matches_spec("chat.update", updated.data)
    assert updated["text"] == "fixed" and updated["ts"] == posted["ts"]
    history = slack.client.conversations_history(channel=posted["channel"], limit=1)["messages"]
    assert history[0]["text"] == "fixed"
    assert history[0]["edited"]["user"] == posted["message"]["user"]


def test_update__cant_update_someone_elses_message(slack):
    support = slack.channel("support")
    theirs = slack.client.conversations_history(channel=support)["messages"][-1]
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.chat_update(channel=support, ts=theirs["ts"], text="mine now")
    assert _error(excinfo) == "cant_update_message"


def test_update__message_not_found(slack):
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.chat_update(channel=slack.channel("support"), ts="1111111111.000001", text="x")
    assert _error(excinfo) == "message_not_found"


def test_delete__removes_the_message(slack, matches_spec):
    posted = slack.client.chat_postMessage(channel="#support", text="oops")
    deleted = slack.client.chat_delete(channel=posted["channel"], ts=posted["ts"])
    matches_spec("chat.delete", deleted.data)
    tss = [m["ts"] for m in slack.client.conversations_history(channel=posted["channel"])["messages"]]
    assert posted["ts"] not in tss
    stored = slack.state()["messages"][posted["channel"]]
    assert posted["ts"] not in [m["ts"] for m in stored]
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.chat_delete(channel=posted["channel"], ts=posted["ts"])
    assert _error(excinfo) == "message_not_found"


def test_delete__cant_delete_someone_elses_message(slack):
    support = slack.channel("support")
    theirs = slack.client.conversations_history(channel=support)["messages"][-1]
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.chat_delete(channel=support, ts=theirs["ts"])
    assert _error(excinfo) == "cant_delete_message"


def test_get_permalink__links_the_message(slack, matches_spec):
    posted = slack.client.chat_postMessage(channel="#support", text="link me")
    answer = slack.client.chat_getPermalink(channel=posted["channel"], message_ts=posted["ts"])
    matches_spec("chat.getPermalink", answer.data)
    expected = f"{slack.url}/archives/{posted['channel']}/p{posted['ts'].replace('.', '')}"
    assert answer["permalink"] == expected  # Slack's shape, leading back to the replica
    assert httpx.get(expected, timeout=10).status_code == 200


def test_get_permalink__message_not_found(slack):
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.chat_getPermalink(channel=slack.channel("support"), message_ts="1.000001")
    assert _error(excinfo) == "message_not_found"


def test_post_message__json_body_keeps_types(slack):
    answer = slack.raw("chat.postMessage", headers={"Authorization": f"Bearer {slack.token}",
                                                    "Content-Type": "application/json; charset=utf-8"},
                       content=json.dumps({"channel": "#support", "text": "json", "unfurl_links": False}))
    assert answer.status_code == 200 and answer.json()["ok"] is True
