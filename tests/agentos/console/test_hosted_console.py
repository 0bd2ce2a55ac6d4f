"""The hosted console in Chromium, on PostgreSQL: runs uploaded with ``push_run`` over real
HTTP, then signing in and out, the runs page's filters and paging, a scene's chart, flaky
scenes and regressions found in a synthetic history with known outcomes, a real run's trial
page, and one workspace probing another's runs as an attacker would."""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote, urlencode

import httpx
import pytest
from console_task_helpers import ServerThread
from playwright.sync_api import Page, expect
from starlette.applications import Starlette
from starlette.routing import Mount

from ancha.console import links
from ancha.console.app import console_app
from ancha.results.upload import RunSource, push_run

if TYPE_CHECKING:
    from conftest import AgentOS, Workspaces

COOKIE = "agentos_session"
START = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)

# --- runs as `ancha run` writes them --------------------------------------------------------


def make_run(root: Path, started_at: datetime, scenes: dict[str, str]) -> Path:
    """A finished run folder: scene -> its trials' outcomes in order ("PPF"). Each trial has
    its verdict with one check, and one call to Slack."""
    run_id = f"{started_at:%Y%m%dT%H%M%SZ}-{secrets.token_hex(3)}"
    folder = root / run_id
    entries = []
    for scene, outcomes in scenes.items():
        source = root / "scenes" / scene / "scene.yaml"
        source.parent.mkdir(parents=True, exist_ok=True)
        source.write_text(f"name: {scene}\ntask: answer the customer\n")
        results = []
        for number, outcome in enumerate(outcomes, start=1):
            trial = folder / scene / str(number)
            trial.mkdir(parents=True)
            verdict = "passed" if outcome == "P" else "failed"
            check = {"id": "replied", "required": True, "status": verdict, "passed": outcome == "P",
                     "expected": "a reply in the thread", "actual": None if outcome == "P" else "no reply"}
            (trial / "checks.json").write_text(json.dumps({"scene": scene, "trial": number, "verdict": verdict,
                                                           "status": "done", "reason": None, "results": [check]}))
            call = {"seq": 1, "at": f"{started_at:%Y-%m-%dT%H:%M:%SZ}", "actor": "agent", "tool": "slack",
                    "method": "POST", "path": "/api/chat.postMessage", "query": {}, "status": 200, "request": None,
                    "response": {"ok": True}, "worked": True, "coverage_gap": False}
            (trial / "trace.jsonl").write_text(json.dumps(call) + "\n")
            results.append({"trial": number, "verdict": verdict, "status": "done", "reason": None})
        passed = outcomes.count("P")
        entries.append({"scene": scene, "path": str(source), "source_hash": "ab" * 32, "trials": len(outcomes),
                        "ran": len(outcomes), "passed": passed, "failed": len(outcomes) - passed, "invalid": 0,
                        "pass_rate": passed / len(outcomes), "min_pass_rate": 0.5,
                        "gate_met": passed / len(outcomes) >= 0.5, "trial_results": results})
    (folder / "summary.json").write_text(json.dumps({
        "run_id": run_id, "started_at": started_at.isoformat().replace("+00:00", "Z"), "duration_s": 3.0,
        "interrupted": False, "exit_code": 0, "seed": 7, "server": "embedded", "config": {}, "scenes": entries}))
    return folder


def push_all(agentos: AgentOS, ci_key: str, runs: list[tuple[Path, RunSource]]) -> None:
    """Upload each run as `ancha push` does, a few at a time."""
    def push(run: tuple[Path, RunSource]) -> None:
        done = push_run(run[0], agentos.url, ci_key, run[1])
        assert done.url == f"{agentos.url}/ui/runs/{run[0].name}"

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(push, runs))


def commit_of(label: str) -> str:
    """A 40-hex commit whose first characters are ``label``'s (hex), padded."""
    return (label + "0123456789abcdef" * 3)[:40]


# --- a synthetic history: 15 commits, 2 runs each, 3 scenes of 4 trials --------------------

STABLE, COIN, DROPS = "steady-greeting", "coin-flip", "orders-drop"
DROP_AT = 9
"""The commit (by index) where DROPS falls from ~94% to ~31%."""
COIN_TRIALS = ["PFPF", "FPPF", "PFFP", "FPFP", "PPFF", "FFPP"]
"""Always two passes in four, in changing orders: a coin flip that never regresses."""


