"""views.open, views.push, views.update and views.publish through slack_sdk.

A trigger id comes from an interaction Slack delivers to the app; the replica delivers
none yet, so these tests mint one on the replica, as an interaction would."""

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

MODAL = {"type": "modal", "callback_id": "feedback", "title": {"type": "plain_text", "text": "Feedback"},
         "submit": {"type": "plain_text", "text": "Send"},
         "blocks": [{"type": "input", "block_id": "note", "label": {"type": "plain_text", "text": "Note"},
                     "element": {"type": "plain_text_input", "action_id": "text"}}]}
HOME = {"type": "home", "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": "*Welcome*"}}]}


@pytest.fixture(scope="module")
def server() -> Iterator[EmbeddedServer]:
    # An own server, in this process: trigger ids are minted on the replica itself.
    with EmbeddedServer() as running:
        yield running


@pytest.fixture
def app(server: EmbeddedServer, slack_scene: dict[str, Any]) -> tuple[WebClient, SlackReplica]:
    body = {"scene": {"name": "views", **copy.deepcopy(slack_scene)}, "trial": 1}
    context = httpx.post(f"{server.url}/envs", json=body, timeout=30).json()
    replica = server.app.registry.envs[context["env_id"]].tools["slack"]
    assert isinstance(replica, SlackReplica)
    tool = context["tools"]["slack"]
    return WebClient(token=tool["token"], base_url=tool["url"] + "/api/"), replica


def _trigger(replica: SlackReplica, ref: str = "laura") -> str:
    return replica.state.views.issue_trigger(replica.world.refs[ref].id, replica.world.clock.peek())


def _error(excinfo: pytest.ExceptionInfo[SlackApiError]) -> str:
    return str(excinfo.value.response["error"])


def test_views_open__a_trigger_id_the_replica_never_issued_is_invalid_trigger_id(app):
    client, _ = app
    with pytest.raises(SlackApiError) as excinfo:
        client.views_open(trigger_id="12345.98765.abcd2358fdea", view=MODAL)
    assert _error(excinfo) == "invalid_trigger_id"


def test_views_open__opens_a_modal_for_the_person_who_interacted(app, matches_spec):
    client, replica = app
    answer = client.views_open(trigger_id=_trigger(replica), view=MODAL)
    matches_spec("views.open", answer.data)
    view = answer["view"]
    assert view["id"].startswith("V") and view["type"] == "modal" and view["callback_id"] == "feedback"
    assert view["root_view_id"] == view["id"] and view["previous_view_id"] is None
    assert view["app_id"] == replica.bot.app_id and view["state"] == {"values": {}}
    assert replica.state.views.views[view["id"]].user == replica.world.refs["laura"].id


def test_views_open__a_trigger_is_exchanged_once_and_expires(app):
    client, replica = app
    trigger = _trigger(replica)
    client.views_open(trigger_id=trigger, view=MODAL)
    with pytest.raises(SlackApiError) as excinfo:
        client.views_open(trigger_id=trigger, view=MODAL)
    assert _error(excinfo) == "exchanged_trigger_id"
    stale = replica.state.views.issue_trigger(replica.world.refs["laura"].id, replica.world.clock.peek() - 10)
    with pytest.raises(SlackApiError) as excinfo:
        client.views_open(trigger_id=stale, view=MODAL)
    assert _error(excinfo) == "expired_trigger_id"


@pytest.mark.parametrize(("view", "message"), [
    ("not json", "[ERROR] failed to parse view: not valid JSON [json-pointer:/view]"),
    ({**MODAL, "title": None}, "[ERROR] missing required field: title [json-pointer:/view]"),
    ({**MODAL, "title": {"type": "plain_text", "text": "x" * 25}},
     "[ERROR] must be less than 25 characters [json-pointer:/view/title/text]"),
    ({k: v for k, v in MODAL.items() if k != "submit"},
     "[ERROR] must provide a submit property when using input blocks [json-pointer:/view]"),
    ({**MODAL, "blocks": [{"text": "no type"}]}, "[ERROR] missing required field: type [json-pointer:/view/blocks/0]"),
    (HOME, "[ERROR] must be one of [modal] [json-pointer:/view/type]"),
])
def test_views_open__a_bad_view_is_invalid_arguments(app, view, message):
    client, replica = app
    with pytest.raises(SlackApiError) as excinfo:
        client.views_open(trigger_id=_trigger(replica), view=view)
    assert _error(excinfo) == "invalid_arguments"
    assert excinfo.value.response["response_metadata"]["messages"] == [message]


