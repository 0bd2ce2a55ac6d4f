"""The timeline fits where things happen: idle stretches become breaks, ticks read in sensible
units at every span and zoom, and one colour means one thing in every lane and the legend."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from console_helpers import ConsoleServer, ExampleRuns

from ancha.console.timeline import COLOURS, build_timeline
from ancha.console.timeline_axis import fit_axis, idle_gaps, tick_label, tick_step
from ancha.console.trial_data import Call, TrialData
from ancha.results.run_folder import TrialFolder

Page = Any

MINUTE, HOUR, DAY = 60.0, 3600.0, 86400.0


# --- ticks -----------------------------------------------------------------------------------

@pytest.mark.parametrize(("seconds", "step"), [
    (0.004, 0.001), (0.05, 0.01), (0.9, 0.2), (3, 0.5), (47, 10), (10 * MINUTE, 2 * MINUTE),
    (HOUR + 4 * MINUTE, 10 * MINUTE), (DAY, 6 * HOUR), (9 * DAY, 2 * DAY), (400 * DAY, 50 * DAY),
])
def test_tick_step__is_the_smallest_round_step_that_fits_eight_ticks(seconds: float, step: float) -> None:
    assert tick_step(seconds, 8) == pytest.approx(step)


@pytest.mark.parametrize(("offset", "step", "label"), [
    (0.0, 1, "+0s"), (45, 5, "+45s"), (80, 20, "+1m20s"), (3630, 10, "+1h0m30s"), (0, 600, "+0m"),
    (3600, 600, "+1h"), (4200, 600, "+1h10m"), (2 * DAY + 6 * HOUR, 6 * HOUR, "+2d6h"), (3 * DAY, DAY, "+3d"),
    (1.25, 0.05, "+1.25s"), (65.2, 0.2, "+1m5.2s"), (3725.5, 0.5, "+1h2m5.5s"), (3725, 0.5, "+1h2m5.0s"),
])
def test_tick_label__says_the_offset_down_to_the_steps_unit(offset: float, step: float, label: str) -> None:
    assert tick_label(offset, step) == label


def test_tick_label__in_milliseconds_when_the_view_is_under_a_second() -> None:
    assert [tick_label(k * 0.001, 0.001, in_ms=True) for k in range(4)] == ["+0ms", "+1ms", "+2ms", "+3ms"]


@pytest.mark.parametrize(("span", "unit"), [
    (0.006, r"\d+ms"), (0.04, r"\d+ms"), (2.5, r"\d+\.\ds"), (50, r"\d+s"), (50 * MINUTE, r"\d+h(\d+m)?|\d+m"),
    (5 * HOUR, r"\d+h"), (3 * DAY, r"\d+d(\d+h)?|\d+h"), (40 * DAY, r"\d+d"),
])
def test_axis_ticks__distinct_ordered_and_in_one_format_from_milliseconds_to_days(span: float, unit: str) -> None:
    start = 1_772_456_400.0
    axis = fit_axis([start + span * i / 7 for i in range(8)])  # evenly paced: no break
    ticks = axis.ticks()
    labels = [t.label for t in ticks]
    assert 4 <= len(ticks) <= 9, labels
    assert len(set(labels)) == len(labels), labels
    assert [t.left for t in ticks] == sorted(t.left for t in ticks) and ticks[0].left == 0
    assert all(re.fullmatch(rf"\+({unit})", label) for label in labels), labels


def test_axis_ticks__a_short_trial_never_reads_zero_twice() -> None:
    axis = fit_axis([100.0, 100.0004, 100.0011, 100.0023, 100.0031])
    labels = [t.label for t in axis.ticks()]
    assert labels == ["+0ms", "+1ms", "+2ms", "+3ms"]


# --- breaks ----------------------------------------------------------------------------------

ORDERS_LATENCY = [0.0, 3780.0, 3780.36, 3781.2, 3799.0, 3799.8, 3802.9, 3805.7, 3806.4, 3822.6, 3838.2,
                  3900.0, 3900.2, 3900.6, 3905.1, 3908.7, 3910.0, 3911.4, 3927.2]
"""Event offsets of a real orders-latency trial: the seeded monitor state, then a clock jump."""


def test_idle_gaps__a_clock_jump_between_the_seed_and_the_incident_is_idle() -> None:
    assert idle_gaps(ORDERS_LATENCY) == [(0.0, 3780.0)]


def test_idle_gaps__an_evenly_paced_trial_has_none() -> None:
    assert idle_gaps([i * 10 * MINUTE for i in range(7)]) == []


def test_idle_gaps__two_jumps_between_three_bursts_are_both_idle() -> None:
    bursts = [0.0, 0.2, 0.5, HOUR, HOUR + 0.3, HOUR + 0.4, 2 * HOUR, 2 * HOUR + 0.1]
    assert idle_gaps(bursts) == [(0.5, HOUR), (HOUR + 0.4, 2 * HOUR)]


def test_idle_gaps__sub_second_gaps_are_never_a_clock_jump() -> None:
    assert idle_gaps([0.0, 0.0001, 0.0002, 0.0003, 0.5]) == []


def test_fit_axis__the_incident_fills_the_axis_not_its_last_3_percent() -> None:
    axis = fit_axis(ORDERS_LATENCY)
    assert len(axis.breaks) == 1 and axis.breaks[0].width <= 3
    incident = [axis.position(t) for t in ORDERS_LATENCY[1:]]
    assert max(incident) == 100 and min(incident) < 10  # it was 96.3% → 100% on a linear axis
    assert [axis.position(t) for t in ORDERS_LATENCY] == sorted(axis.position(t) for t in ORDERS_LATENCY)
    assert axis.ticks()[1].label == "+1h3m"  # the burst after the break is labelled where it starts


# --- colours ---------------------------------------------------------------------------------

def _incident_trial(tmp_path: Path) -> tuple[TrialData, dict[str, Any]]:
    calls = [Call(1, 1000.0, "agent", "pagerduty", "PUT", "/incidents/P1", 200, True),
             Call(2, 1001.0, "agent", "slack", "POST", "/api/chat.postMessage", 404, False)]
    world = {"pagerduty": {"incidents": [{
        "incident_number": 1, "title": "orders slow", "urgency": "high", "status": "resolved",
        "created_at": "1970-01-01T00:16:30Z", "resolved_at": "1970-01-01T00:16:50Z",
        "acknowledgements": [{"at": "1970-01-01T00:16:40Z", "acknowledger": {"summary": "oncall"}}]}]}}
    return TrialData(TrialFolder(tmp_path), {}, calls, {}, []), world


def test_timeline_colours__a_triggered_incident_is_red_like_a_failed_call_and_the_legend_lists_what_is_used(
        tmp_path: Path) -> None:
    timeline = build_timeline(*_incident_trial(tmp_path))
    colours = {mark.label: mark.colour for lane in timeline.lanes for mark in lane.marks}
    assert colours["incident #1 orders slow triggered (high)"] == "failed"
    assert colours["#2 agent: POST /api/chat.postMessage → 404"] == "failed"
    assert colours["incident #1 orders slow acknowledged by oncall"] == "warn"
    assert colours["incident #1 orders slow resolved"] == "ok"
    assert colours["#1 agent: PUT /incidents/P1 → 200"] == "ok"
    assert [c.name for c in timeline.legend] == ["failed", "warn", "ok"]


def test_timeline_colours__each_mark_kind_has_exactly_one_colour() -> None:
    kinds = [kind for colour in COLOURS for kind in colour.kinds]
    assert len(kinds) == len(set(kinds))
    assert {"err", "alert"} == set(next(c for c in COLOURS if c.name == "failed").kinds)


def test_timeline_colours__the_stylesheet_defines_each_colour_once() -> None:
    css = (Path(__file__).parents[2] / "src/ancha/console/static/timeline.css").read_text()
    for colour in COLOURS:
        assert len(re.findall(rf"#timeline \.c-{colour.name} \{{", css)) == 1, colour.name


# --- in Chromium -----------------------------------------------------------------------------

def _ticks(page: Page) -> list[dict[str, Any]]:
    return page.eval_on_selector_all(  # type: ignore[no-any-return]
        "#tl-axis .tl-tick", "els => els.map(e => ({label: e.textContent, offset: Number(e.dataset.offset), "
                             "x: e.getBoundingClientRect().left + e.getBoundingClientRect().width / 2}))")


def _assert_readable(ticks: list[dict[str, Any]]) -> None:
    labels = [t["label"] for t in ticks]
    assert len(ticks) >= 3, labels
    assert len(set(labels)) == len(labels), labels
    assert [t["offset"] for t in ticks] == sorted(t["offset"] for t in ticks), labels
    assert [t["x"] for t in ticks] == sorted(t["x"] for t in ticks), labels


def _changed_to(page: Page, before: list[str]) -> list[dict[str, Any]]:
    page.wait_for_function("(before) => [...document.querySelectorAll('#tl-axis .tl-tick')]"
                           ".map(e => e.textContent).join('|') !== before", arg="|".join(before))
    return _ticks(page)


def test_timeline__wheel_and_drag_zoom_with_ticks_that_stay_distinct_and_ordered(
        console: ConsoleServer, example_runs: ExampleRuns, page: Page) -> None:
    refused: list[str] = []
    page.on("console", lambda m: refused.append(m.text) if "Content Security Policy" in m.text else None)
    page.goto(f"{console.url}/runs/{example_runs.passing}/orders-latency/1")
    page.wait_for_load_state("networkidle")
    whole = _ticks(page)
    _assert_readable(whole)
    assert page.locator("#timeline .tl-break").count() == 1  # the clock jump before the incident
    track = page.locator(".lane[data-lane='tool:github'] .track").bounding_box()
    calls = page.eval_on_selector_all(".lane[data-lane^='tool:'] .mark", "els => els.map(e => e.getBoundingClientRect().left)")
    assert max(calls) - min(calls) > track["width"] / 2  # the agent's calls spread over the track
    assert page.locator("#tl-reset").is_hidden()

    axis = page.locator("#tl-axis").bounding_box()
    page.mouse.move(axis["x"] + axis["width"] * 0.5, axis["y"] + 60)
    page.mouse.wheel(0, -600)
    wheeled = _changed_to(page, [t["label"] for t in whole])
    _assert_readable(wheeled)
    assert wheeled[1]["offset"] - wheeled[0]["offset"] < whole[2]["offset"] - whole[1]["offset"]  # a finer step
    assert page.locator("#tl-reset").is_visible()

    page.mouse.move(axis["x"] + axis["width"] * 0.3, axis["y"] + 60)
    page.mouse.down()
    page.mouse.move(axis["x"] + axis["width"] * 0.4, axis["y"] + 60, steps=5)
    page.mouse.up()
    dragged = _changed_to(page, [t["label"] for t in wheeled])
    _assert_readable(dragged)
    assert dragged[1]["offset"] - dragged[0]["offset"] < wheeled[1]["offset"] - wheeled[0]["offset"]
    assert wheeled[0]["offset"] <= dragged[0]["offset"] <= dragged[-1]["offset"] <= wheeled[-1]["offset"]
    assert re.fullmatch(r"\+1h\d+m[\d.]+s", dragged[0]["label"])  # deep inside the incident, one format

    page.locator("#tl-reset").click()
    assert [t["label"] for t in _changed_to(page, [t["label"] for t in dragged])] == [t["label"] for t in whole]
    assert refused == []


def test_timeline__the_legend_shows_exactly_the_colours_of_the_marks(
        console: ConsoleServer, example_runs: ExampleRuns, page: Page) -> None:
    for scene in ("orders-latency", "beta-exports"):
        page.goto(f"{console.url}/runs/{example_runs.passing}/{scene}/1")
        page.wait_for_load_state("networkidle")
        used = set(page.eval_on_selector_all(
            "#lanes .mark, #lanes .span", "els => els.map(e => getComputedStyle(e).backgroundColor)"))
        legend = page.eval_on_selector_all(
            "#tl-legend .tl-swatch", "els => els.map(e => getComputedStyle(e).backgroundColor)")
        assert len(legend) == len(set(legend)), legend  # one entry per colour
        assert set(legend) == used, scene
    # the PagerDuty lane's triggered incident is the red of a failed call, and only that
    page.goto(f"{console.url}/runs/{example_runs.passing}/orders-latency/1")
    triggered = page.locator(".lane[data-lane='state:pagerduty'] .mark[title*='triggered']")
    red = page.locator("#tl-legend li[data-colour='failed']")
    assert "failed call" in red.inner_text()
    assert triggered.evaluate("e => getComputedStyle(e).backgroundColor") == \
        red.locator(".tl-swatch").evaluate("e => getComputedStyle(e).backgroundColor")