def drops(commit: int, run: int) -> str:
    if commit < DROP_AT:
        return "PPPF" if commit % 2 == 0 and run == 1 else "PPPP"
    return ("PFFF", "FFPF")[run] if commit % 2 else ("PFFF", "FPPF")[run]


@dataclass
class History:
    viewer: str
    commits: list[str]
    runs: list[list[str]]
    """Run ids by commit, in order."""

    @property
    def all_runs(self) -> list[str]:
        return [run for pair in self.runs for run in pair]


@pytest.fixture(scope="module")
def history(agentos: AgentOS, workspaces: Workspaces, tmp_path_factory: pytest.TempPathFactory) -> History:
    name = workspaces.new("history")
    root = tmp_path_factory.mktemp("history")
    commits = [commit_of(f"{i:02d}c0de") for i in range(15)]
    folders: list[list[Path]] = []
    for i in range(len(commits)):
        folders.append([make_run(root, START + timedelta(minutes=2 * i + j),
                                 {STABLE: "PPPP", COIN: COIN_TRIALS[(2 * i + j) % 6], DROPS: drops(i, j)})
                        for j in range(2)])
    push_all(agentos, workspaces.key(name, "ci"),
             [(f, RunSource(commit=c, branch="main")) for c, pair in zip(commits, folders, strict=True) for f in pair])
    return History(workspaces.key(name), commits, [[f.name for f in pair] for pair in folders])


# --- 51 runs, for the runs page's filters and paging ---------------------------------------

FEATURE = "feature/retry"
EXTRA = "refund-policy"


@dataclass
class ManyRuns:
    viewer: str
    runs: list[str]
    """Oldest first."""
    on_feature: list[str]
    prefix: str
    with_prefix: list[str]
    with_extra_scene: list[str]


@pytest.fixture(scope="module")
def many_runs(agentos: AgentOS, workspaces: Workspaces, tmp_path_factory: pytest.TempPathFactory) -> ManyRuns:
    name = workspaces.new("many")
    root = tmp_path_factory.mktemp("many")
    uploads = []
    for i in range(51):
        scenes = {"checkout": "P"} | ({EXTRA: "F"} if i in (5, 15, 25) else {})
        commit = commit_of({40: "abc1230", 41: "abc1239", 42: "abd1230"}.get(i, f"{i:02d}feed"))
        branch = FEATURE if i in (10, 20, 30) else "main"
        uploads.append((make_run(root, START + timedelta(hours=i), scenes), RunSource(commit=commit, branch=branch)))
    push_all(agentos, workspaces.key(name, "ci"), uploads)
    runs = [folder.name for folder, _ in uploads]
    return ManyRuns(workspaces.key(name), runs, on_feature=[runs[10], runs[20], runs[30]], prefix="abc123",
                    with_prefix=[runs[40], runs[41]], with_extra_scene=[runs[5], runs[15], runs[25]])


def shown_runs(page: Page, count: int) -> list[str]:
    """The run ids the runs page lists, once it lists ``count`` of them."""
    rows = page.locator("tr.run-row")
    expect(rows).to_have_count(count)
    return list(rows.evaluate_all("rows => rows.map(row => row.dataset.run)"))


def session_cookie(page: Page) -> dict[str, object]:
    found = [c for c in page.context.cookies() if c["name"] == COOKIE]
    assert len(found) == 1, page.context.cookies()
    return dict(found[0])


# --- signing in and out ---------------------------------------------------------------------


def test_signing_in__a_wrong_key_shows_the_error_and_a_right_key_lands_on_the_runs_page_with_a_strict_cookie(
        agentos: AgentOS, history: History, new_page: Callable[[], Page]) -> None:
    page = new_page()
    page.goto(agentos.url + "/ui/")
    expect(page).to_have_url(re.compile(r"/ui/sign-in\?next=%2Fui%2F$"))
    page.fill("#key", "aos_live_" + secrets.token_urlsafe(24))
    page.click("#sign-in")
    expect(page.locator("#sign-in-error")).to_contain_text("That key is not a key of this server")
    assert page.context.cookies() == []

    page.fill("#key", history.viewer)
    page.click("#sign-in")
    expect(page).to_have_url(agentos.url + "/ui/")
    expect(page.locator("h1")).to_have_text("Runs")
    shown_runs(page, len(history.all_runs))
    cookie = session_cookie(page)
    assert cookie["httpOnly"] is True and cookie["sameSite"] == "Strict" and cookie["path"] == "/ui"
    assert history.viewer not in str(cookie["value"]), "the cookie holds a session, not the key"
    assert page.evaluate("document.cookie") == "", "no script on the page can read the session"


