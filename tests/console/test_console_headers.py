"""Every console response says ``X-Content-Type-Options: nosniff`` and carries a strict
``Content-Security-Policy`` (scripts, styles and connections from the console itself only,
nothing inline, no frames); a raw file (``agent.log``) is plain text with a safe
``Content-Disposition`` and a policy that runs nothing, whatever the agent wrote in it."""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import quote

from starlette.testclient import TestClient

from ancha.console.app import console_app

RUN = "20260101T000000Z-aaaaaa"
SCENE = 'na"me; é<x>'
HOSTILE_LOG = "<html><script>alert(document.cookie)</script></html>\n"


def _runs(tmp_path: Path) -> Path:
    trial = tmp_path / "runs" / RUN / SCENE / "1"
    trial.mkdir(parents=True)
    (trial / "agent.log").write_text(HOSTILE_LOG)
    (trial / "checks.json").write_text(json.dumps({"verdict": "passed", "results": []}))
    (trial / "trace.jsonl").write_text(json.dumps({
        "seq": 1, "at": "2026-01-01T00:00:01Z", "actor": "agent", "tool": "slack", "method": "POST",
        "path": "/api/chat.postMessage", "status": 200, "request": {"text": "<script>alert(1)</script>"},
        "response": {"ok": True}}) + "\n")
    return tmp_path / "runs"


def _directives(policy: str) -> dict[str, list[str]]:
    return {name: values for name, *values in (part.split() for part in policy.split(";") if part.strip())}


def _paths() -> list[str]:
    trial = f"/runs/{RUN}/{quote(SCENE, safe='')}/1"
    return ["/", f"/runs/{RUN}", f"/scenes/{quote(SCENE, safe='')}", trial, trial + "/calls/1", trial + "/diff",
            trial + "/diff?fragment=1", trial + "/state", trial + "/agent.log", "/static/console.css",
            "/static/console.js", "/runs/nope", "/runs/nope/s/1/agent.log", "/static/nope.css", "/runs/latest"]


def test_console__every_response_says_nosniff_and_carries_a_strict_policy(tmp_path: Path) -> None:
    client = TestClient(console_app(_runs(tmp_path)))
    for path in _paths():
        answer = client.get(path, follow_redirects=False)
        assert answer.status_code < 500, path
        assert answer.headers.get("x-content-type-options") == "nosniff", path
        policy = _directives(answer.headers.get("content-security-policy", ""))
        assert policy.get("default-src") == ["'none'"], (path, policy)
        assert policy.get("frame-ancestors") == ["'none'"] and policy.get("base-uri") == ["'none'"], path
        for directive in ("script-src", "style-src", "connect-src"):
            assert set(policy.get(directive, ["'self'"])) <= {"'self'"}, (path, directive, policy)
        assert not any("unsafe" in value or value == "*" for values in policy.values() for value in values), path


def test_console__behind_a_key_its_refusals_and_redirects_say_nosniff_too(tmp_path: Path) -> None:
    client = TestClient(console_app(_runs(tmp_path), page_key="s3cret"))
    for answer in (client.get("/"), client.get("/?key=s3cret", follow_redirects=False)):
        assert answer.status_code in (401, 303)
        assert answer.headers["x-content-type-options"] == "nosniff"
        assert "default-src 'none'" in answer.headers["content-security-policy"]


def test_agent_log__plain_text_with_a_safe_filename_and_a_policy_that_runs_nothing(tmp_path: Path) -> None:
    client = TestClient(console_app(_runs(tmp_path)))
    answer = client.get(f"/runs/{RUN}/{quote(SCENE, safe='')}/1/agent.log")
    assert answer.status_code == 200 and answer.text == HOSTILE_LOG
    assert answer.headers["content-type"] == "text/plain; charset=utf-8"
    assert answer.headers["x-content-type-options"] == "nosniff"
    disposition = answer.headers["content-disposition"]
    match = re.fullmatch(r'inline; filename="([A-Za-z0-9._-]+)"', disposition)
    assert match is not None, disposition
    assert match.group(1).endswith("-1-agent.log") and match.group(1).startswith("na_me")
    policy = _directives(answer.headers["content-security-policy"])
    assert policy["default-src"] == ["'none'"] and "sandbox" in policy
