"""slack.message state checks and check results, graded on live worlds over HTTP.

The agent acts through slack_sdk against the replica; a colleague's messages are
posted with a user token the replica issues to that person. Checks go to
``POST /envs/{id}/checks`` exactly as ``ancha check`` sends them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from ancha.checks.evaluate import evaluate_checks
from ancha.scene.model import CheckSpec
from ancha.server.embedded import EmbeddedServer

SCENE: dict[str, Any] = {
    "name": "export-question",
    "task": "Answer Laura's question in #support.",
    "world": {"slack": {
        "users": [{"ref": "laura", "name": "laura", "real_name": "Laura Diaz"},
                  {"ref": "ben", "name": "ben"}],
        "channels": [{"ref": "support", "name": "support", "members": ["slack_bot", "laura", "ben"]},
                     {"ref": "general", "name": "general", "members": ["slack_bot", "laura", "ben"]}],
        "messages": [
            {"ref": "question", "channel": "support", "from": "laura", "text": "Where is the CSV export?"},
            {"ref": "other_question", "channel": "support", "from": "ben", "text": "Is SSO down?"},
            {"channel": "support", "from": "ben", "text": "Exports live under Reports.", "thread_of": "question"},
        ],
    }},
    "checks": [
        {"id": "answered", "state": {"slack.message": {"channel": "support", "from": "slack_bot",
                                                       "in_thread_of": "question"}}},
        {"id": "posted", "trace": {"called": ["POST /api/chat.postMessage"]}},
        {"id": "tone", "judge": "The reply is friendly."},
    ],
    "pass": ["answered", "posted"],
}


class World:
    """One live environment: the agent's Slack client, a person's, and the checks endpoint."""

    def __init__(self, server: EmbeddedServer, context: dict[str, Any]) -> None:
        self.server = server
        self.context = context
        self.env_id = context["env_id"]
        slack = context["tools"]["slack"]
        self.agent = WebClient(token=slack["token"], base_url=slack["url"] + "/api/")
        self.env = server.app.state.registry.get(self.env_id)
        self.slack_url = slack["url"] + "/api/"

    def channel(self, ref: str) -> str:
        return str(self.env.refs[ref].id)

    def ts(self, ref: str) -> str:
        return str(self.env.refs[ref].id.partition("/")[2])

    def person(self, ref: str) -> WebClient:
        replica = self.env.tools["slack"]
        token = replica.issue_user_token(self.env.refs[ref].id, f"person:{ref}")
        return WebClient(token=token, base_url=self.slack_url)

    def check(self, *checks: dict[str, Any]) -> list[dict[str, Any]]:
        body = {"checks": list(checks)} if checks else None
        answer = httpx.post(f"{self.server.url}/envs/{self.env_id}/checks", json=body, timeout=30)
        assert answer.status_code == 200, answer.text
        results: list[dict[str, Any]] = answer.json()["results"]
        return results

    def one(self, check: dict[str, Any]) -> dict[str, Any]:
        [result] = self.check({"id": "c", **check})
        return result


@pytest.fixture(scope="module")
def server() -> Iterator[EmbeddedServer]:
    with EmbeddedServer() as embedded:
        yield embedded


@pytest.fixture
def world(server: EmbeddedServer) -> Iterator[Callable[..., World]]:
    made: list[str] = []

    def make(scene: dict[str, Any] | None = None) -> World:
        answer = httpx.post(f"{server.url}/envs", json={"scene": scene or SCENE, "trial": 1}, timeout=30)
        assert answer.status_code == 201, answer.text
        made.append(answer.json()["env_id"])
        return World(server, answer.json())

    yield make
    for env_id in made:
        httpx.delete(f"{server.url}/envs/{env_id}")


def _message(**fields: Any) -> dict[str, Any]:
    return {"state": {"slack.message": {"channel": "$support", **fields}}}


def test_slack_message__seeded_messages_count_unless_from_excludes_them(world: Callable[..., World]) -> None:
    w = world()
    # The seed has Laura's question about the CSV export and Ben's reply in its thread.
    mentions = w.one(_message(text_contains="export"))
    assert mentions["passed"] and mentions["actual"] == "2 matching messages in #support"
    assert mentions["evidence"] == []  # no call made them
    assert w.one(_message(in_thread_of="$question"))["passed"]
    result = w.one(_message(**{"from": "$slack_bot", "in_thread_of": "$question"}))
    assert result["status"] == "failed"
    assert result["actual"].startswith("1 message in the thread of $question in #support, but not from $slack_bot "
                                       "(written by @ben (U")
    assert result["expected"] == "a message in $support from $slack_bot in the thread of $question"


def test_slack_message__reads_a_long_seeded_history_without_building_it(world: Callable[..., World]) -> None:
    from ancha.world.tools.slack.models import Message

    history = [{"channel": "general", "from": "ben" if i % 2 else "laura", "text": f"note {i}"} for i in range(3000)]
    scene = {**SCENE, "world": {"slack": {**SCENE["world"]["slack"], "messages": history}}, "checks": [], "pass": []}
    w = world(scene)
    w.agent.chat_postMessage(channel=w.channel("general"), text="note from the bot")
    slack = w.env.tools["slack"]
    general = slack.state.channels[w.channel("general")]
    result = w.one({"state": {"slack.message": {"channel": "$general", "from": "$ben", "text_contains": "note 29",
                                                "count_gte": 56}}})
    assert result["passed"] and result["actual"] == "56 matching messages in #general"  # 29, 291, 2901...
    assert [type(m) is Message for m in general.by_key.built()] == [True]  # only the bot's post was built
    bot = w.one({"state": {"slack.message": {"channel": "$general", "from": "$slack_bot"}}})
    assert bot["passed"] and bot["evidence"] == [1]


def test_slack_message__channel_must_match(world: Callable[..., World]) -> None:
    w = world()
    posted = w.agent.chat_postMessage(channel=w.channel("general"), text="CSV export is under Reports")
    result = w.one(_message(**{"from": "$slack_bot"}))
    assert not result["passed"]
    assert result["actual"].startswith("3 messages in #support, but not from $slack_bot (written by @laura (U")
    assert result["actual"].endswith("; 1 message from $slack_bot went to #general instead")
    assert result["evidence"] == [1]
    assert posted["ok"]
    assert w.one({"state": {"slack.message": {"channel": "$channel.general"}}})["passed"]


def test_slack_message__from_names_the_author(world: Callable[..., World]) -> None:
    w = world()
    w.person("laura").chat_postMessage(channel=w.channel("support"), text="bump", thread_ts=w.ts("question"))
    result = w.one(_message(**{"from": "$slack_bot"}))
    assert not result["passed"]
    assert result["actual"].startswith("4 messages in #support, but not from $slack_bot (written by @laura (U")
    assert "went to" not in result["actual"]  # Laura wrote here during the trial
    assert result["evidence"] == [1]
    assert w.one(_message(**{"from": "$user.laura"}))["passed"]


def test_slack_message__text_contains_ignores_case(world: Callable[..., World]) -> None:
    w = world()
    w.agent.chat_postMessage(channel=w.channel("support"), text="Open Reports > EXPORTS, then CSV.")
    assert w.one(_message(text_contains="exports"))["passed"]
    result = w.one(_message(text_contains="two minutes"))
    assert not result["passed"]
    assert result["actual"] == ("4 messages in #support, but no message contained 'two minutes' "
                                "(the latest said 'Open Reports > EXPORTS, then CSV.')")


def test_slack_message__text_contains_reads_blocks(world: Callable[..., World]) -> None:
    w = world()
    blocks = [{"type": "section", "text": {"type": "mrkdwn", "text": "The *export* takes two minutes"}}]
    w.agent.chat_postMessage(channel=w.channel("support"), text="fallback", blocks=blocks)
    assert w.one(_message(text_contains="TWO MINUTES"))["passed"]


def test_slack_message__in_thread_of_counts_replies_only(world: Callable[..., World]) -> None:
    w = world()
    # A top-level post and a reply to the wrong question are near misses, not matches.
    w.agent.chat_postMessage(channel=w.channel("support"), text="Exports are under Reports")
    wrong = w.agent.chat_postMessage(channel=w.channel("support"), text="Exports are under Reports",
                                     thread_ts=w.ts("other_question"))
    result = w.one(_message(**{"from": "$slack_bot", "in_thread_of": "$question"}))
    assert not result["passed"]
    assert result["expected"] == "a message in $support from $slack_bot in the thread of $question"
    assert result["actual"] == ("2 messages from $slack_bot in #support, but not in the thread of $question "
                                f"(it went to the top level of the channel, thread {w.ts('other_question')})")
    assert result["evidence"] == [1, 2]
    assert result["explanation"] == f"Failed: expected {result['expected']}; actually {result['actual']}."
    right = w.agent.chat_postMessage(channel=w.channel("support"), text="Reports > Export",
                                     thread_ts=w.ts("question"))
    passed = w.one(_message(**{"from": "$slack_bot", "in_thread_of": "$question"}))
    assert passed["passed"] and passed["status"] == "passed"
    assert passed["evidence"] == [3]
    assert passed["actual"] == "1 matching message in #support"
    assert wrong["ts"] != right["ts"]


def test_slack_message__thread_parent_itself_is_not_a_reply(world: Callable[..., World]) -> None:
    # A ref to a parent written during the trial: the parent itself is not one of its replies.
    scene = {**SCENE, "world": {"slack": {**SCENE["world"]["slack"], "messages": []}}, "checks": [], "pass": []}
    w = world(scene)
    parent = w.agent.chat_postMessage(channel=w.channel("support"), text="Release notes thread")
    w.agent.chat_postMessage(channel=w.channel("support"), text="first note", thread_ts=parent["ts"])
    w.env.register_ref("notes", "message", "slack", f"{parent['channel']}/{parent['ts']}")
    spec = CheckSpec.model_validate(
        {"id": "notes", "state": {"slack.message": {"channel": "support", "in_thread_of": "notes", "count_gte": 2}}})
    [result] = evaluate_checks(w.env, [spec])
    assert not result.passed
    assert result.actual == "only 1 matching message in #support, 2 needed"
    assert result.evidence == [2]


def test_slack_message__count_gte(world: Callable[..., World]) -> None:
    w = world()
    for text in ("one", "two", "three"):
        w.agent.chat_postMessage(channel=w.channel("support"), text=text, thread_ts=w.ts("question"))
    check = {"channel": "$support", "from": "$slack_bot", "in_thread_of": "$question"}
    assert w.one({"state": {"slack.message": {**check, "count_gte": 3}}})["passed"]
    result = w.one({"state": {"slack.message": {**check, "count_gte": 4}}})
    assert not result["passed"]
    assert result["expected"].startswith("at least 4 messages in $support")
    assert result["actual"] == "only 3 matching messages in #support, 4 needed"
    assert result["evidence"] == [1, 2, 3]


def test_checks__scene_checks_with_required_and_judge_skipped(world: Callable[..., World]) -> None:
    w = world()
    try:
        w.agent.chat_postMessage(channel="C0NOTHERE", text="hi")
    except SlackApiError as exc:
        assert exc.response["error"] == "channel_not_found"
    results = {r["id"]: r for r in w.check()}
    assert results["answered"]["required"] and results["posted"]["required"]
    assert results["tone"] == {
        "id": "tone", "required": False, "passed": False, "status": "skipped",
        "expected": "the judge agrees: The reply is friendly.", "actual": "not graded",
        "explanation": "judge checks are graded by the runner", "evidence": []}
    posted = results["posted"]
    assert posted["status"] == "failed"
    assert posted["expected"] == "a call matching POST /api/chat.postMessage that worked"
    assert posted["actual"] == "1 matching call, none worked (last: 200 ok:false channel_not_found)"
    assert posted["evidence"] == [1]
    assert posted["explanation"] == (
        "Failed: expected a call matching POST /api/chat.postMessage that worked, but found "
        "1 matching call, none worked (last: 200 ok:false channel_not_found).")


def test_checks__unknown_ref_is_rejected(world: Callable[..., World]) -> None:
    w = world()
    answer = httpx.post(f"{w.server.url}/envs/{w.env_id}/checks",
                        json={"checks": [{"id": "x", "state": {"slack.message": {"channel": "$suport"}}},
                                         {"id": "y", "trace": {"called": "chat.postMessage"}}]})
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert "checks[0].state.slack.message.channel: unknown ref $suport (refs of kind channel: $support, $general)" \
        in error
    assert "checks[1].trace" in error and "chat.postMessage" in error


def test_slack_message__closest_miss_when_no_message_has_the_text(world: Callable[..., World]) -> None:
    w = world()
    for text in ("Looking into it", "Found it: Reports"):
        w.agent.chat_postMessage(channel=w.channel("support"), text=text, thread_ts=w.ts("question"))
    result = w.one(_message(**{"from": "$slack_bot", "in_thread_of": "$question", "text_contains": "Exports"}))
    assert not result["passed"]
    assert result["actual"] == ("2 messages from $slack_bot in the thread of $question in #support, but no message "
                                "contained 'Exports' (the latest said 'Found it: Reports')")
    assert result["evidence"] == [1, 2]


def test_checks__coverage_gaps_never_work(world: Callable[..., World]) -> None:
    w = world()
    answer = None
    try:
        w.agent.api_call("admin.apps.approve", params={"app_id": "A1"})
    except SlackApiError as exc:
        answer = exc.response
    assert answer is not None and answer.status_code == 501
    result = w.one({"trace": {"called": "* /api/admin.apps.approve"}})
    assert not result["passed"]
    assert result["actual"] == "1 matching call, none worked (last: 501 not implemented (coverage gap))"
    assert w.one({"trace": {"called": "* /api/admin.apps.*", "status": "any"}})["passed"]


def test_checks__every_check_is_required_when_pass_is_empty(world: Callable[..., World]) -> None:
    w = world({**SCENE, "pass": []})
    results = w.check()
    assert [r["required"] for r in results] == [True, True, True]
    assert [r["status"] for r in results] == ["failed", "failed", "skipped"]


def test_checks__an_ungradable_check_fails_with_the_reason(world: Callable[..., World]) -> None:
    w = world()
    spec = CheckSpec.model_validate({"id": "odd", "trace": {"called": ["POST /api/chat.postMessage?x=1"]}})
    [result] = evaluate_checks(w.env, [spec])
    assert result.status == "failed"
    assert result.actual.startswith("it could not be graded: trace pattern 'POST /api/chat.postMessage?x=1': "
                                    "patterns match the path without its query string")