def test_signing_out_ends_the_session_and_going_back_shows_no_data(
        agentos: AgentOS, history: History, signed_in: Callable[[str], Page]) -> None:
    page = signed_in(history.viewer)
    shown_runs(page, len(history.all_runs))
    token = session_cookie(page)["value"]
    page.click("#sign-out")
    expect(page).to_have_url(agentos.url + "/ui/sign-in")
    page.go_back()
    expect(page.locator("#key")).to_be_visible()
    expect(page.locator("tr.run-row")).to_have_count(0)
    assert history.runs[0][0] not in page.content()
    # The session is over on the server too: its cookie, sent again, is turned away.
    answer = httpx.get(agentos.url + "/ui/", cookies={COOKIE: str(token)}, headers={"accept": "text/html"})
    assert answer.status_code == 303 and answer.headers["location"].startswith("/ui/sign-in")


def test_a_session_of_a_revoked_key_stops_working(
        agentos: AgentOS, workspaces: Workspaces, signed_in: Callable[[str], Page]) -> None:
    name = workspaces.new("revoked")
    viewer, admin = workspaces.key(name, "viewer"), workspaces.key(name, "admin")
    page = signed_in(viewer)
    expect(page.locator("#no-runs")).to_be_visible()
    with httpx.Client(base_url=agentos.url, headers={"authorization": f"Bearer {admin}"}) as api:
        key_id = next(k["id"] for k in api.get("/api/keys").json() if k["prefix"] == viewer[:13])
        assert api.delete(f"/api/keys/{key_id}").status_code == 204
    page.goto(agentos.url + "/ui/flaky")
    expect(page).to_have_url(re.compile(r"/ui/sign-in\?next=%2Fui%2Fflaky$"))
    expect(page.locator("#key")).to_be_visible()


def test_the_sign_in_page_s_next_never_leads_to_another_site(
        agentos: AgentOS, history: History, new_page: Callable[[], Page]) -> None:
    page = new_page()
    for target in ("//evil.example/", "https://evil.example/", "/ui//evil.example/", "/\\evil.example/",
                   "/ui/\\evil.example", "javascript:alert(1)"):
        page.goto(f"{agentos.url}/ui/sign-in?next={quote(target, safe='')}")
        page.fill("#key", history.viewer)
        page.click("#sign-in")
        expect(page, target).to_have_url(agentos.url + "/ui/")


def test_the_sign_in_page_s_next_leads_back_to_the_console_page_asked_for(
        agentos: AgentOS, history: History, new_page: Callable[[], Page]) -> None:
    page = new_page()
    page.goto(f"{agentos.url}/ui/scenes/{DROPS}?branch=main")
    expect(page).to_have_url(re.compile(r"/ui/sign-in\?next="))
    page.fill("#key", history.viewer)
    page.click("#sign-in")
    expect(page).to_have_url(f"{agentos.url}/ui/scenes/{DROPS}?branch=main")
    expect(page.locator("h1")).to_have_text(f"Scene {DROPS} on main")


# --- the runs page ----------------------------------------------------------------------------


def test_runs_page__filtering_by_branch_commit_prefix_and_scene_shows_exactly_the_matching_runs(
        agentos: AgentOS, many_runs: ManyRuns, signed_in: Callable[[str], Page]) -> None:
    page = signed_in(many_runs.viewer)
    page.select_option("#filter-branch", FEATURE)
    page.click("#run-filters button[type=submit]")
    expect(page).to_have_url(re.compile(r"branch=feature%2Fretry"))
    assert sorted(shown_runs(page, 3)) == sorted(many_runs.on_feature)

    page.goto(agentos.url + "/ui/")
    page.fill("#filter-commit", many_runs.prefix)
    page.click("#run-filters button[type=submit]")
    expect(page).to_have_url(re.compile(rf"commit={many_runs.prefix}"))
    assert sorted(shown_runs(page, 2)) == sorted(many_runs.with_prefix)

    page.goto(agentos.url + "/ui/")
    page.select_option("#filter-scene", EXTRA)
    page.click("#run-filters button[type=submit]")
    expect(page).to_have_url(re.compile(rf"scene={EXTRA}"))
    assert sorted(shown_runs(page, 3)) == sorted(many_runs.with_extra_scene)


