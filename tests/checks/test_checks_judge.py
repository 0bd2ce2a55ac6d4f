"""Judge checks against a stand-in OpenAI-compatible chat-completions server on loopback."""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from ancha.checks.judge import NO_KEY, JudgeUnavailable, evaluate_judge_checks, world_views
from ancha.checks.results import trial_verdict
from ancha.scene.model import CheckSpec, TraceCheck
from ancha.server.embedded import free_port

KEY = "sk-or-test-0123456789abcdef"
SLACK_TOKEN = "xoxb-1111-2222-secretbottoken"
TRIAL_TOKEN = "anc_trial_deadbeefdeadbeef"


class StandIn:
    """Answers /chat/completions from a queue of (status, content) and records the requests."""

    def __init__(self) -> None:
        self.answers: list[tuple[int, Any]] = []
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.port = free_port()
        app = Starlette(routes=[Route("/api/v1/chat/completions", self.complete, methods=["POST"])])
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port,
                                                    log_level="warning", lifespan="off"))
        self.thread = threading.Thread(target=lambda: asyncio.run(self.server.serve()), daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/v1"

    async def complete(self, request: Request) -> JSONResponse:
        self.requests.append(await request.json())
        self.headers.append(dict(request.headers))
        status, content = self.answers.pop(0) if self.answers else (500, "no answer queued")
        if status != 200:
            return JSONResponse({"error": {"message": str(content), "code": status}}, status_code=status)
        return JSONResponse({
            "id": "gen-1", "object": "chat.completion", "model": self.requests[-1]["model"],
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content}}],
        })

    def start(self) -> StandIn:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            assert time.monotonic() < deadline, "stand-in judge did not start"
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=5)


@pytest.fixture(scope="module")
def stand_in() -> Iterator[StandIn]:
    server = StandIn().start()
    yield server
    server.stop()


@pytest.fixture
def judge(stand_in: StandIn) -> StandIn:
    stand_in.answers.clear()
    stand_in.requests.clear()
    stand_in.headers.clear()
    return stand_in


RUBRIC = "The reply tells the customer where to find the CSV export."
CHECK = CheckSpec(id="helpful_reply", judge=RUBRIC)

TRACE = [
    {"seq": 1, "at": "2026-01-05T09:00:01Z", "actor": "agent", "tool": "slack", "method": "POST",
     "path": "/api/conversations.history", "query": {}, "status": 200,
     "request": {"channel": "C0SUPPORT", "token": SLACK_TOKEN},
     "response": {"ok": True, "messages": [{"text": "Where is the CSV export?", "user": "U0LAURA"}]},
     "worked": True, "coverage_gap": False},
    {"seq": 2, "at": "2026-01-05T09:00:02Z", "actor": "person:laura", "tool": "slack", "method": "POST",
     "path": "/api/chat.postMessage", "query": {}, "status": 200,
     "request": {"channel": "C0SUPPORT", "text": "laura's private aside"},
     "response": {"ok": True}, "worked": True, "coverage_gap": False},
    {"seq": 3, "at": "2026-01-05T09:00:03Z", "actor": "agent", "tool": "slack", "method": "POST",
     "path": "/api/chat.postMessage", "query": {}, "status": 200,
     "request": {"channel": "C0SUPPORT", "thread_ts": "1767600000.000100",
                 "text": f"Reports > Export, it takes two minutes. (debug {TRIAL_TOKEN})"},
     "response": {"ok": True, "channel": "C0SUPPORT", "ts": "1767603603.000001",
                  "message": {"text": "Reports > Export, it takes two minutes."}},
     "worked": True, "coverage_gap": False},
]
WORLD = {"slack": {"channels": [{"id": "C0SUPPORT", "name": "support"}], "users": [], "messages": {"C0SUPPORT": [
    {"ts": "1767600000.000100", "user": "U0LAURA", "seeded": True,
     "text": "SEEDED QUESTION: where is the CSV export?"},
    {"ts": "1767603603.000001", "user": "U0BOT", "thread_ts": "1767600000.000100",
     "seeded": False, "text": "Reports > Export, it takes two minutes."},
]}}}
MESSAGES = world_views(WORLD)


def _env(judge: StandIn, **extra: str) -> dict[str, str]:
    return {"OPENROUTER_API_KEY": KEY, "OPENROUTER_BASE_URL": judge.base_url,
            "ANCHA_SLACK_TOKEN": SLACK_TOKEN, **extra}


def _grade(judge: StandIn, **kwargs: Any) -> list[Any]:
    return evaluate_judge_checks([CHECK], TRACE, MESSAGES, "acme/judge-1", _env(judge),
                                 retry_delay=0, **kwargs)


