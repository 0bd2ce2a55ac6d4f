"""users.conversations, presence, profiles, reactions.list, team.info,
bots.info and emoji.list through slack_sdk (people's own xoxp tokens where Slack needs one)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from ancha.server.embedded import EmbeddedServer

Slack = Any  # conftest's Slack: the workspace's URL, bot client and context


@pytest.fixture(scope="module")
def embedded() -> Iterator[EmbeddedServer]:
    """A server of this module's own, so tests can mint people's user tokens in its environments."""
    with EmbeddedServer() as server:
        yield server


@pytest.fixture(scope="module")
def ancha_server(embedded: EmbeddedServer) -> str:
    return embedded.url


def _as(embedded: EmbeddedServer, slack: Slack, ref: str) -> WebClient:
    """A WebClient holding ``ref``'s own user token (``xoxp-``)."""
    env = embedded.app.registry.get(slack.context["env_id"])
    assert env is not None
    token = env.tools["slack"].issue_user_token(env.refs[ref].id, f"person:{ref}")
    return WebClient(token=token, base_url=slack.url + "/api/")


def _error(excinfo: pytest.ExceptionInfo[SlackApiError]) -> str:
    return str(excinfo.value.response["error"])


def _user_id(slack: Slack, name: str) -> str:
    return next(str(u["id"]) for u in slack.client.users_list()["members"] if u["name"] == name)


def _with_admins(scene: dict[str, Any]) -> dict[str, Any]:
    users = scene["world"]["slack"]["users"]
    users[0]["is_admin"] = True
    users.append({"ref": "carol", "name": "carol", "real_name": "Carol Ng", "is_admin": True})
    return scene


# --- users.conversations ---------------------------------------------------------------


def test_users_conversations__the_callers_channels_of_the_asked_types(slack, matches_spec):
    answer = slack.client.users_conversations(types="public_channel,private_channel")
    matches_spec("users.conversations", answer.data)
    assert sorted(c["name"] for c in answer["channels"]) == ["old", "ops", "support"]
    assert all("is_member" not in c for c in answer["channels"])
    unarchived = slack.client.users_conversations(types="public_channel", exclude_archived=True)
    assert [c["name"] for c in unarchived["channels"]] == ["support"]


def test_users_conversations__another_persons_channels_hide_what_the_caller_cannot_see(slack):
    laura = _user_id(slack, "laura")
    answer = slack.client.users_conversations(user=laura, types="public_channel,private_channel")
    # laura is also in #secret, a private channel the bot is not in
    assert sorted(c["name"] for c in answer["channels"]) == ["old", "random", "support"]


def test_users_conversations__pages_with_a_cursor(slack):
    names: list[str] = []
    for page in slack.client.users_conversations(types="public_channel,private_channel", limit=1):
        names += [c["name"] for c in page["channels"]]
    assert sorted(names) == ["old", "ops", "support"]


@pytest.mark.parametrize(("args", "code"), [
    ({"types": "public_channel,dm"}, "invalid_types"),
    ({"user": "UNOBODY0000"}, "user_not_found"),
    ({"cursor": "bm9wZTpub3Bl"}, "invalid_cursor"),
])
def test_users_conversations__bad_arguments_get_slacks_errors(slack, args, code):
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.users_conversations(**args)
    assert _error(excinfo) == code


# --- presence and Do Not Disturb --------------------------------------------------------


def test_users_get_presence__the_caller_learns_more_about_themself(slack, matches_spec):
    me = slack.client.users_getPresence(user=slack.client.auth_test()["user_id"])
    matches_spec("users.getPresence", me.data)
    assert me["presence"] == "active" and me["online"] is True and me["manual_away"] is False
    other = slack.client.users_getPresence(user=_user_id(slack, "laura"))
    matches_spec("users.getPresence", other.data)
    assert other.data == {"ok": True, "presence": "active"}


def test_users_set_presence__away_until_set_back_to_auto(slack, matches_spec):
    answer = slack.client.users_setPresence(presence="away")
    matches_spec("users.setPresence", answer.data)
    bot = slack.client.auth_test()["user_id"]
    me = slack.client.users_getPresence(user=bot)
    assert me["presence"] == "away" and me["manual_away"] is True
    slack.client.users_setPresence(presence="auto")
    assert slack.client.users_getPresence(user=bot)["presence"] == "active"