def test_runs_page__older_runs_reaches_the_51st_run(many_runs: ManyRuns, signed_in: Callable[[str], Page]) -> None:
    page = signed_in(many_runs.viewer)
    first = shown_runs(page, 50)
    assert first == list(reversed(many_runs.runs[1:])), "newest first"
    page.click("#older")
    assert shown_runs(page, 1) == [many_runs.runs[0]]
    expect(page.locator("#older")).to_have_count(0)


def test_runs_page__a_garbled_older_runs_link_is_a_page_that_says_why(
        agentos: AgentOS, many_runs: ManyRuns, signed_in: Callable[[str], Page]) -> None:
    page = signed_in(many_runs.viewer)
    answer = page.goto(agentos.url + "/ui/?before=yesterday")
    assert answer is not None and answer.status == 400
    expect(page.locator("#problem")).to_contain_text("Invalid page cursor 'yesterday'")
    expect(page.locator("#sign-out")).to_be_visible()


# --- a scene's chart, flaky scenes and regressions ------------------------------------------


def test_scene_chart__one_point_per_commit_in_commit_order_with_the_low_ones_marked(
        agentos: AgentOS, history: History, signed_in: Callable[[str], Page]) -> None:
    page = signed_in(history.viewer)
    page.goto(f"{agentos.url}/ui/scenes/{DROPS}")
    points = page.locator("#pass-rate-chart circle.point")
    expect(points).to_have_count(len(history.commits))
    tooltips = points.locator("title").all_text_contents()
    assert [t.split(":")[0] for t in tooltips] == [c[:10] for c in history.commits]
    assert tooltips[DROP_AT].startswith(f"{history.commits[DROP_AT][:10]}: 2/8 passed (25%), 2 run(s)")
    low = points.evaluate_all("points => points.map(p => p.classList.contains('low'))")
    assert low == [i >= DROP_AT for i in range(len(history.commits))]
    xs = [float(x) for x in points.evaluate_all("points => points.map(p => p.getAttribute('cx'))")]
    assert xs == sorted(xs) and len(set(xs)) == len(xs)


def test_flaky_page__ranks_the_coin_flip_scene_first_and_leaves_out_the_stable_one(
        agentos: AgentOS, history: History, signed_in: Callable[[str], Page]) -> None:
    page = signed_in(history.viewer)
    page.goto(agentos.url + "/ui/flaky")
    rows = page.locator("tr.flaky-row")
    expect(rows.first).to_have_attribute("data-scene", COIN)
    scenes = rows.evaluate_all("rows => rows.map(row => row.dataset.scene)")
    assert scenes == [COIN, DROPS]
    assert STABLE not in page.locator("#flaky").inner_text()


def test_regressions_page__names_the_commit_with_the_last_good_and_first_bad_runs_and_compares_them(
        agentos: AgentOS, history: History, signed_in: Callable[[str], Page]) -> None:
    page = signed_in(history.viewer)
    page.goto(agentos.url + "/ui/regressions")
    row = page.locator("tr.regression-row")
    expect(row).to_have_count(1)
    expect(row).to_have_attribute("data-scene", DROPS)
    expect(row).to_have_attribute("data-commit", history.commits[DROP_AT])
    expect(row.locator("code")).to_have_text(history.commits[DROP_AT][:10])
    last_good, first_bad = history.runs[DROP_AT - 1][1], history.runs[DROP_AT][0]
    expect(row.locator("a.good-run")).to_have_attribute("href", f"/ui/runs/{last_good}")
    expect(row.locator("a.bad-run")).to_have_attribute("href", f"/ui/runs/{first_bad}")

    row.locator("a.bad-run").click()
    expect(page.locator("h1")).to_contain_text(f"Run {first_bad}")
    page.go_back()
    page.locator("tr.regression-row a.compare-runs").click()
    expect(page).to_have_url(re.compile(r"/ui/compare\?a="))
    assert f"a={last_good}/{DROPS}/" in page.url and f"b={first_bad}/{DROPS}/" in page.url
    expect(page.locator("#verdict-a")).to_have_text("passed")
    expect(page.locator("#verdict-b")).to_have_text("failed")
    expect(page.locator("#check-replied")).to_have_class(re.compile(r"\bdiffers\b"))


