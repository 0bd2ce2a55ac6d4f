"""A trial's page opens on its verdict: why it failed in one line, failed checks first with the
passed ones folded, filters by failed, tool and person, and the world's own calls kept out of
the agent's Calls table until asked. Also the scene page's bars, milestone tooltips and the
favicon. Real runs of the bundled examples in headless Chromium, and hand-made trials."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx
from console_helpers import ConsoleServer, ExampleRuns
from starlette.testclient import TestClient

from ancha.console.app import console_app

Page = Any

RUN = "20260101T000000Z-aaaaaa"


def _check(id: str, status: str, required: bool = True, evidence: list[int] | None = None) -> dict[str, Any]:
    return {"id": id, "required": required, "passed": status == "passed", "status": status,
            "expected": f"{id} expected", "actual": f"{id} found", "explanation": "", "evidence": evidence or []}


def _trial(tmp_path: Path, results: list[dict[str, Any]], calls: list[tuple[str, str, str]]) -> TestClient:
    """A graded trial of scene ``s`` whose trace holds ``calls`` as (actor, tool, path)."""
    trial = tmp_path / "runs" / RUN / "s" / "1"
    trial.mkdir(parents=True)
    (trial / "checks.json").write_text(json.dumps({"verdict": "failed", "status": "done", "results": results}))
    (trial / "trace.jsonl").write_text("".join(
        json.dumps({"seq": i, "at": f"2026-01-01T00:00:0{i}Z", "actor": actor, "tool": tool, "method": "POST",
                    "path": path, "status": 200, "worked": True}) + "\n"
        for i, (actor, tool, path) in enumerate(calls, start=1)))
    return TestClient(console_app(tmp_path / "runs"))


def test_trial_page__verdict_names_the_first_failed_required_check(tmp_path: Path) -> None:
    client = _trial(tmp_path, [_check("optional_one", "failed", required=False), _check("ok_one", "passed"),
                               _check("first_required", "failed"), _check("second_required", "failed")], [])
    page = client.get(f"/runs/{RUN}/s/1").text
    line = re.search(r'<p class="verdict-line" id="verdict-line">(.*?)</p>', page, re.S)
    assert line is not None
    text = re.sub(r"<[^>]+>", "", line.group(1))
    assert text == "Failed on first_required: expected first_required expected; found first_required found"
    assert page.index('id="verdict-line"') < page.index('id="status-line"')  # right under the title
    order = re.findall(r'<article class="check[^"]*" id="check-(\w+)"', page)
    assert order == ["optional_one", "first_required", "second_required", "ok_one"]
    folded = page[page.index('<details class="passed-checks"'):]
    assert 'id="check-ok_one"' in folded and "1 passed check<" in folded
    assert not re.search(r'<details class="passed-checks"[^>]* open', page)


def test_trial_page__a_passed_trial_has_no_verdict_line_and_its_checks_unfolded(tmp_path: Path) -> None:
    trial = tmp_path / "runs" / RUN / "s" / "1"
    client = _trial(tmp_path, [_check("a", "passed"), _check("b", "passed")], [])
    (trial / "checks.json").write_text(json.dumps({"verdict": "passed", "results": [_check("a", "passed")]}))
    page = client.get(f"/runs/{RUN}/s/1").text
    assert 'id="verdict-line"' not in page
    assert re.search(r'<details class="passed-checks"[^>]* open', page)


def test_trial_page__marks_the_worlds_own_calls_and_says_how_many(tmp_path: Path) -> None:
    client = _trial(tmp_path, [_check("x", "failed", evidence=[2])],
                    [("world", "datadog", "/ancha/metric/x/hold/f"), ("agent", "datadog", "/api/v1/monitor"),
                     ("person:laura", "slack", "/api/chat.postMessage")])
    page = client.get(f"/runs/{RUN}/s/1").text
    rows = dict(re.findall(r'<tr id="call-(\d)" class="([^"]*)"', page))
    assert "world" in rows["1"].split() and "world" not in rows["2"].split() and "world" not in rows["3"].split()
    assert "show the world's 1 call<" in page
    assert 'id="check-x"' in page and 'data-tools="datadog"' in page  # the check's tool, from its evidence


def test_trial_page__opens_on_why_it_failed(console: ConsoleServer, example_runs: ExampleRuns, page: Page) -> None:
    checks = json.loads((example_runs.runs / example_runs.failing / "beta-exports" / "1" / "checks.json").read_text())
    first = next(r for r in checks["results"] if r["required"] and r["status"] == "failed")
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(f"{console.url}/runs/{example_runs.failing}/beta-exports/1")
    line = page.locator("#verdict-line")
    assert line.is_visible()
    assert line.locator("strong").inner_text() == first["id"]
    assert line.locator(".expected").inner_text() == first["expected"]
    assert line.locator(".found").inner_text() == first["actual"]
    box = line.bounding_box()
    assert box is not None and box["y"] + box["height"] < 900  # above the fold
    failed = [r["id"] for r in checks["results"] if r["status"] != "passed"]
    shown = page.locator("#checks article.check:visible").evaluate_all("els => els.map(e => e.id.slice(6))")
    assert shown == failed  # the failed checks, in scene order; the passed one is folded
    passed = page.locator("#passed-checks")
    assert passed.locator("summary").inner_text() == "1 passed check"
    assert not page.locator("#check-no_root_cause_to_customer").is_visible()
    passed.locator("summary").click()
    assert page.locator("#check-no_root_cause_to_customer").is_visible()


def test_trial_page__filters_checks_and_calls_by_person_and_failed(console: ConsoleServer, example_runs: ExampleRuns,
                                                                   page: Page) -> None:
    page.goto(f"{console.url}/runs/{example_runs.passing}/beta-exports/1")
    every_check = page.locator("#checks article.check:visible").count()
    assert every_check == 8
    page.select_option("#filter-person", "mike")
    checks = page.locator("#checks article.check:visible").evaluate_all("els => els.map(e => e.id.slice(6))")
    assert checks == ["priority_decided", "priority_before_label"]  # the checks that name mike
    actors = page.locator("#call-rows tr:visible td:nth-child(3)").all_inner_texts()
    assert actors and set(actors) == {"person:mike"}
    assert page.locator("#filter-count").inner_text() == "2 of 8 checks shown"
    page.select_option("#filter-person", "")
    assert page.locator("#checks article.check:visible").count() == every_check
    page.check("#filter-failed")  # a passed trial: nothing failed
    assert page.locator("#checks article.check:visible").count() == 0
    assert page.locator("#call-rows tr:visible").count() == 0
    page.uncheck("#filter-failed")
    assert page.locator("#call-rows tr:visible").count() == page.locator("#call-rows tr").count()

    page.goto(f"{console.url}/runs/{example_runs.failing}/beta-exports/1")
    page.check("#filter-failed")
    assert page.locator("#check-asked_laura").is_visible()
    assert not page.locator("#passed-checks").is_visible()


def test_trial_page__filters_checks_and_calls_by_tool(console: ConsoleServer, example_runs: ExampleRuns,
                                                      page: Page) -> None:
    page.goto(f"{console.url}/runs/{example_runs.passing}/orders-latency/1")
    tools = page.locator("#filter-tool option").evaluate_all("els => els.map(e => e.value)")
    assert tools == ["", "datadog", "github", "pagerduty", "slack"]
    page.select_option("#filter-tool", "datadog")
    checks = page.locator("#checks article.check:visible").evaluate_all("els => els.map(e => e.id.slice(6))")
    assert checks == ["monitor_ok", "muted_only_briefly"]  # state checks on datadog.monitor and datadog.downtime
    called = page.locator("#call-rows tr:visible td:nth-child(4)").all_inner_texts()
    assert called and set(called) == {"datadog"}


def test_calls_table__hides_the_worlds_calls_until_asked(console: ConsoleServer, example_runs: ExampleRuns,
                                                         page: Page) -> None:
    trace = (example_runs.runs / example_runs.passing / "orders-latency" / "1" / "trace.jsonl").read_text()
    world = [json.loads(line)["seq"] for line in trace.splitlines() if json.loads(line)["actor"] == "world"]
    assert world  # the fault moves Datadog's metrics through /ancha/... and PagerDuty opens an incident
    page.goto(f"{console.url}/runs/{example_runs.passing}/orders-latency/1")
    actors = page.locator("#call-rows tr:visible td:nth-child(3)").all_inner_texts()
    assert actors and "world" not in actors
    assert not any("/ancha/" in t for t in page.locator("#call-rows tr:visible summary").all_inner_texts())
    toggle = page.locator("label.world-toggle")
    assert toggle.inner_text().strip() == f"show the world's {len(world)} calls"
    toggle.locator("input").check()
    for seq in world:
        assert page.locator(f"#call-{seq}").is_visible()
    toggle.locator("input").uncheck()
    assert not page.locator(f"#call-{world[0]}").is_visible()
    # an evidence link to one of the world's calls shows it
    page.goto(f"{console.url}/runs/{example_runs.passing}/orders-latency/1?focus={world[0]}")
    assert page.locator(f"#call-{world[0]}").is_visible()


def test_timeline__milestone_tooltips_read_as_text(console: ConsoleServer, example_runs: ExampleRuns,
                                                   page: Page) -> None:
    page.goto(f"{console.url}/runs/{example_runs.passing}/beta-exports/1")
    titles = page.locator(".lane[data-lane='milestones'] .mark").evaluate_all("els => els.map(e => e.title)")
    assert any(t.endswith("first held: decided mike severity p1") for t in titles)
    assert any(t.endswith("first held: called POST /api/reactions.add") for t in titles)
    assert not [t for t in titles if re.search(r"[{}\[\]']", t)]  # no dict or list repr


def test_scene_page__a_zero_percent_run_is_a_visible_bar(console: ConsoleServer, example_runs: ExampleRuns,
                                                         page: Page) -> None:
    page.goto(f"{console.url}/scenes/beta-exports")
    bar = page.locator(f".bars a.bar[href$='{example_runs.failing}']")
    assert "0%" in (bar.get_attribute("title") or "")
    failed = bar.locator(".failed-part").bounding_box()
    whole = bar.bounding_box()
    assert failed is not None and whole is not None
    assert failed["width"] > 0 and failed["height"] == whole["height"]  # a full bar in the failed colour
    colour = bar.locator(".failed-part").evaluate("e => getComputedStyle(e).backgroundColor")
    assert colour == "rgb(217, 63, 63)"


def test_console__serves_a_favicon(console: ConsoleServer, example_runs: ExampleRuns, page: Page) -> None:
    missing: list[str] = []
    page.on("response", lambda r: missing.append(r.url) if r.status == 404 else None)
    page.goto(f"{console.url}/runs/{example_runs.failing}/beta-exports/1")
    page.wait_for_load_state("networkidle")
    href = page.locator("link[rel=icon]").get_attribute("href")
    assert href
    icon = httpx.get(console.url.removesuffix("/ui") + href, timeout=10)
    assert icon.status_code == 200 and icon.headers["content-type"].startswith("image/svg+xml")
    assert missing == []