def test_users_set_presence__invalid_presence(slack):
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.users_setPresence(presence="busy")
    assert _error(excinfo) == "invalid_presence"


def test_users_set_active__answers_ok_and_changes_nothing(slack, matches_spec):
    answer = slack.client.api_call("users.setActive")  # slack_sdk no longer wraps it
    matches_spec("users.setActive", answer.data)
    assert slack.client.users_getPresence(user=slack.client.auth_test()["user_id"])["presence"] == "active"


def test_users_get_presence__user_not_found(slack):
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.users_getPresence(user="UNOBODY0000")
    assert _error(excinfo) == "user_not_found"


# --- profiles ---------------------------------------------------------------------------


@pytest.fixture
def profile_spec(matches_spec, openapi):
    """The vendor's schema, with the status field current Slack sends that the 2020 file predates."""
    openapi["definitions"]["objs_user_profile"]["properties"].setdefault("status_emoji_display_info", {"type": "array"})
    return matches_spec


def test_users_profile_get__anyone_s_profile(slack, profile_spec):
    answer = slack.client.users_profile_get(user=_user_id(slack, "laura"))
    profile_spec("users.profile.get", answer.data)
    assert answer["profile"]["real_name"] == "Laura Diaz" and answer["profile"]["title"] == "Support lead"
    assert slack.client.users_profile_get()["profile"]["bot_id"].startswith("B")


def test_users_profile_set__a_person_sets_their_own_status_and_everyone_sees_it(make_slack, embedded,
                                                                               profile_spec):
    slack = make_slack()
    ben = _as(embedded, slack, "ben")
    answer = ben.users_profile_set(profile={"status_text": "On call", "status_emoji": ":pager:",
                                            "title": "SRE", "first_name": "Benjamin"})
    profile_spec("users.profile.set", answer.data)
    assert answer["username"] == "ben" and answer["profile"]["status_text"] == "On call"
    seen = slack.client.users_info(user=_user_id(slack, "ben"))["user"]
    assert seen["profile"]["status_emoji"] == ":pager:" and seen["profile"]["title"] == "SRE"
    assert seen["real_name"] == "Benjamin Okafor"
    one = ben.users_profile_set(name="phone", value="+34 600 000 000")
    assert one["profile"]["phone"] == "+34 600 000 000"


def test_users_profile_set__a_bot_token_is_not_allowed(slack):
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.users_profile_set(profile={"status_text": "busy"})
    assert _error(excinfo) == "not_allowed_token_type"


def test_users_profile_set__only_an_admin_changes_another_members_profile(make_slack, embedded, slack_scene):
    slack = make_slack(_with_admins(slack_scene))
    laura_id, ben_id, carol_id = (_user_id(slack, n) for n in ("laura", "ben", "carol"))
    with pytest.raises(SlackApiError) as excinfo:
        _as(embedded, slack, "ben").users_profile_set(user=laura_id, profile={"title": "nope"})
    assert _error(excinfo) == "not_admin"
    laura = _as(embedded, slack, "laura")
    assert laura.users_profile_set(user=ben_id, profile={"title": "Engineer"})["profile"]["title"] == "Engineer"
    with pytest.raises(SlackApiError) as excinfo:
        laura.users_profile_set(user=carol_id, profile={"title": "nope"})
    assert _error(excinfo) == "cannot_update_admin_user"


def test_users_profile_set__an_email_change_needs_an_admin(make_slack, embedded):
    slack = make_slack()
    with pytest.raises(SlackApiError) as excinfo:
        _as(embedded, slack, "ben").users_profile_set(profile={"email": "b@acme.test"})
    assert _error(excinfo) == "not_admin"


def test_users_profile_set__a_status_emoji_needs_colons(make_slack, embedded):
    slack = make_slack()
    with pytest.raises(SlackApiError) as excinfo:
        _as(embedded, slack, "ben").users_profile_set(profile={"status_emoji": "pager"})
    assert _error(excinfo) == "profile_status_set_failed_not_emoji_syntax"


def test_users_profile_set__profile_that_is_not_a_json_object_is_invalid_profile(make_slack, embedded):
    slack = make_slack()
    ben = _as(embedded, slack, "ben")
    for profile in ("{not json", "[1, 2]"):
        with pytest.raises(SlackApiError) as excinfo:
            ben.api_call("users.profile.set", data={"profile": profile})
        assert _error(excinfo) == "invalid_profile"