# --- a real run -----------------------------------------------------------------------------


@dataclass
class RealRun:
    viewer: str
    run_id: str
    scene: str
    folder: Path


@pytest.fixture(scope="module")
def real_run(agentos: AgentOS, workspaces: Workspaces, example_run: Path) -> RealRun:
    name = workspaces.new("real")
    push_run(example_run, agentos.url, workspaces.key(name, "ci"), RunSource(commit="d" * 40, branch="main"))
    scene = json.loads((example_run / "summary.json").read_text())["scenes"][0]["scene"]
    return RealRun(workspaces.key(name), example_run.name, scene, example_run)


@pytest.fixture(scope="module")
def local_console(real_run: RealRun) -> Iterator[str]:
    """Ancha's own console over the run's folder, as `ancha ui` shows it."""
    app = Starlette(routes=[Mount(links.PREFIX, console_app(real_run.folder.parent))])
    with ServerThread(app) as server:
        yield server.url + "/ui"


def _trial_view(page: Page) -> dict[str, object]:
    """What a trial page shows: its verdict, its timeline's lanes with their marks, its checks."""
    expect(page.locator("#verdict")).to_be_visible()
    return {
        "verdict": page.locator("#verdict").inner_text(),
        "lanes": page.locator(".lane").evaluate_all(
            "lanes => lanes.map(l => [l.dataset.lane, l.querySelector('.lane-title').textContent,"
            " l.querySelectorAll('.mark, .span').length])"),
        "checks": page.locator("article.check").evaluate_all("checks => checks.map(c => [c.id, c.className])"),
        "calls": page.locator("#call-rows tr").count(),
    }


def test_a_real_uploaded_run_s_trial_page_shows_the_timeline_and_checks_ancha_s_own_console_shows(
        agentos: AgentOS, real_run: RealRun, local_console: str, signed_in: Callable[[str], Page],
        new_page: Callable[[], Page]) -> None:
    page = signed_in(real_run.viewer)
    page.click(f"tr.run-row[data-run='{real_run.run_id}'] a >> nth=0")
    expect(page.locator("h1")).to_contain_text(f"Run {real_run.run_id}")
    page.goto(f"{agentos.url}/ui/runs/{real_run.run_id}/{real_run.scene}/1")
    hosted = _trial_view(page)
    local = new_page()
    local.goto(f"{local_console}/runs/{real_run.run_id}/{real_run.scene}/1")
    assert hosted == _trial_view(local)
    assert hosted["verdict"] == "passed"
    lanes = {title for _, title, _ in hosted["lanes"]}  # type: ignore[attr-defined]
    assert {"agent → slack", "laura", "ben", "mike"} <= lanes, lanes
    assert all(marks > 0 for _, _, marks in hosted["lanes"])  # type: ignore[attr-defined]
    assert hosted["checks"] and all("passed" in kind for _, kind in hosted["checks"])  # type: ignore[attr-defined]
    assert hosted["calls"] > 0


# --- isolation ------------------------------------------------------------------------------


