"""search.messages (and search.files, search.all) through slack_sdk, with a person's user
token as Slack requires; the bot's token is refused as Slack refuses it."""

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


def _workspace(server: EmbeddedServer, scene: dict[str, Any]) -> tuple[dict[str, Any], SlackReplica]:
    body = {"scene": {"name": "search", **copy.deepcopy(scene)}, "trial": 1}
    context = httpx.post(f"{server.url}/envs", json=body, timeout=30).json()
    replica = server.app.registry.envs[context["env_id"]].tools["slack"]
    assert isinstance(replica, SlackReplica)
    return context, replica


def _client(context: dict[str, Any], replica: SlackReplica, ref: str) -> WebClient:
    env = replica.world
    token = replica.issue_user_token(env.refs[ref].id, f"person:{ref}")
    return WebClient(token=token, base_url=context["tools"]["slack"]["url"] + "/api/")


@pytest.fixture
def laura(server: EmbeddedServer, slack_scene: dict[str, Any]) -> tuple[WebClient, SlackReplica, dict[str, Any]]:
    context, replica = _workspace(server, slack_scene)
    return _client(context, replica, "laura"), replica, context


def _error(excinfo: pytest.ExceptionInfo[SlackApiError]) -> str:
    return str(excinfo.value.response["error"])


def _texts(answer: Any) -> list[str]:
    return [m["text"] for m in answer["messages"]["matches"]]


def test_search_messages__a_bot_token_is_not_allowed_token_type(server, slack_scene):
    context, _ = _workspace(server, slack_scene)
    bot = WebClient(token=context["tools"]["slack"]["token"], base_url=context["tools"]["slack"]["url"] + "/api/")
    with pytest.raises(SlackApiError) as excinfo:
        bot.search_messages(query="exports")
    assert _error(excinfo) == "not_allowed_token_type"


def test_search_messages__finds_words_with_paging_and_a_permalink(laura, matches_spec):
    client, replica, _ = laura
    answer = client.search_messages(query="csv exports")
    matches_spec("search.messages", answer.data)
    assert answer["query"] == "csv exports"
    [match] = answer["messages"]["matches"]
    support = replica.world.refs["support"].id
    assert match["text"] == "Where did CSV exports go?" and match["channel"]["id"] == support
    assert match["channel"]["name"] == "support" and match["username"] == "laura"
    assert match["permalink"] == f"{replica.base_url}/archives/{support}/p{match['ts'].replace('.', '')}"
    assert answer["messages"]["paging"] == {"count": 20, "total": 1, "page": 1, "pages": 1}


def test_search_messages__sees_private_channels_only_of_members(server, slack_scene):
    context, replica = _workspace(server, slack_scene)
    laura = _client(context, replica, "laura")
    ben = _client(context, replica, "ben")
    assert _texts(laura.search_messages(query="psst")) == ["psst"]
    assert _texts(ben.search_messages(query="psst")) == []


def test_search_messages__in_from_and_quoted_phrases(laura):
    client, replica, _ = laura
    support = replica.world.refs["support"].id
    client.chat_postMessage(channel=support, text="the nightly export failed again")
    client.chat_postMessage(channel="#random", text="export of the year")
    assert _texts(client.search_messages(query="export in:#random")) == ["export of the year"]
    assert _texts(client.search_messages(query=f"export in:<#{support}|support>")) == ["the nightly export failed again"]
    assert _texts(client.search_messages(query="looking from:@ben")) == ["Looking"]
    assert _texts(client.search_messages(query="from:@laura in:#support looking")) == []
    assert _texts(client.search_messages(query='"export failed"')) == ["the nightly export failed again"]
    assert _texts(client.search_messages(query='"failed export"')) == []
    assert _texts(client.search_messages(query="export -nightly")) == ["export of the year"]
    assert _texts(client.search_messages(query="export in:#nowhere")) == []


def test_search_messages__sort_and_sort_dir_and_pages(laura):
    client, _, _ = laura
    for i in range(5):
        client.chat_postMessage(channel="#random", text=f"status update {i}" + (" status" if i == 2 else ""))
    newest = _texts(client.search_messages(query="status", sort="timestamp"))
    assert newest == [f"status update {i}" + (" status" if i == 2 else "") for i in range(4, -1, -1)]
    oldest = _texts(client.search_messages(query="status", sort="timestamp", sort_dir="asc"))
    assert oldest == list(reversed(newest))
    assert _texts(client.search_messages(query="status"))[0] == "status update 2 status"  # most matches first
    page = client.search_messages(query="status", sort="timestamp", count=2, page=3)
    assert _texts(page) == ["status update 0"]
    assert page["messages"]["paging"] == {"count": 2, "total": 5, "page": 3, "pages": 3}
    assert page["messages"]["pagination"]["first"] == 5 and page["messages"]["pagination"]["last"] == 5


def test_search_messages__highlight_marks_the_matched_terms(laura):
    client, _, _ = laura
    [match] = client.search_messages(query="exports", highlight=True)["messages"]["matches"]
    assert match["text"] == "Where did CSV \ue000exports\ue001 go?"


def test_search_messages__a_missing_query_is_invalid_arguments(laura):
    client, _, _ = laura
    with pytest.raises(SlackApiError) as excinfo:
        client.api_call("search.messages", params={})
    assert _error(excinfo) == "invalid_arguments"


def test_search_messages__a_long_seeded_history_is_searched_without_building_it(server, slack_scene):
    scene = slack_scene
    scene["world"]["slack"]["messages"] = [
        {"channel": "support", "from": "ben" if i % 2 else "laura", "text": f"ticket {i} resolved"}
        for i in range(2000)] + [{"channel": "support", "from": "ben", "text": "the needle is here"}]
    context, replica = _workspace(server, scene)
    client = _client(context, replica, "laura")
    support = replica.state.channels[replica.world.refs["support"].id]
    assert support.deferred
    [match] = client.search_messages(query="needle")["messages"]["matches"]
    assert match["text"] == "the needle is here" and match["user"] == replica.world.refs["ben"].id
    assert support.deferred  # read from the scene's shared plan, not filled in
    assert client.search_messages(query="ticket from:@ben", count=1)["messages"]["total"] == 1000
    client.conversations_history(channel=support.id, limit=1)  # now it is filled in, still lazily
    assert client.search_messages(query="ticket 1999")["messages"]["total"] == 1
    assert len(support.by_key.built()) < 10


def test_search_files_and_all__match_file_names_and_titles(server, slack_scene):
    context, replica = _workspace(server, slack_scene)
    laura = _client(context, replica, "laura")
    laura.files_upload_v2(channel=replica.world.refs["random"].id, content="q3", filename="q3-report.txt",
                          title="Quarterly report")
    files = laura.search_files(query="quarterly")
    assert [f["name"] for f in files["files"]["matches"]] == ["q3-report.txt"]
    everything = laura.search_all(query="report")
    assert everything["files"]["total"] == 1 and everything["messages"]["total"] == 0
    ben = _client(context, replica, "ben")  # a public channel's files are anyone's to find
    assert ben.search_files(query="quarterly")["files"]["total"] == 1