# --- reactions.list ---------------------------------------------------------------------


def test_reactions_list__what_a_person_reacted_to_newest_first(slack, matches_spec):
    support = slack.channel("support")
    history = slack.client.conversations_history(channel=support)["messages"]
    question = history[-1]["ts"]
    slack.client.reactions_add(channel=support, timestamp=question, name="tada")
    answer = slack.client.reactions_list()
    matches_spec("reactions.list", answer.data)
    assert [(i["channel"], i["message"]["ts"]) for i in answer["items"]] == [(support, question)]
    assert answer["items"][0]["message"]["permalink"].startswith(slack.url + "/archives/")
    # ben's seeded :eyes: on the question
    ben = slack.client.reactions_list(user=_user_id(slack, "ben"))
    assert [i["message"]["text"] for i in ben["items"]] == ["Where did CSV exports go?"]
    slack.client.reactions_remove(channel=support, timestamp=question, name="tada")
    assert slack.client.reactions_list()["items"] == []


def test_reactions_list__pages_with_a_cursor_and_with_page_numbers(slack):
    support, random = slack.channel("support"), slack.channel("random")
    slack.client.conversations_join(channel=random)
    posted = [slack.client.chat_postMessage(channel=support, text=f"note {i}")["ts"] for i in range(3)]
    for ts in posted:
        slack.client.reactions_add(channel=support, timestamp=ts, name="eyes")
    seen: list[str] = []
    for page in slack.client.reactions_list(limit=2):
        seen += [i["message"]["ts"] for i in page["items"]]
    assert seen == posted[::-1]
    second = slack.client.reactions_list(count=2, page=2)
    assert [i["message"]["ts"] for i in second["items"]] == [posted[0]]
    assert second["paging"] == {"count": 2, "total": 3, "page": 2, "pages": 2}


def test_reactions_list__user_not_found(slack):
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.reactions_list(user="UNOBODY0000")
    assert _error(excinfo) == "user_not_found"


# --- team, bots, emoji ------------------------------------------------------------------


def test_team_info__the_workspace(slack, matches_spec):
    answer = slack.client.team_info()
    matches_spec("team.info", answer.data)
    team = answer["team"]
    assert team["name"] == "Acme" and team["domain"] == "acme"
    assert team["id"] == slack.client.auth_test()["team_id"]
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.team_info(team="T0000000000")
    assert _error(excinfo) == "team_not_found"


def test_team_profile_get__a_fresh_workspace_has_no_custom_fields(slack, matches_spec):
    answer = slack.client.team_profile_get()
    matches_spec("team.profile.get", answer.data)
    assert answer["profile"] == {"fields": []}


def test_bots_info__the_apps_bot(slack, matches_spec):
    me = slack.client.auth_test()
    answer = slack.client.bots_info(bot=me["bot_id"])
    matches_spec("bots.info", answer.data)
    assert answer["bot"]["user_id"] == me["user_id"] and answer["bot"]["name"] == "ancha"
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.bots_info(bot="B0000000000")
    assert _error(excinfo) == "bot_not_found"


def test_emoji_list__a_fresh_workspace_has_no_custom_emoji(slack, matches_spec):
    answer = slack.client.emoji_list()
    matches_spec("emoji.list", answer.data)
    assert answer["emoji"] == {}


def test_users_set_photo__a_person_sets_their_photo_from_a_file(make_slack, embedded, tmp_path):
    """slack_sdk's test_issue_378: ``users_setPhoto(image=<path>)`` with a user token."""
    slack = make_slack()
    photo = tmp_path / "me.png"
    photo.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))
    assert _as(embedded, slack, "ben").users_setPhoto(image=str(photo))["ok"]


@pytest.mark.parametrize(("image", "code"), [(b"not an image", "bad_image"),
                                             (b"\x89PNG\r\n\x1a\n" + bytes(1024 * 1024), "too_large")])
def test_users_set_photo__refuses_what_is_no_photo(make_slack, embedded, image, code):
    slack = make_slack()
    with pytest.raises(SlackApiError) as excinfo:
        _as(embedded, slack, "ben").users_setPhoto(image=image)
    assert _error(excinfo) == code


def test_users_set_photo__not_with_a_bot_token(slack):
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.users_setPhoto(image=b"\x89PNG\r\n\x1a\n")
    assert _error(excinfo) == "not_allowed_token_type"
