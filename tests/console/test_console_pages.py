"""Console pages under bad or partial input: never a 500, always a page that says why."""

from __future__ import annotations

import json
from pathlib import Path

from starlette.testclient import TestClient

from ancha.console.app import console_app


def _run(tmp_path: Path) -> Path:
    trial = tmp_path / "runs" / "20260101T000000Z-aaaaaa" / "s" / "1"
    trial.mkdir(parents=True)
    return trial


def test_console__paths_outside_the_runs_folder_are_not_found(tmp_path: Path) -> None:
    _run(tmp_path)
    (tmp_path / "secret").mkdir()
    client = TestClient(console_app(tmp_path / "runs"))
    for path in ("/runs/..%2F..%2Fsecret", "/runs/../s/1", "/runs/20260101T000000Z-aaaaaa/..%2F..%2F/1",
                 "/runs/20260101T000000Z-aaaaaa/s/%2E%2E", "/runs/nope/s/1/calls/1"):
        answer = client.get(path)
        assert answer.status_code == 404, path


def test_console__unreadable_trial_files_give_a_page_not_an_error(tmp_path: Path) -> None:
    trial = _run(tmp_path)
    (trial / "checks.json").write_text("{not json")
    (trial / "trace.jsonl").write_text('{"seq": 1, "at": "2026-01-01T00:00:00Z", "actor": "agent"}\nnot json\n')
    (trial / "records.jsonl").write_text("[]\n{\n")
    (trial / "world.json").write_text("[1, 2")
    client = TestClient(console_app(tmp_path / "runs"))
    page = client.get("/runs/20260101T000000Z-aaaaaa/s/1")
    assert page.status_code == 200
    assert "unreadable" in page.text and "checks.json could not be read" in page.text
    assert client.get("/runs/20260101T000000Z-aaaaaa/s/1/calls/2").status_code == 404
    diff = client.get("/runs/20260101T000000Z-aaaaaa/s/1/diff?fragment=1")
    assert diff.status_code == 200 and "No diff:" in diff.text
    assert client.get("/").status_code == 200
    assert client.get("/scenes/s").status_code == 200


def test_console__diff_says_when_the_scene_file_changed_since_the_run(tmp_path: Path) -> None:
    trial = _run(tmp_path)
    scene = tmp_path / "scene.yaml"
    scene.write_text("name: s\ntask: t\nworld: {slack: {channels: [{ref: c, name: general}]}}\n"
                     "checks: [{id: x, trace: {called: 'POST /api/chat.postMessage'}}]\n")
    (trial / "world.json").write_text("{}")
    (trial / "checks.json").write_text(json.dumps({"verdict": "failed", "results": []}))
    (trial.parent.parent / "summary.json").write_text(json.dumps(
        {"scenes": [{"scene": "s", "path": str(scene), "source_hash": "not-the-hash", "trial_results": []}]}))
    client = TestClient(console_app(tmp_path / "runs"))
    diff = client.get("/runs/20260101T000000Z-aaaaaa/s/1/diff?fragment=1")
    assert diff.status_code == 200
    assert "changed since this run, so its seed cannot be rebuilt" in diff.text


def test_console__behind_a_key_needs_it_once_then_keeps_it_in_a_cookie(tmp_path: Path) -> None:
    _run(tmp_path)
    client = TestClient(console_app(tmp_path / "runs", page_key="s3cret"))
    refused = client.get("/")
    assert refused.status_code == 401 and "/ui/?key=KEY" in refused.text
    assert client.get("/?key=wrong").status_code == 401
    kept = client.get("/runs/latest?key=s3cret", follow_redirects=False)
    assert kept.status_code == 303 and "key=" not in kept.headers["location"]
    assert client.get("/").status_code == 200  # the cookie now carries it
    assert TestClient(console_app(tmp_path / "runs", page_key="s3cret")).get(
        "/", headers={"authorization": "Bearer s3cret"}).status_code == 200