def test_views_open__a_view_over_250kb_is_view_too_large(app):
    client, replica = app
    big = {**MODAL, "private_metadata": "x" * (260 * 1024)}
    with pytest.raises(SlackApiError) as excinfo:
        client.views_open(trigger_id=_trigger(replica), view=big)
    assert _error(excinfo) == "view_too_large"


def test_views_push__stacks_up_to_three_views(app, matches_spec):
    client, replica = app
    root = client.views_open(trigger_id=_trigger(replica), view=MODAL)["view"]
    pushed = client.views_push(trigger_id=_trigger(replica), view={**MODAL, "callback_id": "second"})
    matches_spec("views.push", pushed.data)
    assert pushed["view"]["root_view_id"] == root["id"] and pushed["view"]["previous_view_id"] == root["id"]
    client.views_push(trigger_id=_trigger(replica), view=MODAL)
    with pytest.raises(SlackApiError) as excinfo:
        client.views_push(trigger_id=_trigger(replica), view=MODAL)
    assert _error(excinfo) == "push_limit_reached"


def test_views_update__by_id_or_external_id_with_the_hash_guard(app, matches_spec):
    client, replica = app
    opened = client.views_open(trigger_id=_trigger(replica), view={**MODAL, "external_id": "fb-1"})["view"]
    updated = client.views_update(view_id=opened["id"], hash=opened["hash"],
                                  view={**MODAL, "title": {"type": "plain_text", "text": "Thanks"}})
    matches_spec("views.update", updated.data)
    assert updated["view"]["id"] == opened["id"] and updated["view"]["title"]["text"] == "Thanks"
    with pytest.raises(SlackApiError) as excinfo:
        client.views_update(view_id=opened["id"], hash=opened["hash"], view=MODAL)
    assert _error(excinfo) == "hash_conflict"
    again = client.views_update(external_id="fb-1", view={**MODAL, "external_id": "fb-1"})
    assert again["view"]["id"] == opened["id"]
    with pytest.raises(SlackApiError) as excinfo:
        client.views_update(view_id="V0000000000", view=MODAL)
    assert _error(excinfo) == "not_found"


def test_views_open__an_external_id_in_use_is_duplicate_external_id(app):
    client, replica = app
    client.views_open(trigger_id=_trigger(replica), view={**MODAL, "external_id": "same"})
    with pytest.raises(SlackApiError) as excinfo:
        client.views_open(trigger_id=_trigger(replica, "ben"), view={**MODAL, "external_id": "same"})
    assert _error(excinfo) == "duplicate_external_id"


def test_views_publish__sets_and_replaces_a_persons_home_tab(app, matches_spec):
    client, replica = app
    laura = replica.world.refs["laura"].id
    first = client.views_publish(user_id=laura, view=HOME)
    matches_spec("views.publish", first.data)
    assert first["view"]["type"] == "home" and first["view"]["blocks"] == HOME["blocks"]
    second = client.views_publish(user_id=laura, view={**HOME, "private_metadata": "v2"})
    assert second["view"]["id"] == first["view"]["id"] and second["view"]["private_metadata"] == "v2"
    assert second["view"]["hash"] != first["view"]["hash"]
    with pytest.raises(SlackApiError) as excinfo:
        client.views_publish(user_id=laura, view=HOME, hash=first["view"]["hash"])
    assert _error(excinfo) == "hash_conflict"
    with pytest.raises(SlackApiError) as excinfo:
        client.views_publish(user_id=laura, view=MODAL)
    assert _error(excinfo) == "invalid_arguments"
    with pytest.raises(SlackApiError) as excinfo:
        client.views_publish(user_id="U0000000000", view=HOME)
    assert _error(excinfo) == "user_not_found"
    [listed] = httpx.get(f"{client.base_url.rsplit('/slack', 1)[0]}/state", timeout=10).json()["slack"]["views"]
    assert listed["user"] == laura and listed["id"] == first["view"]["id"]


def test_dnd_info_and_team_info__everyone_has_dnd_off(app, matches_spec):
    client, replica = app
    laura, ben = replica.world.refs["laura"].id, replica.world.refs["ben"].id
    info = client.dnd_info(user=laura)
    matches_spec("dnd.info", info.data)
    assert info["dnd_enabled"] is False and info["snooze_enabled"] is False
    team = client.dnd_teamInfo(users=f"{laura},{ben}")
    matches_spec("dnd.teamInfo", team.data)
    assert set(team["users"]) == {laura, ben}
    with pytest.raises(SlackApiError) as excinfo:
        client.dnd_info(user="U0000000000")
    assert _error(excinfo) == "user_not_found"
