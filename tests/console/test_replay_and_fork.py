"""Replays and forks in the console: a run made by ``ancha replay`` or ``ancha fork`` links to the
trial it came from (or names it, once that is gone), a trial's calls offer the ``ancha fork``
command that starts from them, and a trial shows the seed its world was drawn with."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from console_helpers import EXAMPLES, ConsoleServer, ancha, newest_run, start_console, stop_console
from lxml import html
from starlette.testclient import TestClient

from ancha.console import links
from ancha.console.app import console_app

Page = Any  # Playwright's sync page, typed loosely as in test_console_browser.py
SCENE = "export-question"


@dataclass
class Replayed:
    runs: Path
    original: str
    replay: str
    console: ConsoleServer


@pytest.fixture(scope="module")
def replayed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Replayed]:
    """One trial of one bundled example, then ``ancha replay --calls`` of it, as a user runs them."""
    project = tmp_path_factory.mktemp("replay") / "project"
    shutil.copytree(EXAMPLES / "scenes" / SCENE, project / "scenes" / SCENE)
    (project / "agents").mkdir()
    shutil.copy(EXAMPLES / "agents" / "acme_bot.py", project / "agents" / "acme_bot.py")
    (project / "ancha.yaml").write_text("agent:\n  command: python agents/acme_bot.py\n"
                                        f"scenes: [scenes/{SCENE}/scene.yaml]\ntrials: 1\n")
    runs = project / ".ancha" / "runs"
    done = ancha("run", "--no-progress", cwd=project)
    assert done.returncode == 0, done.stdout + done.stderr
    original = newest_run(runs, set())
    done = ancha("replay", f"latest/{SCENE}/1", "--calls", "--no-progress", cwd=project)
    assert done.returncode == 0, done.stdout + done.stderr
    server = start_console(runs)
    yield Replayed(runs, original, newest_run(runs, {original}), server)
    stop_console(server)


def test_replay_run__links_to_the_original_trial(replayed: Replayed, page: Page) -> None:
    page.goto(f"{replayed.console.url}/runs/{replayed.replay}")
    origin = page.locator("#origin")
    assert origin.inner_text().startswith(f"replay of {replayed.original}/{SCENE}/1")
    origin.locator("#origin-link").click()
    page.wait_for_url(re.compile(rf"/ui/runs/{replayed.original}/{SCENE}/1$"))
    assert page.locator("h1").inner_text().startswith(f"{SCENE} trial 1")
    assert page.locator("#origin").count() == 0  # the original is no replay


def test_replay_trial__links_to_its_original_and_compares_with_it(replayed: Replayed, page: Page) -> None:
    page.goto(f"{replayed.console.url}/runs/{replayed.replay}/{SCENE}/1")
    link = page.locator("#origin #origin-link")
    assert link.inner_text() == f"{replayed.original}/{SCENE}/1"
    assert link.get_attribute("href") == links.trial_path(replayed.original, SCENE, 1)
    page.locator("#origin a.origin-compare").click()
    page.wait_for_url(re.compile(r"/ui/compare\?"))
    text = page.locator("main").inner_text()
    assert f"{replayed.replay}/{SCENE}/1" in text and f"{replayed.original}/{SCENE}/1" in text


def test_timeline_mark__offers_the_fork_command_from_its_call(replayed: Replayed, page: Page) -> None:
    page.goto(f"{replayed.console.url}/runs/{replayed.original}/{SCENE}/1")
    mark = page.locator(".lane[data-lane='tool:slack'] a.mark").last
    seq = mark.get_attribute("data-seq")
    command = f"ancha fork {replayed.original}/{SCENE}/1 --at {seq}"
    assert mark.get_attribute("data-fork") == command
    assert (mark.get_attribute("title") or "").endswith(f"fork from here: {command}")
    mark.click()  # opens the call, as a mark does, with the command in its details
    page.wait_for_url(re.compile(rf"\?focus={seq}#call-{seq}$"))
    shown = page.locator(f"#call-{seq} .fork-command")
    assert shown.inner_text() == command
    other = page.locator("#call-rows tr").first  # a call opened from the list offers its own
    other.locator("summary").click()
    assert other.locator(".fork-command").inner_text() == f"ancha fork {replayed.original}/{SCENE}/1 --at 1"


def test_trial__shows_the_seed_its_world_was_drawn_with(replayed: Replayed, page: Page) -> None:
    seed = json.loads((replayed.runs / replayed.original / "summary.json").read_text())["seed"]
    for run_id in (replayed.original, replayed.replay):  # the replay's world is the original's
        page.goto(f"{replayed.console.url}/runs/{run_id}/{SCENE}/1")
        assert page.locator("#trial-seed").inner_text() == f"seed {seed}"


# --- what a page says of origins it reads from disk ---------------------------------------------

def _trial(runs: Path, run_id: str, scene: str = "s", trial: str = "1",
           world_line: dict[str, Any] | None = None) -> None:
    """A graded trial folder with one call, and its ``replay.json`` when ``world_line`` is given."""
    folder = runs / run_id / scene / trial
    folder.mkdir(parents=True)
    (folder / "checks.json").write_text(json.dumps({"scene": scene, "trial": int(trial), "verdict": "passed",
                                                    "status": "done", "reason": None, "results": []}))
    (folder / "trace.jsonl").write_text(json.dumps({
        "seq": 1, "at": "2026-03-02T09:00:01Z", "actor": "agent", "tool": "slack", "method": "POST",
        "path": "/api/auth.test", "query": {}, "status": 200, "request": None, "response": {"ok": True},
        "worked": True, "coverage_gap": False}) + "\n")
    if world_line is not None:
        (folder / "replay.json").write_text(json.dumps(world_line))


def _summary(runs: Path, run_id: str, trials: list[int], origin: dict[str, Any] | None = None) -> None:
    results = [{"trial": trial, "verdict": "passed"} for trial in trials]
    scene = {"scene": "s", "trials": len(trials), "passed": len(trials), "trial_results": results}
    (runs / run_id / "summary.json").write_text(json.dumps({"run_id": run_id, "seed": 7, "scenes": [scene],
                                                            **({"origin": origin} if origin else {})}))


def _page(runs: Path, path: str) -> Any:
    answer = TestClient(console_app(runs)).get(path.removeprefix(links.PREFIX))
    assert answer.status_code == 200, answer.text
    return html.fromstring(answer.text)


FORK = {"kind": "fork", "run": "20260101T000000Z-aaaaaa", "scene": "s", "trial": 1, "at": "10m", "seq": 12,
        "forked_at": "2026-03-02T09:10:00.250000Z", "set": ["people.ben.replies_after=5m"]}


def test_fork_run__names_its_moment_and_compares_each_trial_with_the_original(tmp_path: Path) -> None:
    _trial(tmp_path, "20260101T000000Z-aaaaaa", world_line={"seed": 7, "trial": 1})
    for trial in ("1", "2"):
        _trial(tmp_path, "20260102T000000Z-bbbbbb", trial=trial, world_line={"seed": 7, "trial": 1, "origin": FORK})
    _summary(tmp_path, "20260102T000000Z-bbbbbb", [1, 2], FORK)
    page = _page(tmp_path, links.run_path("20260102T000000Z-bbbbbb"))
    origin = page.get_element_by_id("origin")
    assert " ".join(origin.text_content().split()).startswith(
        "fork of 20260101T000000Z-aaaaaa/s/1 at 2026-03-02 09:10:00.250 (seq 12) · changed: people.ben.replies_after=5m")
    assert origin.get_element_by_id("origin-link").get("href") == links.trial_path("20260101T000000Z-aaaaaa", "s", 1)
    compare = origin.xpath('.//a[@class="origin-compare"]')
    assert [(a.text_content(), a.get("href")) for a in compare] == [
        (f"#{n}", links.compare_path(f"20260102T000000Z-bbbbbb/s/{n}", "20260101T000000Z-aaaaaa/s/1")) for n in (1, 2)]
    trial = _page(tmp_path, links.trial_path("20260102T000000Z-bbbbbb", "s", 2))
    assert "fork of 20260101T000000Z-aaaaaa/s/1 at" in trial.get_element_by_id("origin").text_content()


def test_forked_trial_of_a_run_under_way__names_its_origin_from_replay_json(tmp_path: Path) -> None:
    _trial(tmp_path, "20260101T000000Z-aaaaaa", world_line={"seed": 7, "trial": 1})
    _trial(tmp_path, "20260102T000000Z-bbbbbb", world_line={"seed": 7, "trial": 1, "origin": FORK})  # no summary yet
    trial = _page(tmp_path, links.trial_path("20260102T000000Z-bbbbbb", "s", 1))
    link = trial.get_element_by_id("origin-link")
    assert link.get("href") == links.trial_path("20260101T000000Z-aaaaaa", "s", 1)


def test_origin_gone__is_named_as_text_without_a_link(tmp_path: Path) -> None:
    _trial(tmp_path, "20260102T000000Z-bbbbbb", world_line={"seed": 7, "trial": 1})
    _summary(tmp_path, "20260102T000000Z-bbbbbb", [1], FORK)
    for path in (links.run_path("20260102T000000Z-bbbbbb"), links.trial_path("20260102T000000Z-bbbbbb", "s", 1)):
        origin = _page(tmp_path, path).get_element_by_id("origin")
        assert origin.get_element_by_id("origin-gone").text_content() == "20260101T000000Z-aaaaaa/s/1"
        assert "(no longer here)" in origin.text_content()
        assert origin.xpath(".//a") == []  # neither the trial nor a comparison with it


def test_origin_naming_no_folder__is_never_followed(tmp_path: Path) -> None:
    _trial(tmp_path, "20260102T000000Z-bbbbbb")
    _summary(tmp_path, "20260102T000000Z-bbbbbb", [1], {"kind": "replay", "run": "..", "scene": "s", "trial": 1})
    origin = _page(tmp_path, links.run_path("20260102T000000Z-bbbbbb")).get_element_by_id("origin")
    assert origin.xpath(".//a") == []


def test_trial_without_replay_json__offers_no_fork_and_no_seed(tmp_path: Path) -> None:
    _trial(tmp_path, "20260101T000000Z-aaaaaa")
    _summary(tmp_path, "20260101T000000Z-aaaaaa", [1])
    path = links.trial_path("20260101T000000Z-aaaaaa", "s", 1)
    page = _page(tmp_path, path)
    assert page.xpath('//*[@data-fork] | //*[@id="trial-seed"] | //*[@id="origin"]') == []
    call = TestClient(console_app(tmp_path)).get(path.removeprefix(links.PREFIX) + "/calls/1")
    assert call.status_code == 200 and "ancha fork" not in call.text


def test_replay_of_a_whole_run__links_the_run_and_each_trial_to_its_own_original(tmp_path: Path) -> None:
    for trial in ("1", "2"):
        _trial(tmp_path, "20260101T000000Z-aaaaaa", trial=trial, world_line={"seed": 7, "trial": int(trial)})
        _trial(tmp_path, "20260102T000000Z-bbbbbb", trial=trial, world_line={"seed": 7, "trial": int(trial)})
    _summary(tmp_path, "20260102T000000Z-bbbbbb", [1, 2], {"kind": "replay", "run": "20260101T000000Z-aaaaaa",
                                                           "calls": False})
    origin = _page(tmp_path, links.run_path("20260102T000000Z-bbbbbb")).get_element_by_id("origin")
    assert origin.get_element_by_id("origin-link").get("href") == links.run_path("20260101T000000Z-aaaaaa")
    assert origin.xpath('.//a[@class="origin-compare"]/@href')[1] == links.compare_path(
        "20260102T000000Z-bbbbbb/s/2", "20260101T000000Z-aaaaaa/s/2")
    trial = _page(tmp_path, links.trial_path("20260102T000000Z-bbbbbb", "s", 2)).get_element_by_id("origin")
    link = trial.get_element_by_id("origin-link")
    assert (link.text_content(), link.get("href")) == ("20260101T000000Z-aaaaaa/s/2",
                                                       links.trial_path("20260101T000000Z-aaaaaa", "s", 2))
