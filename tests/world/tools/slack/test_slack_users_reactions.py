"""auth.test, users.* and reactions.* through slack_sdk."""

from __future__ import annotations

import pytest
from slack_sdk.errors import SlackApiError


def _error(excinfo: pytest.ExceptionInfo[SlackApiError]) -> str:
    return str(excinfo.value.response["error"])


def test_auth_test__names_the_bot(slack, matches_spec):
    answer = slack.client.auth_test()
    matches_spec("auth.test", answer.data)
    assert answer["team"] == "Acme" and answer["url"] == slack.url + "/"
    assert answer["bot_id"].startswith("B") and answer["user"] == "ancha"


def test_users_list__every_member_and_pages(slack, matches_spec):
    answer = slack.client.users_list()
    matches_spec("users.list", answer.data)
    names = [u["name"] for u in answer["members"]]
    assert set(names) == {"slackbot", "ancha", "laura", "ben"}
    paged: list[str] = []
    for page in slack.client.users_list(limit=1):
        paged += [u["name"] for u in page["members"]]
    assert paged == names


def test_users_info__profile(slack, matches_spec):
    laura = slack.client.users_lookupByEmail(email="LAURA@acme.test")
    matches_spec("users.lookupByEmail", laura.data)
    answer = slack.client.users_info(user=laura["user"]["id"])
    matches_spec("users.info", answer.data)
    user = answer["user"]
    assert user["real_name"] == "Laura Diaz" and user["profile"]["email"] == "laura@acme.test"
    assert user["profile"]["title"] == "Support lead" and user["tz"] == "Europe/Madrid"
    assert user["tz_offset"] == 3600


def test_users_info__user_not_found(slack):
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.users_info(user="UNOBODY0000")
    assert _error(excinfo) == "user_not_found"


def test_users_lookup_by_email__users_not_found(slack):
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.users_lookupByEmail(email="nobody@acme.test")
    assert _error(excinfo) == "users_not_found"


def test_users_list__invalid_cursor(slack):
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.users_list(cursor="dXNlcjpVTk9CT0RZ")
    assert _error(excinfo) == "invalid_cursor"


def _question(slack) -> tuple[str, str]:
    support = slack.channel("support")
    return support, slack.client.conversations_history(channel=support)["messages"][-1]["ts"]


def test_reactions__add_get_remove(slack, matches_spec):
    channel, ts = _question(slack)
    added = slack.client.reactions_add(channel=channel, timestamp=ts, name="white_check_mark")
    matches_spec("reactions.add", added.data)
    got = slack.client.reactions_get(channel=channel, timestamp=ts)
    matches_spec("reactions.get", got.data)
    reactions = {r["name"]: r for r in got["message"]["reactions"]}
    assert reactions["eyes"]["count"] == 1  # seeded
    bot = slack.client.auth_test()["user_id"]
    assert reactions["white_check_mark"]["users"] == [bot]
    slack.client.reactions_remove(channel=channel, timestamp=ts, name="white_check_mark")
    again = slack.client.reactions_get(channel=channel, timestamp=ts)["message"]["reactions"]
    assert [r["name"] for r in again] == ["eyes"]


def test_reactions_add__already_reacted(slack):
    channel, ts = _question(slack)
    slack.client.reactions_add(channel=channel, timestamp=ts, name="eyes")
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.reactions_add(channel=channel, timestamp=ts, name="eyes")
    assert _error(excinfo) == "already_reacted"


def test_reactions_remove__no_reaction(slack):
    channel, ts = _question(slack)
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.reactions_remove(channel=channel, timestamp=ts, name="eyes")
    assert _error(excinfo) == "no_reaction"


@pytest.mark.parametrize(("name", "timestamp", "code"), [
    ("not an emoji!", None, "invalid_name"),
    ("eyes", "1234567890.000001", "message_not_found"),
    ("eyes", "yesterday", "bad_timestamp"),
])
def test_reactions_add__errors(slack, name, timestamp, code):
    channel, ts = _question(slack)
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.reactions_add(channel=channel, timestamp=timestamp or ts, name=name)
    assert _error(excinfo) == code


def test_reactions_add__no_item_specified(slack):
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.api_call("reactions.add", params={"name": "eyes"})
    assert _error(excinfo) == "no_item_specified"


def test_history__shows_reactions_and_replies_added_after_an_earlier_read(slack):
    channel, ts = _question(slack)
    before = slack.client.conversations_history(channel=channel)["messages"][-1]
    slack.client.reactions_add(channel=channel, timestamp=ts, name="tada")
    slack.client.chat_postMessage(channel=channel, text="on it", thread_ts=ts)
    after = slack.client.conversations_history(channel=channel)["messages"][-1]
    assert before["reply_count"] == 1 and after["reply_count"] == 2
    assert {r["name"] for r in after["reactions"]} == {"eyes", "tada"}
