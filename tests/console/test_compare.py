"""The compare page: two trials side by side, their checks, their calls aligned with the first
divergence marked, and their world diffs; the ways in from a scene and a trial; bad parameters."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from console_helpers import ConsoleServer, ExampleRuns
from lxml import html
from starlette.testclient import TestClient

from ancha.console import links
from ancha.console.app import console_app

# The Playwright page is typed loosely here, as in test_console_browser.py.
Page = Any
RUN_A = "20260101T000000Z-aaaaaa"
RUN_B = "20260102T000000Z-bbbbbb"


def _client(runs: Path) -> TestClient:
    return TestClient(console_app(runs))


def _get(client: TestClient, path: str, status: int = 200) -> Any:
    answer = client.get(path.removeprefix(links.PREFIX))
    assert answer.status_code == status, answer.text
    return html.fromstring(answer.text)


def _all(element: Any, tag: str, css_class: str) -> list[Any]:
    """The ``tag`` elements under ``element`` with the class ``css_class``."""
    return list(element.xpath(f'.//{tag}[contains(concat(" ", normalize-space(@class), " "), " {css_class} ")]'))


def _trial(runs: Path, run_id: str, verdict: str, calls: list[tuple[str, str, int]],
           checks: dict[str, str] | None = None, scene: str = "s", trial: str = "1") -> None:
    """A graded trial folder: ``calls`` as (method, path, status) by the agent to Slack."""
    folder = runs / run_id / scene / trial
    folder.mkdir(parents=True)
    results = [{"id": check, "required": True, "status": status, "passed": status == "passed",
                "expected": f"{check} holds", "actual": "it did not" if status == "failed" else None}
               for check, status in (checks or {}).items()]
    (folder / "checks.json").write_text(json.dumps({"scene": scene, "trial": int(trial), "verdict": verdict,
                                                    "status": "done", "reason": None, "results": results}))
    lines = [json.dumps({"seq": i, "at": f"2026-03-02T09:00:{i:02d}Z", "actor": "agent", "tool": "slack",
                         "method": method, "path": path, "query": {}, "status": status, "request": None,
                         "response": {"ok": status < 400}, "worked": status < 400, "coverage_gap": False})
             for i, (method, path, status) in enumerate(calls, start=1)]
    (folder / "trace.jsonl").write_text("".join(line + "\n" for line in lines))


def _compare(a: str, b: str) -> str:
    return links.compare_path(f"{a}/s/1", f"{b}/s/1")


LIST = ("POST", "/api/conversations.list", 200)
HISTORY = ("POST", "/api/conversations.history", 200)
POST = ("POST", "/api/chat.postMessage", 200)
REACT = ("POST", "/api/reactions.add", 200)


# --- checks, calls and worlds --------------------------------------------------------------


def test_compare__passed_and_failed_trial__marks_the_checks_that_came_out_differently(
        example_runs: ExampleRuns) -> None:
    page = _get(_client(example_runs.runs), links.compare_path(f"{example_runs.passing}/beta-exports/1",
                                                               f"{example_runs.failing}/beta-exports/1"))
    assert page.get_element_by_id("verdict-a").text_content() == "passed"
    assert page.get_element_by_id("verdict-b").text_content() == "failed"
    asked = page.get_element_by_id("check-asked_laura")
    assert "differs" in asked.classes
    assert asked.find_class("result-a")[0].text_content().strip() == "passed"
    assert "laura never revealed laura.workspace" in asked.find_class("result-b")[0].text_content()
    alike = page.get_element_by_id("check-no_root_cause_to_customer")  # the hasty agent said nothing wrong either
    assert "alike" in alike.classes and not alike.find_class("differs")
    # the checks that differ come first
    rows = _all(page, "table", "compare-checks")[0].xpath("./tbody/tr")
    assert [r.get("id") for r in rows][-1] == "check-no_root_cause_to_customer"


def test_compare__passed_and_failed_trial__shows_both_world_diffs_side_by_side(example_runs: ExampleRuns) -> None:
    page = _get(_client(example_runs.runs), links.compare_path(f"{example_runs.passing}/beta-exports/1",
                                                               f"{example_runs.failing}/beta-exports/1"))
    a, b = page.get_element_by_id("world-a"), page.get_element_by_id("world-b")
    for side in (a, b):
        assert "from seed to end" in side.text_content()
    # the careful agent wrote messages the hasty one never did: only in A
    assert any('"actor": "agent"' in row.text_content() and row.find_class("only")
               for row in _all(a, "tr", "added"))
    assert any("rotating_light" in row.text_content() for row in b.xpath(".//tr"))


def test_compare__marks_the_first_call_where_the_trials_diverge(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    _trial(runs, RUN_A, "passed", [LIST, HISTORY, POST, REACT])
    _trial(runs, RUN_B, "failed", [LIST, HISTORY, REACT])
    page = _get(_client(runs), _compare(RUN_A, RUN_B))
    rows = _all(page, "table", "aligned")[0].xpath("./tbody/tr")
    assert [r.get("class").split()[0] for r in rows] == ["same", "same", "only_a", "same"]
    divergence = page.get_element_by_id("divergence")
    assert divergence is rows[2] and "divergence" in divergence.classes
    assert _all(divergence, "td", "seq")[0].xpath("./a")[0].get("href") == f"/ui/runs/{RUN_A}/s/1?focus=3#call-3"
    assert "POST /api/chat.postMessage" in divergence.text_content()
    jump = page.get_element_by_id("to-divergence")
    assert jump.get("href") == "#divergence" and jump.text_content() == "row 3"


def test_compare__same_call_with_other_ids_matches_and_another_status_diverges(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    _trial(runs, RUN_A, "passed", [("GET", "/repos/acme/orders/issues/12", 200), ("GET", "/incidents/PE43XWK", 200),
                                   POST])
    _trial(runs, RUN_B, "failed", [("GET", "/repos/acme/orders/issues/7", 200), ("GET", "/incidents/PHK7P4M", 200),
                                   ("POST", "/api/chat.postMessage", 404)])
    page = _get(_client(runs), _compare(RUN_A, RUN_B))
    rows = _all(page, "table", "aligned")[0].xpath("./tbody/tr")
    assert [r.get("class").split()[0] for r in rows] == ["same", "same", "answered"]
    assert page.get_element_by_id("divergence") is rows[2]
    assert _all(rows[2], "td", "status")[1].text_content() == "404"


def test_compare__identical_calls_say_there_is_no_divergence(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    _trial(runs, RUN_A, "passed", [LIST, POST], {"posted": "passed"})
    _trial(runs, RUN_B, "passed", [LIST, POST], {"posted": "passed"})
    page = _get(_client(runs), _compare(RUN_A, RUN_B))
    assert "made the same calls" in page.get_element_by_id("no-divergence").text_content()
    assert not page.xpath("//*[@id='divergence']")
    assert "alike" in page.get_element_by_id("check-posted").classes


def test_compare__a_trial_without_world_json_says_why_it_has_no_diff(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    _trial(runs, RUN_A, "passed", [LIST])
    _trial(runs, RUN_B, "failed", [LIST])
    page = _get(_client(runs), _compare(RUN_A, RUN_B))
    for side in ("world-a", "world-b"):
        assert "this trial has no world.json" in page.get_element_by_id(side).text_content()


# --- ways in ---------------------------------------------------------------------------------


def test_compare__scene_page_leads_to_a_passed_and_a_failed_trial(example_runs: ExampleRuns) -> None:
    client = _client(example_runs.runs)
    scene = _get(client, links.scene_path("beta-exports"))
    link = scene.get_element_by_id("compare-passed-failed").get("href")
    answer = client.get(link.removeprefix(links.PREFIX), follow_redirects=False)
    assert answer.status_code == 303
    assert answer.headers["location"] == links.compare_path(f"{example_runs.passing}/beta-exports/1",
                                                             f"{example_runs.failing}/beta-exports/1")


def test_compare__trial_page_offers_the_same_trial_in_the_previous_run(example_runs: ExampleRuns) -> None:
    client = _client(example_runs.runs)
    trial = _get(client, links.trial_path(example_runs.failing, "beta-exports", 1))
    choices = _get(client, trial.get_element_by_id("compare-link").get("href"))
    previous = _all(choices, "tr", "previous-run")
    assert len(previous) == 1 and example_runs.passing in previous[0].text_content()
    assert _all(previous[0], "a", "compare-choice")[0].get("href") == links.compare_path(
        f"{example_runs.passing}/beta-exports/1", f"{example_runs.failing}/beta-exports/1")


def test_compare__trial_page_offers_the_scene_s_other_trials_of_its_run(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    for trial, verdict in (("1", "passed"), ("2", "failed"), ("3", "passed")):
        _trial(runs, RUN_A, verdict, [LIST], trial=trial)
    choices = _get(_client(runs), links.compare_path(f"{RUN_A}/s/2"))
    rows = _all(choices, "tr", "this-run")
    assert [_all(r, "span", "badge")[0].text_content() for r in rows] == ["passed", "passed"]
    assert _all(rows[0], "a", "compare-choice")[0].get("href") == links.compare_path(f"{RUN_A}/s/2", f"{RUN_A}/s/1")


# --- bad parameters --------------------------------------------------------------------------


@pytest.mark.parametrize(("query", "status", "says"), [
    ("", 400, "needs ?a=RUN/SCENE/TRIAL"),
    ("?a=", 400, "needs ?a=RUN/SCENE/TRIAL"),
    ("?a=just-a-run", 400, "write it as RUN/SCENE/TRIAL"),
    ("?a=..%2F..%2Fetc%2F1", 400, "does not name a trial"),
    (f"?a={RUN_A}/s/1&b={RUN_B}/s/1/extra", 400, "?b="),
    (f"?a={RUN_A}/s%00/1&b={RUN_B}/s/1", 400, "does not name a trial"),
    (f"?a={RUN_A}/s/1&b={RUN_A}/s/1", 400, "pick another trial"),
    (f"?a=latest/s/1&b={RUN_A}/s/1", 400, "pick another trial"),  # latest is RUN_A here
    (f"?a={RUN_A}/s/9&b={RUN_B}/s/1", 404, f"no trial {RUN_A}/s/9"),
    (f"?a={RUN_A}/s/1&b=20990101T000000Z-cccccc/s/1", 404, "20990101T000000Z-cccccc/s/1"),
    (f"?a={RUN_A}/nope/1", 404, f"no trial {RUN_A}/nope/1"),
    ("?scene=nope", 404, "ran the scene 'nope'"),
    ("?scene=s", 404, "no failed trial with a passed one"),
])
def test_compare__bad_parameters_get_a_page_that_says_why(tmp_path: Path, query: str, status: int,
                                                          says: str) -> None:
    runs = tmp_path / "runs"
    _trial(runs, RUN_A, "passed", [LIST])
    _trial(runs, RUN_B, "passed", [LIST])
    (runs / "latest").symlink_to(RUN_A, target_is_directory=True)
    answer = _client(runs).get("/compare" + query)
    assert answer.status_code == status
    assert says in html.fromstring(answer.text).get_element_by_id("problem").text_content()


# --- in a browser ------------------------------------------------------------------------------


def test_compare__in_chromium_the_divergence_link_scrolls_the_row_into_view(
        console: ConsoleServer, example_runs: ExampleRuns, page: Page) -> None:
    refused: list[str] = []
    page.on("console", lambda m: refused.append(m.text) if "Content Security Policy" in m.text else None)
    page.set_viewport_size({"width": 1440, "height": 600})
    page.goto(console.url + links.scene_path("beta-exports").removeprefix(links.PREFIX))
    page.locator("#compare-passed-failed").click()
    page.wait_for_url(lambda url: "/ui/compare?a=" in url)
    assert page.locator("#verdict-a").inner_text() == "passed"
    assert page.locator("#verdict-b").inner_text() == "failed"
    divergence = page.locator("#divergence")
    assert not _in_view(page, "#divergence")  # below the fold: the checks come first
    page.locator("#to-divergence").click()
    page.wait_for_function("() => location.hash === '#divergence'")
    page.wait_for_function("""() => { const r = document.querySelector('#divergence').getBoundingClientRect();
                                      return r.top >= 0 && r.bottom <= window.innerHeight; }""")
    assert page.evaluate("() => window.scrollY") > 0
    assert "diverges" in divergence.inner_text()
    # compare.css is the page's own and applies: the divergent row is framed
    assert page.evaluate("() => getComputedStyle(document.querySelector('#divergence td')).borderTopWidth") == "2px"
    # opened afresh at the anchor, the browser lands on it too
    at_anchor = page.url
    page.goto("about:blank")
    page.goto(at_anchor)
    page.wait_for_function("() => window.scrollY > 0")
    assert _in_view(page, "#divergence")
    assert refused == []


def _in_view(page: Page, selector: str) -> bool:
    return bool(page.evaluate(f"""() => {{ const r = document.querySelector('{selector}').getBoundingClientRect();
                                          return r.top >= 0 && r.bottom <= window.innerHeight; }}"""))
