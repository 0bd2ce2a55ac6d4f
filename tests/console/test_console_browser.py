"""The console in a real browser (headless Chromium), over real runs of the bundled examples."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

from console_helpers import ConsoleServer, ExampleRuns, start_console, stop_console, tool_env

# The Playwright page is typed loosely here: its sync API has no stubs worth pinning in tests.
Page = Any


def test_console__lists_runs_with_pass_rate_and_links_each_trial(console: ConsoleServer, example_runs: ExampleRuns,
                                                                 page: Page) -> None:
    page.goto(console.url + "/")
    passing = page.locator("section.run", has=page.locator(f"a:text-is('{example_runs.passing}')"))
    assert passing.locator("tbody tr").count() == 6  # the six bundled scenes
    row = passing.locator("tr", has=page.locator("a:text-is('beta-exports')"))
    assert "100%" in row.inner_text()
    failing = page.locator("section.run", has=page.locator(f"a:text-is('{example_runs.failing}')"))
    assert "0%" in failing.locator("tr", has=page.locator("a:text-is('beta-exports')")).inner_text()
    failing.locator("a.dot.failed").click()
    page.wait_for_url(re.compile(rf"/ui/runs/{example_runs.failing}/beta-exports/1$"))
    assert page.locator("#verdict").inner_text() == "failed"


def test_console__failed_check_links_to_its_evidence(console: ConsoleServer, example_runs: ExampleRuns,
                                                     page: Page) -> None:
    page.goto(f"{console.url}/runs/{example_runs.failing}/beta-exports/1")
    check = page.locator("#check-priority_before_label")
    assert "failed" in check.get_attribute("class")
    assert "never happened" in check.inner_text()
    evidence = check.locator("a.evidence-link")
    assert "POST /api/reactions.add" in evidence.inner_text()
    evidence.click()
    page.wait_for_url(re.compile(r"\?focus=\d+#call-\d+$"))
    seq = re.search(r"focus=(\d+)", page.url).group(1)  # type: ignore[union-attr]
    row = page.locator(f"#call-{seq}")
    assert "focus" in row.get_attribute("class")
    assert row.locator("details").get_attribute("open") is not None
    body = row.locator(".call-body").inner_text()
    assert '"name": "rotating_light"' in body  # the request the check points at, with its body
    assert page.locator(f".lane a.mark.focus[data-seq='{seq}']").count() == 1  # and its mark on the timeline


def test_console__people_example_shows_timeline_and_world_diff(console: ConsoleServer, example_runs: ExampleRuns,
                                                               page: Page) -> None:
    page.goto(f"{console.url}/runs/{example_runs.passing}/beta-exports/1")
    assert page.locator("#verdict").inner_text() == "passed"
    lanes = page.locator(".lane .lane-title").all_inner_texts()
    assert "agent → slack" in lanes
    assert {"laura", "ben", "mike"} <= set(lanes)  # the people, each in a lane
    assert "milestones (first held)" in lanes
    laura = page.locator(".lane[data-lane='person:laura'] .mark")
    assert any("revealed laura.workspace" in (laura.nth(i).get_attribute("title") or "")
               for i in range(laura.count()))
    mike = page.locator(".lane[data-lane='person:mike'] .mark.decision")
    assert "decided severity: p1" in (mike.first.get_attribute("title") or "")
    # the world diff is rebuilt from the scene: the agent's and people's messages were added
    diff = page.locator("#world-diff .diff")
    diff.wait_for()
    assert "changes from seed to end" in diff.inner_text()
    assert diff.locator("tr.added code", has_text='"actor": "agent"').count() >= 1
    # a call opens with its bodies
    first = page.locator("#call-rows tr").first
    first.locator("summary").click()
    first.locator(".call-body pre").first.wait_for()
    assert "auth.test" in first.inner_text()


def test_console__incident_example_shows_faults_and_tool_state(console: ConsoleServer, example_runs: ExampleRuns,
                                                               page: Page) -> None:
    page.goto(f"{console.url}/runs/{example_runs.passing}/orders-latency/1")
    lanes = page.locator(".lane .lane-title").all_inner_texts()
    assert {"faults", "pagerduty state", "datadog state"} <= set(lanes)
    fault = page.locator(".lane[data-lane='faults'] .span.fault")
    assert "orders_latency" in (fault.first.get_attribute("title") or "")
    incident = page.locator(".lane[data-lane='state:pagerduty'] .mark")
    titles = [incident.nth(i).get_attribute("title") or "" for i in range(incident.count())]
    assert any("triggered" in t for t in titles) and any("resolved" in t for t in titles)


LIVE_SCENE = """
name: live
task: Say hello in #general, twice.
clock: { limit: 2h, speed: 1 }
world:
  slack:
    users: [{ ref: slack_ana, name: ana }]
    channels: [{ ref: slack_general, name: general, members: [$slack_ana, $slack_bot] }]
