"""The console's pages in a real browser (headless Chromium) under their Content-Security-Policy:
every page, fragment and raw file loads with no policy violation and no script error, and
the timeline's marks and the pass-rate bars are still drawn where they belong."""

from __future__ import annotations

from typing import Any

from console_helpers import ConsoleServer, ExampleRuns

Page = Any

WATCH_VIOLATIONS = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__violations.push(`${e.violatedDirective} ${e.blockedURI} ${e.sample || ""}`);
});
"""


def _visit(page: Page, url: str, errors: list[str]) -> None:
    answer = page.goto(url)
    assert answer is not None and answer.status < 500, url
    assert "default-src 'none'" in (answer.headers.get("content-security-policy") or ""), url
    assert answer.headers.get("x-content-type-options") == "nosniff", url
    page.wait_for_load_state("networkidle")
    assert page.evaluate("window.__violations") == [], url
    assert errors == [], (url, errors)


def test_console_pages__load_under_their_policy_with_no_violation_or_error(
        console: ConsoleServer, example_runs: ExampleRuns, page: Page) -> None:
    errors: list[str] = []
    def on_console(message: Any) -> None:
        # the browser asks the server's root for /favicon.ico by itself: not a page's doing
        if message.type == "error" and not message.location.get("url", "").endswith("/favicon.ico"):
            errors.append(message.text)

    page.on("console", on_console)
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.add_init_script(WATCH_VIOLATIONS)
    passing, failing = example_runs.passing, example_runs.failing
    for path in ("/", f"/runs/{passing}", f"/runs/{failing}", "/scenes/beta-exports",
                 f"/runs/{passing}/orders-latency/1", f"/runs/{passing}/beta-exports/1/diff",
                 f"/runs/{passing}/beta-exports/1/agent.log", "/static/console.css"):
        _visit(page, console.url + path, errors)

    # a trial: its diff fragment and a call's bodies load by script, under the same policy
    _visit(page, f"{console.url}/runs/{passing}/beta-exports/1", errors)
    page.locator("#world-diff .diff").wait_for()
    first = page.locator("#call-rows tr").first
    first.locator("summary").click()
    first.locator(".call-body pre").first.wait_for()
    _visit(page, f"{console.url}/runs/{failing}/beta-exports/1?focus=3#call-3", errors)
    assert page.evaluate("window.__violations") == [] and errors == []


def test_console_timeline__marks_spans_and_bars_are_placed_without_inline_styles(
        console: ConsoleServer, example_runs: ExampleRuns, page: Page) -> None:
    page.goto(f"{console.url}/runs/{example_runs.passing}/orders-latency/1")
    page.wait_for_load_state("networkidle")
    assert page.locator("[style]").count() == page.locator("[style][data-left], [style][data-height]").count()
    lefts = page.eval_on_selector_all(".lane .mark[data-left]", "els => els.map(e => e.style.left)")
    assert len(lefts) > 3 and len(set(lefts)) > 1 and all(left.endswith("%") for left in lefts)
    widths = page.eval_on_selector_all(".span.fault", "els => els.map(e => e.getBoundingClientRect().width)")
    assert widths and all(width > 1 for width in widths)
    ticks = page.eval_on_selector_all(".axis span", "els => els.map(e => e.style.left)")
    assert len(set(ticks)) == len(ticks) > 1
    page.goto(f"{console.url}/scenes/beta-exports")
    page.wait_for_load_state("networkidle")
    heights = page.eval_on_selector_all(".bars .bar span", "els => els.map(e => e.style.height)")
    assert "100%" in heights and "0%" in heights
