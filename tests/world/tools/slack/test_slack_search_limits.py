"""Slack's search query is bounded (issue 26): past the shared length bound ``search.*``
answers Slack's ``invalid_arguments``; within it a query of hundreds of terms reads a
long history in linear time; the workspace answers as before afterwards. Hypothesis: no
text makes the parser or the matcher raise."""

from __future__ import annotations

import copy
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from ancha.server.embedded import EmbeddedServer
from ancha.world.kernel.query_limits import MAX_QUERY_LENGTH, TOO_LONG
from ancha.world.tools.slack.errors import InvalidArguments
from ancha.world.tools.slack.message_search import highlight, parse
from ancha.world.tools.slack.replica import SlackReplica

PARENS = "(" * 5000


@pytest.fixture(scope="module")
def server() -> Iterator[EmbeddedServer]:
    # An own server, in this process: a person's token is minted on the replica itself.
    with EmbeddedServer() as running:
        yield running


def _laura(server: EmbeddedServer, scene: dict[str, Any]) -> tuple[WebClient, SlackReplica]:
    body = {"scene": {"name": "search-limits", **copy.deepcopy(scene)}, "trial": 1}
    context = httpx.post(f"{server.url}/envs", json=body, timeout=30).json()
    replica = server.app.registry.envs[context["env_id"]].tools["slack"]
    assert isinstance(replica, SlackReplica)
    token = replica.issue_user_token(replica.world.refs["laura"].id, "person:laura")
    return WebClient(token=token, base_url=context["tools"]["slack"]["url"] + "/api/", timeout=30), replica


def _texts(answer: Any) -> list[str]:
    return [m["text"] for m in answer["messages"]["matches"]]


def _still_answers(client: WebClient) -> None:
    assert _texts(client.search_messages(query="exports")) == ["Where did CSV exports go?"]
    assert client.auth_test()["ok"]


def test_search__5000_open_parentheses_and_past_the_length_bound_are_invalid_arguments(server, slack_scene):
    client, _ = _laura(server, slack_scene)
    for query in (PARENS, "exports " + "x" * MAX_QUERY_LENGTH):
        for method in (client.search_messages, client.search_files, client.search_all):
            with pytest.raises(SlackApiError) as excinfo:
                method(query=query)
            answer = excinfo.value.response
            assert answer.status_code == 200  # Slack answers its errors with 200 and ok: false
            assert answer["error"] == "invalid_arguments"
            assert answer["response_metadata"]["messages"] == [f"[ERROR] {TOO_LONG} [json-pointer:/query]"]
    _still_answers(client)


def test_search__just_under_the_length_bound_still_works(server, slack_scene):
    client, _ = _laura(server, slack_scene)
    query = "exports" + " " * (MAX_QUERY_LENGTH - 7)
    assert len(query) == MAX_QUERY_LENGTH
    assert _texts(client.search_messages(query=query)) == ["Where did CSV exports go?"]
    nested = "(" * 32 + "exports" + ")" * 32  # Slack reads parentheses as punctuation around a word
    assert _texts(client.search_messages(query=nested)) == ["Where did CSV exports go?"]
    _still_answers(client)


def test_search__hundreds_of_terms_read_a_long_history_in_linear_time(server, slack_scene):
    # Each term was a regex compiled anew for every message (Python keeps 512): 700
    # exclusions over 2,000 messages took over two minutes.
    scene = copy.deepcopy(slack_scene)
    scene["world"]["slack"]["messages"] += [
        {"channel": "support", "from": "ben", "text": f"ticket {i} resolved by the on-call"} for i in range(2000)]
    client, _ = _laura(server, scene)
    excluded = "ticket " + " ".join(f"-w{i}" for i in range(MAX_QUERY_LENGTH))
    prefixes = "ticket " + " ".join(f"ti{'c' * (i % 3)}* on-call* in:#support{i} from:@x{i}" for i in range(200))
    started = time.monotonic()
    for query in (excluded[:MAX_QUERY_LENGTH].rsplit(" ", 1)[0], prefixes[:MAX_QUERY_LENGTH].rsplit(" ", 1)[0]):
        answer = client.search_messages(query=query, highlight=True)
        assert answer["messages"]["total"] in (0, 2000)
    assert client.search_messages(query=excluded[:MAX_QUERY_LENGTH].rsplit(" ", 1)[0])["messages"]["total"] == 2000
    assert time.monotonic() - started < 20  # linear: well under a second; it was minutes
    _still_answers(client)


_TOKENS = st.sampled_from(["exports", "-", "*", '"', "in:", "from:", "#", "@", "<#C1|x>", "<@U1>", "before:",
                           "after:", "on:", "2026-01-02", "me", " ", "(", ")", ".", "\\", "\u00e9", "\ud800", "\x00"])
_QUERIES = st.one_of(st.text(max_size=300), st.lists(_TOKENS, max_size=1500).map("".join))


@settings(max_examples=300, deadline=None, derandomize=True)
@given(text=_QUERIES, message=st.text(max_size=80))
def test_parse__any_text_is_a_query_that_matches_or_not_or_invalid_arguments(text: str, message: str) -> None:
    try:
        query = parse(text)
    except InvalidArguments:
        assert len(text) > MAX_QUERY_LENGTH
        return
    assert query.matches_text(message) >= 0
    assert isinstance(highlight(message, query), str)