checks:
  - id: posted
    trace: { called: "POST /api/chat.postMessage" }
"""

LIVE_AGENT = textwrap.dedent("""
    import os, sys, time
    from pathlib import Path
    from slack_sdk import WebClient
    client = WebClient(token=os.environ["ANCHA_SLACK_TOKEN"], base_url=os.environ["ANCHA_SLACK_URL"] + "/api/")
    channel = client.conversations_list()["channels"][0]["id"]
    client.chat_postMessage(channel=channel, text="first hello")
    go = Path(sys.argv[1])
    deadline = time.monotonic() + 120
    while not go.exists() and time.monotonic() < deadline:
        time.sleep(0.05)  # the test says when to go on
    client.chat_postMessage(channel=channel, text="second hello")
""")


def test_console__running_trial_updates_live(tmp_path: Path, page: Page) -> None:
    (tmp_path / "scenes" / "live").mkdir(parents=True)
    (tmp_path / "scenes" / "live" / "scene.yaml").write_text(LIVE_SCENE)
    (tmp_path / "agent.py").write_text(LIVE_AGENT)
    go = tmp_path / "go"
    (tmp_path / "ancha.yaml").write_text(f"agent:\n  command: {sys.executable} agent.py {go}\ntrials: 1\n")
    runs = tmp_path / ".ancha" / "runs"
    run = subprocess.Popen([sys.executable, "-m", "ancha.cli", "run", "--no-progress"], cwd=tmp_path,
                           env=tool_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    console = start_console(runs)
    try:
        live = _wait_for(lambda: next(iter(runs.glob("*/live/1/live.json")), None), "the trial to start")
        run_id = live.resolve().parent.parent.parent.name
        refused: list[str] = []  # what the page's Content-Security-Policy blocked, across its reload
        page.on("console", lambda m: refused.append(m.text) if "Content Security Policy" in m.text else None)
        page.goto(f"{console.url}/runs/{run_id}/live/1")
        assert page.locator("#verdict").inner_text() == "running"
        rows = page.locator("#call-rows tr")
        rows.filter(has_text="chat.postMessage").first.wait_for()
        assert rows.filter(has_text="chat.postMessage").count() == 1  # the first hello, as it happened
        assert page.locator(".lane[data-lane='tool:slack'] .mark").count() >= 2
        go.write_text("go")
        # the second hello arrives live, then the trial ends and the page shows its grade
        # a function, not an expression: a string expression is eval()ed in the page, which its policy refuses
        page.wait_for_function("() => document.querySelector('#verdict').textContent === 'passed'", timeout=60_000)
        assert page.locator("#call-rows tr").filter(has_text="chat.postMessage").count() == 2
        assert page.locator("#check-posted .tag").inner_text() == "passed"
        assert refused == []
        assert run.wait(60) == 0
    finally:
        go.write_text("go")
        if run.poll() is None:
            run.kill()
        stop_console(console)


def _wait_for(probe: Any, what: str, timeout: float = 60) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = probe()
        if found:
            return found
        time.sleep(0.05)  # polling the file system under a deadline
    raise AssertionError(f"timed out waiting for {what}")