def test_judge__skipped_without_a_key() -> None:
    results = evaluate_judge_checks([CHECK], TRACE, MESSAGES, None, {"PATH": "/usr/bin"})
    assert [r.status for r in results] == ["skipped"]
    assert results[0].passed is False
    assert results[0].explanation == NO_KEY
    assert trial_verdict(results) == "failed"


def test_judge__passes_when_the_model_says_so(judge: StandIn) -> None:
    judge.answers.append((200, '{"passed": true, "explanation": "It names Reports > Export.", "evidence": [3, 99]}'))
    [result] = _grade(judge)
    assert result.status == "passed" and result.passed
    assert result.explanation == "Passed by the judge: It names Reports > Export."
    assert result.expected == f"the judge agrees: {RUBRIC}"
    assert result.evidence == [3]  # 99 is no call the model was shown
    sent = judge.requests[0]
    assert sent["model"] == "acme/judge-1"
    assert judge.headers[0]["authorization"] == f"Bearer {KEY}"
    prompt = sent["messages"][-1]["content"]
    assert RUBRIC in prompt
    assert "POST /api/chat.postMessage" in prompt
    assert "Reports > Export, it takes two minutes." in prompt


def test_judge__fails_when_the_model_says_so(judge: StandIn) -> None:
    answer = '```json\n{"passed": false, "explanation": "The reply never mentions the export."}\n```'
    judge.answers.append((200, answer))
    [result] = _grade(judge, required=["helpful_reply"])
    assert result.status == "failed" and not result.passed and result.required
    assert result.explanation == "Failed by the judge: The reply never mentions the export."
    assert result.actual == "the judge (acme/judge-1) found the rubric not met"


def test_judge__prompt_has_no_credentials_seed_or_other_people(judge: StandIn) -> None:
    judge.answers.append((200, '{"passed": true, "explanation": "ok"}'))
    other = CheckSpec(id="posted", trace=TraceCheck(called=["POST /api/chat.postMessage"]))
    evaluate_judge_checks([other, CHECK], TRACE, MESSAGES, None, _env(judge), retry_delay=0)
    assert len(judge.requests) == 1  # only the judge check goes to the model
    prompt = json.dumps(judge.requests[0])
    for secret in (KEY, SLACK_TOKEN, TRIAL_TOKEN, "xoxb-"):
        assert secret not in prompt
    assert "SEEDED QUESTION" not in prompt
    assert "laura's private aside" not in prompt
    assert "posted" not in prompt  # other checks are never shown
    assert judge.requests[0]["model"] == "openai/gpt-4o-mini"


def test_judge__malformed_answer_is_retried_then_unavailable(judge: StandIn) -> None:
    judge.answers.extend([(200, "I think it passes."), (200, '{"passed": "yes"}')])
    with pytest.raises(JudgeUnavailable, match="not a verdict"):
        _grade(judge)
    assert len(judge.requests) == 2


def test_judge__malformed_answer_then_a_verdict_grades(judge: StandIn) -> None:
    judge.answers.extend([(200, "no json here"), (200, '{"passed": true, "explanation": "Fine."}')])
    [result] = _grade(judge)
    assert result.passed


def test_judge__http_500_makes_the_judge_unavailable(judge: StandIn) -> None:
    judge.answers.extend([(500, "upstream exploded"), (500, "upstream exploded")])
    with pytest.raises(JudgeUnavailable, match="HTTP 500: upstream exploded"):
        _grade(judge)


def test_judge__http_401_is_not_retried(judge: StandIn) -> None:
    judge.answers.append((401, "No auth credentials found"))
    with pytest.raises(JudgeUnavailable, match="HTTP 401"):
        _grade(judge)
    assert len(judge.requests) == 1


def test_judge__unreachable_server_makes_the_judge_unavailable() -> None:
    env = {"OPENROUTER_API_KEY": KEY, "OPENROUTER_BASE_URL": f"http://127.0.0.1:{free_port()}/v1"}
    with pytest.raises(JudgeUnavailable, match="ConnectError"):
        evaluate_judge_checks([CHECK], TRACE, MESSAGES, None, env, retry_delay=0)