def test_workspace_b_reaches_nothing_of_workspace_a_however_it_asks(
        agentos: AgentOS, history: History, workspaces: Workspaces, signed_in: Callable[[str], Page],
        new_page: Callable[[], Page], tmp_path: Path) -> None:
    a_run, a_failed = history.runs[DROP_AT - 1][1], history.runs[DROP_AT][0]
    a_page = signed_in(history.viewer)
    a_page.goto(f"{agentos.url}/ui/runs/{a_run}/{DROPS}/1")  # A's copies of the run are on the server now
    expect(a_page.locator("#verdict")).to_have_text("passed")

    b = workspaces.new("intruder")
    b_folder = make_run(tmp_path, START, {"b-scene": "PP"})
    push_run(b_folder, agentos.url, workspaces.key(b, "ci"), RunSource(commit="b" * 40, branch="main"))
    b_key = workspaces.key(b)
    page = signed_in(b_key)
    assert shown_runs(page, 1) == [b_folder.name]
    a_secrets = [*history.all_runs, history.commits[0][:10], STABLE, COIN, DROPS]

    def shown(path: str, status: int) -> str:
        """What B's browser session is answered (its cookies, without rendering the page)."""
        answer = page.request.get(agentos.url + path, max_redirects=0)
        assert answer.status == status, (path, answer.status)
        text = answer.text()
        assert not [s for s in a_secrets if s in text and s not in path], path
        return text

    for path in (f"/ui/runs/{a_run}", f"/ui/runs/{a_run}/{DROPS}/1", f"/ui/runs/{a_run}/{DROPS}/1/diff",
                 f"/ui/runs/{a_run}/{DROPS}/1/agent.log", f"/ui/runs/{a_run}/{DROPS}/1/calls/1",
                 f"/ui/runs/{a_run}/{DROPS}/1/state", f"/ui/compare?a={a_run}/{DROPS}/1",
                 f"/ui/compare?a={a_run}/{DROPS}/1&b={a_failed}/{DROPS}/1",
                 f"/ui/compare?a={b_folder.name}/b-scene/1&b={a_run}/{DROPS}/1", f"/ui/compare?scene={DROPS}",
                 f"/ui/scenes/{DROPS}", f"/ui/compare-runs?a={a_run}&b={a_failed}&scene={DROPS}"):
        shown(path, 404)
    for path in ("/ui/", "/ui/flaky", "/ui/regressions", f"/ui/flaky?commit={history.commits[DROP_AT]}",
                 f"/ui/?commit={history.commits[0][:7]}", f"/ui/?scene={DROPS}", "/ui/?branch=main"):
        text = shown(path, 200)
        assert "flaky-row" not in text and "regression-row" not in text, path
    answer = page.goto(f"{agentos.url}/ui/runs/{a_run}/{DROPS}/1")  # and in the browser itself
    assert answer is not None and answer.status == 404
    expect(page.locator("#verdict")).to_have_count(0)

    # The raw file API: B's key finds nothing, and B's session cookie is no key at all.
    files = f"/api/ancha/runs/{a_run}/files"
    for path in (f"{files}/summary.json", f"{files}/{DROPS}/1/checks.json", f"/api/ancha/runs/{a_run}",
                 f"/api/ancha/scenes/{DROPS}/history"):
        assert httpx.get(agentos.url + path, headers={"authorization": f"Bearer {b_key}"}).status_code == 404, path
        assert page.request.get(agentos.url + path).status == 401, path

    # Sessions are per workspace: only A's cookie, pasted into another browser, shows A's runs.
    stranger = new_page()
    answer = stranger.goto(f"{agentos.url}/ui/runs/{a_run}/{DROPS}/1")
    expect(stranger).to_have_url(re.compile(r"/ui/sign-in\?next="))
    stranger.context.add_cookies([{"name": COOKIE, "value": str(session_cookie(a_page)["value"]),
                                   "url": agentos.url + "/ui/"}])
    stranger.goto(f"{agentos.url}/ui/runs/{a_run}/{DROPS}/1")
    expect(stranger.locator("#verdict")).to_have_text("passed")


def test_pages_without_a_session_send_the_browser_to_sign_in(
        agentos: AgentOS, history: History, new_page: Callable[[], Page]) -> None:
    page = new_page()
    a_run = history.runs[0][0]
    page.goto(f"{agentos.url}/ui/runs/{a_run}/{DROPS}/1")
    expect(page).to_have_url(re.compile(rf"/ui/sign-in\?next=%2Fui%2Fruns%2F{a_run}%2F{DROPS}%2F1$"))
    expect(page.locator("#key")).to_be_visible()
    for path in ("/ui/", "/ui/flaky", "/ui/regressions", f"/ui/scenes/{DROPS}", f"/ui/runs/{a_run}",
                 f"/ui/runs/{a_run}/{DROPS}/1/agent.log", f"/ui/compare?a={a_run}/{DROPS}/1", "/ui/compare-runs"):
        answer = page.request.get(agentos.url + path, max_redirects=0, headers={"accept": "text/html"})
        assert answer.status == 303 and answer.headers["location"] == "/ui/sign-in?" + urlencode({"next": path})
        assert a_run not in answer.text()
    for path in ("/ui/", f"/ui/runs/{a_run}"):
        answer = httpx.get(agentos.url + path)  # not a browser: no redirect, a 401 that says what to do
        assert answer.status_code == 401 and "Sign in to the console first" in answer.text
