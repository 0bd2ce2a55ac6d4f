"""A trial whose agent calls an operation the replica does not implement (a coverage gap,
answered 501) says so wherever a user looks: checks.json, summary.json, JUnit, `ancha
explain`, the run table and the console's trial page. With `--strict-coverage` such a trial
is invalid, not failed; without a gap nothing of this appears."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from ancha.console.app import console_app

SCENE = """
name: hello
task: Say hello in #general.
world:
  slack:
    users: [{ ref: slack_ana, name: ana }]
    channels: [{ ref: slack_general, name: general, members: [$slack_ana, $slack_bot] }]
checks:
  - id: posted
    trace: { called: "POST /api/chat.postMessage" }
"""

# apps.manifest.validate is in Slack's API and in the replica's coverage ledger as not served: 501.
AGENT = textwrap.dedent("""
    import json, os, sys, urllib.error, urllib.request
    base, token = os.environ["ANCHA_SLACK_URL"] + "/api/", os.environ["ANCHA_SLACK_TOKEN"]

    def call(method, body):
        req = urllib.request.Request(base + method, data=json.dumps(body).encode(), headers={
            "Authorization": "Bearer " + token, "Content-Type": "application/json"})
        try:
            return json.load(urllib.request.urlopen(req))
        except urllib.error.HTTPError as exc:
            return {"status": exc.code}

    if "--gap" in sys.argv:
        print(call("apps.manifest.validate", {"manifest": "{}"}))
        print(call("apps.manifest.validate", {"manifest": "{}"}))
    channel = call("conversations.list", {})["channels"][0]["id"]
    print(call("chat.postMessage", {"channel": channel, "text": "hello"})["ok"])
""")

GAP_LINE = "2 calls hit an unimplemented operation: POST /api/apps.manifest.validate (slack, 2 calls)"


@dataclass
class Ran:
    root: Path
    run: Path
    trial: Path
    done: subprocess.CompletedProcess[str]


def ancha(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ancha.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env=dict(os.environ))


def run(root: Path, agent_args: str, *options: str) -> Ran:
    (root / "scenes" / "hello").mkdir(parents=True)
    (root / "scenes" / "hello" / "scene.yaml").write_text(SCENE)
    (root / "agent.py").write_text(AGENT)
    (root / "ancha.yaml").write_text(f"agent:\n  command: {sys.executable} agent.py {agent_args}\ntrials: 1\n")
    done = ancha("run", "--no-progress", "--junit", "junit.xml", *options, cwd=root)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    run_dir = (root / ".ancha" / "runs" / "latest").resolve()
    return Ran(root, run_dir, run_dir / "hello" / "1", done)


@pytest.fixture(scope="module")
def gap_run(tmp_path_factory: pytest.TempPathFactory) -> Ran:
    return run(tmp_path_factory.mktemp("gap"), "--gap")


@pytest.fixture(scope="module")
def clean_run(tmp_path_factory: pytest.TempPathFactory) -> Ran:
    return run(tmp_path_factory.mktemp("clean"), "")


def test_coverage_gap__checks_json_counts_the_calls_and_names_the_operations(gap_run: Ran) -> None:
    checks = json.loads((gap_run.trial / "checks.json").read_text())
    assert checks["verdict"] == "passed"  # the gap is reported; without --strict-coverage it judges nothing
    assert checks["coverage_gaps"] == {
        "calls": 2, "operations": [{"tool": "slack", "method": "POST", "path": "/api/apps.manifest.validate",
                                    "calls": 2}]}


def test_coverage_gap__summary_json_has_it_per_trial_and_per_scene(gap_run: Ran) -> None:
    scene = json.loads((gap_run.run / "summary.json").read_text())["scenes"][0]
    operation = {"tool": "slack", "method": "POST", "path": "/api/apps.manifest.validate", "calls": 2}
    assert scene["coverage_gaps"] == {"calls": 2, "trials": 1, "operations": [operation]}
    assert scene["trial_results"][0]["coverage_gaps"] == {"calls": 2, "operations": [operation]}


def test_coverage_gap__junit_says_it_under_the_trials_folder(gap_run: Ran) -> None:
    case = ET.parse(gap_run.root / "junit.xml").getroot().find("testsuite/testcase")
    assert case is not None
    out = case.findtext("system-out") or ""
    assert out.splitlines() == [str(gap_run.trial), GAP_LINE]


def test_coverage_gap__the_run_table_has_a_note_under_it(gap_run: Ran) -> None:
    assert f"coverage gap: hello (1 of 1 trial): {GAP_LINE}" in gap_run.done.stdout


def test_coverage_gap__explain_names_it_for_a_passed_trial(gap_run: Ran) -> None:
    explained = ancha("explain", cwd=gap_run.root)
    assert explained.returncode == 0, explained.stderr
    assert f"hello / trial 1: coverage: {GAP_LINE}" in explained.stdout


def test_coverage_gap__the_console_trial_page_has_a_line_under_the_status(gap_run: Ran) -> None:
    client = TestClient(console_app(gap_run.run.parent))
    page = client.get(f"/runs/{gap_run.run.name}/hello/1")
    assert page.status_code == 200
    status_at, gap_at = page.text.index('id="status-line"'), page.text.index('id="coverage-gaps"')
    assert status_at < gap_at
    assert f"coverage gap: {GAP_LINE}" in page.text


def test_strict_coverage__a_trial_with_a_gap_is_invalid_naming_the_operation(tmp_path: Path) -> None:
    ran = run(tmp_path, "--gap", "--strict-coverage", "--retry-invalid")
    assert ran.done.returncode == 1  # the gate: a scene with only invalid trials is not met
    checks = json.loads((ran.trial / "checks.json").read_text())
    assert checks["verdict"] == "invalid"
    assert checks["reason"].startswith(f"--strict-coverage: {GAP_LINE}")
    assert checks["coverage_gaps"]["calls"] == 2
    scene = json.loads((ran.run / "summary.json").read_text())["scenes"][0]
    assert (scene["invalid"], scene["failed"], scene["passed"], scene["gate_met"]) == (1, 0, 0, False)
    assert "retried" not in scene["trial_results"][0]  # a gap is not retried away
    error = ET.parse(tmp_path / "junit.xml").getroot().find("testsuite/testcase/error")
    assert error is not None and "POST /api/apps.manifest.validate" in error.get("message", "")
    explained = ancha("explain", cwd=tmp_path).stdout
    assert "hello / trial 1: invalid" in explained and f"  agent: --strict-coverage: {GAP_LINE}" in explained


def test_strict_coverage__a_trial_without_a_gap_is_judged_as_before(tmp_path: Path) -> None:
    ran = run(tmp_path, "", "--strict-coverage")
    assert ran.done.returncode == 0, ran.done.stdout
    assert json.loads((ran.trial / "checks.json").read_text())["verdict"] == "passed"


def test_no_coverage_gap__nothing_is_said(clean_run: Ran) -> None:
    assert "coverage_gaps" not in json.loads((clean_run.trial / "checks.json").read_text())
    summary = (clean_run.run / "summary.json").read_text()
    assert "coverage_gaps" not in summary
    assert "coverage" not in clean_run.done.stdout
    out = ET.parse(clean_run.root / "junit.xml").getroot().findtext("testsuite/testcase/system-out")
    assert out == str(clean_run.trial)
    page = TestClient(console_app(clean_run.run.parent)).get(f"/runs/{clean_run.run.name}/hello/1")
    assert page.status_code == 200 and 'id="coverage-gaps"' not in page.text