def test_judge__reads_the_runners_files_from_a_real_world(judge: StandIn, make_env: Any, ancha_server: str) -> None:
    import httpx
    from slack_sdk import WebClient

    from ancha.checks.judge import trace_entries_from_jsonl
    from ancha.world.tools.slack.judge import messages_from_snapshot

    context = make_env({"world": {"slack": {
        "users": [{"ref": "laura", "name": "laura"}],
        "channels": [{"ref": "support", "name": "support", "members": ["slack_bot", "laura"]}],
        "messages": [{"ref": "question", "channel": "support", "from": "laura", "text": "SEEDED: where is it?"}],
    }}})
    slack = context["tools"]["slack"]
    agent = WebClient(token=slack["token"], base_url=slack["url"] + "/api/")
    channel = agent.conversations_list()["channels"][0]["id"]
    agent.chat_postMessage(channel=channel, text="Reports > Export, two minutes.")
    env_url = f"{ancha_server}/envs/{context['env_id']}"
    trace = trace_entries_from_jsonl(httpx.get(f"{env_url}/trace").text)
    world = httpx.get(f"{env_url}/state").json()
    messages = messages_from_snapshot(world["slack"])
    assert [m["text"] for m in messages] == ["SEEDED: where is it?", "Reports > Export, two minutes."]
    assert messages[1]["channel_name"] == "#support" and messages[1]["user_name"] == "@ancha"

    judge.answers.append((200, '{"passed": true, "explanation": "Clear answer.", "evidence": [2]}'))
    [result] = evaluate_judge_checks([CHECK], trace, world_views(world), None, _env(judge, ANCHA_SLACK_TOKEN=slack["token"]),
                                     secrets=[context["trial_token"]], retry_delay=0)
    assert result.passed and result.evidence == [2]
    prompt = judge.requests[0]["messages"][-1]["content"]
    assert "- #support, top level, ts " in prompt and "from @ancha: Reports > Export, two minutes." in prompt
    assert "#2 POST /api/chat.postMessage -> 200 ok" in prompt
    assert "SEEDED: where is it?" not in prompt.split("Slack messages written during the attempt")[1]
    assert slack["token"] not in json.dumps(judge.requests[0])
    assert context["trial_token"] not in json.dumps(judge.requests[0])


# --- issue 14 ------------------------------------------------------------------------

JUDGE_SCENE = {"world": {"slack": {
    "users": [{"ref": "laura", "name": "laura"}],
    "channels": [{"ref": "support", "name": "support", "members": ["slack_bot", "laura"]}],
}}, "checks": [{"id": "posted", "trace": {"called": ["POST /api/chat.postMessage"]}},
               {"id": "helpful_reply", "judge": RUBRIC}]}


def _check_cli(env_id: str, server: str, judge: StandIn) -> Any:
    from click.testing import CliRunner

    from ancha.cli.check import check

    env = {"OPENROUTER_API_KEY": KEY, "OPENROUTER_BASE_URL": judge.base_url, "ANCHA_SERVER_KEY": None}
    return CliRunner().invoke(check, ["--env", env_id, "--server", server, "--json"], env=env)


def test_check_cli__grades_judge_checks_with_a_key(judge: StandIn, make_env: Any, ancha_server: str) -> None:
    from slack_sdk import WebClient

    context = make_env(JUDGE_SCENE)
    slack = context["tools"]["slack"]
    agent = WebClient(token=slack["token"], base_url=slack["url"] + "/api/")
    channel = agent.conversations_list()["channels"][0]["id"]
    agent.chat_postMessage(channel=channel, text="Reports > Export, two minutes.")
    judge.answers.append((200, '{"passed": true, "explanation": "It names Reports > Export.", "evidence": [2]}'))
    answer = _check_cli(context["env_id"], ancha_server, judge)
    assert answer.exit_code == 0, answer.output
    results = {r["id"]: r for r in json.loads(answer.output)}
    assert results["helpful_reply"]["status"] == "passed"
    assert results["helpful_reply"]["explanation"] == "Passed by the judge: It names Reports > Export."
    assert results["helpful_reply"]["evidence"] == [2]
    assert len(judge.requests) == 1
    sent = json.dumps(judge.requests[0])
    for secret in (slack["token"], slack["signing_secret"], slack["app_token"], context["trial_token"]):
        assert secret not in sent


def test_check_cli__a_failed_judge_call_is_an_error(judge: StandIn, make_env: Any, ancha_server: str) -> None:
    context = make_env(JUDGE_SCENE)
    judge.answers.extend([(500, "upstream exploded"), (500, "upstream exploded")])
    answer = _check_cli(context["env_id"], ancha_server, judge)
    assert answer.exit_code == 1, answer.output
    result = {r["id"]: r for r in json.loads(answer.output)}["helpful_reply"]
    assert result["status"] == "error" and result["passed"] is False
    assert result["explanation"] == ("Not graded: the judge model answered HTTP 500: upstream exploded; "
                                     "the trial is invalid, not failed")


