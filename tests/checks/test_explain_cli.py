"""``ancha explain`` on a results folder built from a real graded world."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
from click.testing import CliRunner
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from ancha.cli.explain import explain

SCENE: dict[str, Any] = {
    "world": {"slack": {
        "users": [{"ref": "laura", "name": "laura"}],
        "channels": [{"ref": "support", "name": "support", "members": ["slack_bot", "laura"]}],
        "messages": [{"ref": "question", "channel": "support", "from": "laura", "text": "Where is the export?"}],
    }},
    "checks": [
        {"id": "answered", "state": {"slack.message": {"channel": "support", "from": "slack_bot",
                                                       "in_thread_of": "question"}}},
        {"id": "posted", "trace": {"called": ["POST /api/chat.postMessage"]}},
        {"id": "reacted", "trace": {"called": ["POST /api/reactions.add"]}},
        {"id": "read_first", "trace": {"called": ["GET /api/conversations.history"], "status": "any"}},
    ],
    "pass": ["answered", "posted", "reacted"],
}


def _graded_trial(make_env: Any, ancha_server: str, folder: Path) -> None:
    """Run a clumsy agent in a real world and write the trial folder as the runner does."""
    context = make_env(SCENE)
    slack = context["tools"]["slack"]
    agent = WebClient(token=slack["token"], base_url=slack["url"] + "/api/")
    try:
        agent.chat_postMessage(channel="C0NOPE", text="Exports are under Reports")
    except SlackApiError:
        pass
    channel = agent.conversations_list()["channels"][0]["id"]
    posted = agent.chat_postMessage(channel=channel, text="Exports are under Reports > Export")
    try:
        agent.reactions_add(channel="C0NOPE", timestamp=posted["ts"], name="eyes")
    except SlackApiError:
        pass
    env_url = f"{ancha_server}/envs/{context['env_id']}"
    results = httpx.post(f"{env_url}/checks").json()["results"]
    folder.mkdir(parents=True)
    (folder / "trace.jsonl").write_text(httpx.get(f"{env_url}/trace").text)
    (folder / "world.json").write_text(httpx.get(f"{env_url}/state").text)
    (folder / "records.jsonl").write_text("")
    (folder / "agent.log").write_text("posting...\nTraceback: boom\n\nancha: the agent exited with code 1\n")
    body = {"scene": "export-question", "trial": 1, "verdict": "failed", "status": "done",
            "reason": "the agent exited with code 1", "results": results}
    (folder / "checks.json").write_text(json.dumps(body))


def _passed_trial(folder: Path) -> None:
    folder.mkdir(parents=True)
    (folder / "checks.json").write_text(json.dumps({
        "scene": "export-question", "trial": 2, "verdict": "passed", "status": "done", "reason": None,
        "results": [{"id": "posted", "required": True, "passed": True, "status": "passed", "expected": "x",
                     "actual": "y", "explanation": "z", "evidence": [1]}]}))


def test_explain__prints_failed_checks_with_evidence(make_env: Any, ancha_server: str, tmp_path: Path) -> None:
    runs = tmp_path / ".ancha" / "runs"
    run = runs / "20260105T090000Z-abc123"
    _graded_trial(make_env, ancha_server, run / "export-question" / "1")
    _passed_trial(run / "export-question" / "2")
    (run / "summary.json").write_text("{}")
    (runs / "latest").symlink_to("20260105T090000Z-abc123", target_is_directory=True)

    answer = CliRunner().invoke(explain, ["--runs-dir", str(runs)])
    assert answer.exit_code == 0, answer.output
    out = answer.output
    assert out.startswith("run 20260105T090000Z-abc123: 3 failed checks in 1 of 2 trials\n")
    assert "export-question / trial 1: failed (world done)\n  agent: the agent exited with code 1\n" in out
    assert ("  console: http://127.0.0.1:7700/ui/runs/20260105T090000Z-abc123/export-question/1  "
            "(`ancha ui` serves it)\n") in out
    assert "trial 2" not in out
    assert "  FAILED answered (required)\n" in out
    assert "    expected: a message in $support from $slack_bot in the thread of $question" in out
    assert ("    actual:   1 message from $slack_bot in #support, but not in the thread of $question "
            "(it went to the top level of the channel)\n") in out
    assert "  FAILED read_first (not required)\n" in out
    assert "    actual:   no agent call matched; the agent called: " in out
    # The failed attempt is cited with its Slack error and what was sent.
    assert "  FAILED reacted (required)\n" in out
    assert "    actual:   1 matching call, none worked (last: 200 ok:false channel_not_found)\n" in out
    assert "      #4 POST /api/reactions.add -> 200 ok:false channel_not_found  channel=C0NOPE name=eyes\n" in out
    assert '      #3 POST /api/chat.postMessage -> 200 ok  channel=C' in out
    assert 'text="Exports are under Reports > Export"\n' in out
    assert "posted" not in out.split("FAILED")[0]  # the passing check is not listed


def test_explain__latest_as_a_file_and_nothing_failed(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    _passed_trial(runs / "r1" / "export-question" / "2")
    (runs / "latest").write_text("r1\n")
    answer = CliRunner().invoke(explain, ["--runs-dir", str(runs)])
    assert answer.exit_code == 0
    assert answer.output == "no failed checks in run r1 (1 trial passed)\n"
    by_id = CliRunner().invoke(explain, ["r1", "--runs-dir", str(runs)])
    assert by_id.output == answer.output


def test_explain__invalid_trial_shows_its_reason(tmp_path: Path) -> None:
    folder = tmp_path / "runs" / "r2" / "s" / "1"
    folder.mkdir(parents=True)
    (folder / "checks.json").write_text(json.dumps({
        "scene": "s", "trial": 1, "verdict": "invalid", "status": None, "reason": None,
        "invalid_reason": "the judge model answered HTTP 500", "results": []}))
    (folder / "agent.log").write_text("ancha: command not found: python4\n")
    answer = CliRunner().invoke(explain, ["r2", "--runs-dir", str(tmp_path / "runs")])
    assert answer.exit_code == 0
    assert answer.output == ("run r2: 0 failed checks in 1 of 1 trial\n\ns / trial 1: invalid\n"
                             "  agent: the judge model answered HTTP 500\n"
                             "  agent: command not found: python4\n"
                             "  console: http://127.0.0.1:7700/ui/runs/r2/s/1  (`ancha ui` serves it)\n")


def test_explain__no_run_exits_2(tmp_path: Path) -> None:
    missing = CliRunner().invoke(explain, ["--runs-dir", str(tmp_path / "nothing")])
    assert missing.exit_code == 2
    assert "no runs here" in missing.output
    (tmp_path / "runs" / "r1").mkdir(parents=True)
    unknown = CliRunner().invoke(explain, ["r9", "--runs-dir", str(tmp_path / "runs")])
    assert unknown.exit_code == 2
    assert "no run 'r9'" in unknown.output and "runs: r1" in unknown.output
