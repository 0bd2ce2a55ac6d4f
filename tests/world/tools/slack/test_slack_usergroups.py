"""usergroups.* and usergroups.users.* through slack_sdk."""

from __future__ import annotations

import pytest
from slack_sdk.errors import SlackApiError


def _error(excinfo: pytest.ExceptionInfo[SlackApiError]) -> str:
    return str(excinfo.value.response["error"])


def _ids(slack) -> dict[str, str]:
    return {u["name"]: u["id"] for u in slack.client.users_list()["members"]}


def test_usergroups__create_fill_list_and_read_members(slack, matches_spec):
    support = slack.channel("support")
    created = slack.client.usergroups_create(name="On Call", handle="oncall", description="Whoever holds the pager",
                                             channels=[support], include_count=True)
    matches_spec("usergroups.create", created.data)
    group = created["usergroup"]
    bot = slack.client.auth_test()["user_id"]
    assert group["id"].startswith("S") and group["handle"] == "oncall" and group["created_by"] == bot
    assert group["prefs"]["channels"] == [support] and group["user_count"] == 0 and group["date_delete"] == 0
    ids = _ids(slack)
    updated = slack.client.usergroups_users_update(usergroup=group["id"], users=[ids["laura"], ids["ben"]])
    matches_spec("usergroups.users.update", updated.data)
    assert updated["usergroup"]["users"] == [ids["laura"], ids["ben"]]
    members = slack.client.usergroups_users_list(usergroup=group["id"])
    matches_spec("usergroups.users.list", members.data)
    assert members["users"] == [ids["laura"], ids["ben"]]
    listed = slack.client.usergroups_list(include_users=True, include_count=True)
    matches_spec("usergroups.list", listed.data)
    [seen] = listed["usergroups"]
    assert seen["users"] == [ids["laura"], ids["ben"]] and seen["user_count"] == 2
    [kept] = slack.state()["usergroups"]
    assert kept["handle"] == "oncall" and kept["users"] == [ids["laura"], ids["ben"]]


def test_usergroups_create__without_a_handle_the_name_makes_one(slack):
    group = slack.client.usergroups_create(name="Support Leads")["usergroup"]
    assert group["handle"] == "support-leads"


def test_usergroups_update__renames_and_changes_handle(slack, matches_spec):
    group = slack.client.usergroups_create(name="Ops", handle="ops-team")["usergroup"]
    updated = slack.client.usergroups_update(usergroup=group["id"], name="Operations", handle="operations",
                                             description="Keeps things up")
    matches_spec("usergroups.update", updated.data)
    assert (updated["usergroup"]["name"], updated["usergroup"]["handle"]) == ("Operations", "operations")
    assert updated["usergroup"]["description"] == "Keeps things up"


def test_usergroups_disable__hides_the_group_until_enabled(slack, matches_spec):
    group = slack.client.usergroups_create(name="Ops", handle="ops-team")["usergroup"]
    disabled = slack.client.usergroups_disable(usergroup=group["id"])
    matches_spec("usergroups.disable", disabled.data)
    assert disabled["usergroup"]["date_delete"] > 0 and disabled["usergroup"]["deleted_by"]
    assert slack.client.usergroups_list()["usergroups"] == []
    assert [g["id"] for g in slack.client.usergroups_list(include_disabled=True)["usergroups"]] == [group["id"]]
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.usergroups_users_list(usergroup=group["id"])
    assert _error(excinfo) == "no_such_subteam"
    assert slack.client.usergroups_users_list(usergroup=group["id"], include_disabled=True)["users"] == []
    enabled = slack.client.usergroups_enable(usergroup=group["id"])
    matches_spec("usergroups.enable", enabled.data)
    assert enabled["usergroup"]["date_delete"] == 0 and enabled["usergroup"]["deleted_by"] is None
    assert [g["id"] for g in slack.client.usergroups_list()["usergroups"]] == [group["id"]]


def test_usergroups_create__a_taken_name_is_name_already_exists(slack):
    slack.client.usergroups_create(name="Ops", handle="ops-team")
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.usergroups_create(name="ops", handle="other")
    assert _error(excinfo) == "name_already_exists"


@pytest.mark.parametrize("handle", ["ops-team", "laura", "support"])
def test_usergroups_create__a_handle_a_group_person_or_channel_has_is_handle_already_exists(slack, handle):
    slack.client.usergroups_create(name="Ops", handle="ops-team")
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.usergroups_create(name="Other", handle=handle)
    assert _error(excinfo) == "handle_already_exists"


def test_usergroups_update__another_groups_name_or_handle_is_taken(slack):
    slack.client.usergroups_create(name="Ops", handle="ops-team")
    other = slack.client.usergroups_create(name="Dev", handle="dev")["usergroup"]
    for args, code in (({"name": "Ops"}, "name_already_exists"), ({"handle": "ops-team"}, "handle_already_exists")):
        with pytest.raises(SlackApiError) as excinfo:
            slack.client.usergroups_update(usergroup=other["id"], **args)
        assert _error(excinfo) == code
    # its own name and handle are not "taken"
    assert slack.client.usergroups_update(usergroup=other["id"], name="Dev", handle="dev")["ok"]


@pytest.mark.parametrize(("args", "code"), [
    ({"name": "Bad", "handle": "no spaces"}, "bad_handle"),
    ({"name": "Here", "handle": "here"}, "forbidden_handle"),
    ({"name": "x" * 256}, "name_too_long"),
    ({"name": "Desc", "description": "d" * 141}, "description_too_long"),
    ({"name": "Chan", "channels": "CNOSUCH0000"}, "invalid_channel_provided"),
])
def test_usergroups_create__bad_arguments_get_slacks_errors(slack, args, code):
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.usergroups_create(**args)
    assert _error(excinfo) == code


def test_usergroups_users_update__members_must_be_people_of_the_workspace(slack):
    group = slack.client.usergroups_create(name="Ops", handle="ops-team")["usergroup"]
    bot = slack.client.auth_test()["user_id"]
    for users, code in ((["UNOBODY0000"], "invalid_users"), ([bot], "invalid_user"), ("", "no_users_provided")):
        with pytest.raises(SlackApiError) as excinfo:
            slack.client.usergroups_users_update(usergroup=group["id"], users=users)
        assert _error(excinfo) == code


def test_usergroups__an_unknown_group_is_no_such_subteam(slack):
    for call in (lambda: slack.client.usergroups_update(usergroup="S0000000000", name="x"),
                 lambda: slack.client.usergroups_disable(usergroup="S0000000000"),
                 lambda: slack.client.usergroups_users_list(usergroup="S0000000000")):
        with pytest.raises(SlackApiError) as excinfo:
            call()
        assert _error(excinfo) == "no_such_subteam"