def test_judge_view__shows_the_bots_user_id_and_team_id(judge: StandIn, make_env: Any, ancha_server: str) -> None:
    from slack_sdk import WebClient

    context = make_env(JUDGE_SCENE)
    slack = context["tools"]["slack"]
    bot_user_id, team_id = slack["bot_user_id"], slack["team_id"]
    agent = WebClient(token=slack["token"], base_url=slack["url"] + "/api/")
    assert agent.auth_test()["user_id"] == bot_user_id
    channel = agent.conversations_list()["channels"][0]["id"]
    agent.chat_postMessage(channel=channel, text=f"I am <@{bot_user_id}> of team {team_id}.")
    judge.answers.append((200, '{"passed": true, "explanation": "ok"}'))
    answer = _check_cli(context["env_id"], ancha_server, judge)
    assert answer.exit_code == 0, answer.output
    prompt = judge.requests[0]["messages"][-1]["content"]
    assert f"I am <@{bot_user_id}> of team {team_id}." in prompt  # the view: ids are no credentials
    assert f'"user_id":"{bot_user_id}"' in prompt and f'"team_id":"{team_id}"' in prompt  # auth.test's answer
    for secret in (slack["token"], slack["signing_secret"], slack["app_token"], context["trial_token"]):
        assert secret not in prompt


def test_context_secrets__credentials_only_not_ids() -> None:
    from ancha.checks.judge import context_secrets

    context = {"tools": {
        "slack": {"url": "http://x/slack", "token": "xoxb-1", "signing_secret": "s1", "app_token": "xapp-1",
                  "team_id": "T0TEAM", "bot_user_id": "U0BOT"},
        "github": {"url": "http://x/github", "token": "ghp_1", "login": "ancha-bot", "signing_secret": "s2"},
        "datadog": {"api_key": "k1", "app_key": "k2", "webhook_token": "w1"},
        "pagerduty": {"token": "u+1", "from_email": "bot@example.com", "routing_key": "r1", "routing_keys": "r1"},
    }, "trial_token": "anc_trial_1", "events": {"url": "http://x/events", "token": "anc_ev_1"}}
    secrets = set(context_secrets(context))
    assert secrets == {"xoxb-1", "s1", "xapp-1", "ghp_1", "s2", "k1", "k2", "w1", "u+1", "r1",
                       "anc_trial_1", "anc_ev_1"}


def test_run__a_failed_judge_call_errors_the_check_and_invalidates_the_trial(
        judge: StandIn, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner
    from rich.console import Console

    import ancha.runner.run as run_module
    from ancha.cli.explain import explain
    from ancha.config.loading import load_config
    from ancha.scene.loading import load_scenes
    from ancha.world.registry import catalog, config_catalog

    (tmp_path / "scenes" / "hello").mkdir(parents=True)
    (tmp_path / "scenes" / "hello" / "scene.yaml").write_text(
        "name: hello\ntask: Say hello in #general.\nclock: { limit: 10m }\nworld:\n  slack:\n"
        "    users: [{ ref: slack_ana, name: ana }]\n"
        "    channels: [{ ref: slack_general, name: general, members: [$slack_ana, $slack_bot] }]\n"
        "checks:\n  - id: posted\n    trace: { called: \"GET /api/auth.test\" }\n"
        f"  - id: helpful_reply\n    judge: \"{RUBRIC}\"\n")
    (tmp_path / "agent.py").write_text("print('nothing to do')\n")
    (tmp_path / "ancha.yaml").write_text(f"agent:\n  command: {sys.executable} agent.py\ntrials: 1\n")
    monkeypatch.setenv("OPENROUTER_API_KEY", KEY)
    monkeypatch.setenv("OPENROUTER_BASE_URL", judge.base_url)
    judge.answers.extend([(500, "upstream exploded"), (500, "upstream exploded")])
    config = load_config(None, tmp_path, catalog=config_catalog())
    scenes = load_scenes(list(config.scenes), config.root, catalog())
    result = asyncio.run(run_module.run_scenes(config, scenes, console=Console(file=sys.stderr), progress=False))

    checks = json.loads((result.run_dir / "hello" / "1" / "checks.json").read_text())
    assert checks["verdict"] == "invalid"
    assert "judge" in checks["reason"] and "HTTP 500: upstream exploded" in checks["reason"]
    by_id = {r["id"]: r for r in checks["results"]}
    assert by_id["helpful_reply"]["status"] == "error"
    assert by_id["helpful_reply"]["passed"] is False
    assert "HTTP 500: upstream exploded" in by_id["helpful_reply"]["explanation"]
    assert by_id["posted"]["status"] == "failed"  # graded as usual; the trial is still invalid, not failed

    summary = json.loads((result.run_dir / "summary.json").read_text())
    [trial] = summary["scenes"][0]["trial_results"]
    assert trial["verdict"] == "invalid"

    explained = CliRunner().invoke(explain, [result.run_dir.name, "--runs-dir", str(result.run_dir.parent)])
    assert explained.exit_code == 0, explained.output
    assert "hello / trial 1: invalid" in explained.output
    assert "judge" in explained.output and "HTTP 500: upstream exploded" in explained.output
    assert "FAILED helpful_reply" not in explained.output and "1 failed check" in explained.output
