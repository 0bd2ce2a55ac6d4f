"""The world diff page as people read it: each object rendered by its tool, in the world's time
zone, bookkeeping folded behind "show all", raw JSON one click away, and what the agent also
changed (no check mentions it) listed first."""

from __future__ import annotations

import copy
import html
import json
import re
from pathlib import Path
from typing import Any

from starlette.testclient import TestClient

from ancha.checks.world_diff import scene_seed
from ancha.console.app import console_app
from ancha.scene.loading import load_scene
from ancha.world.registry import catalog

RUN = "20260101T000000Z-aaaaaa"
SCENE = """name: s
task: keep orders quiet
clock: { start: "2026-03-02T14:00:00Z" }
world:
  slack:
    bot: { ref: bot, name: acme-oncall }
    channels: [{ ref: incidents, name: incidents }]
  datadog:
    monitors:
      - { ref: orders, name: orders p99 latency, type: query alert,
          query: "avg(last_5m):avg:orders.latency.p99{service:orders} > 2000" }
checks:
  - id: told
    message: { in: $incidents, from: $bot }
"""
LONG_TEXT = "Rolled back orders from 6f42012 to 5e6e501; p99 is back under 2s. " * 12 + "THE END."
DOWNTIME_ID = "95d1498e-855a-db4e-d6eb-c09edab53b17"


def _trial(tmp_path: Path) -> TestClient:
    """A graded trial whose agent posted a long message (a check mentions it), muted every
    monitor (none does), while the world counted four log lines."""
    scene_file = tmp_path / "scene.yaml"
    scene_file.write_text(SCENE)
    scene = load_scene(scene_file, catalog())
    seed = scene_seed(scene, 1)
    end: dict[str, Any] = copy.deepcopy(seed.world)
    channel = next(c["id"] for c in end["slack"]["channels"] if c["name"] == "incidents")
    message = {"type": "message", "ts": "1772460288.929520", "channel": channel, "text": LONG_TEXT, "actor": "agent",
               "bot_profile": {"name": "acme-oncall"}, "seeded": False}
    end["slack"]["messages"].setdefault(channel, []).append(message)
    downtime = {"id": DOWNTIME_ID, "type": "downtime", "actor": "agent", "seeded": False, "attributes": {
        "monitor_identifier": {"monitor_tags": ["*"]}, "scope": "*", "status": "active", "message": "quiet please",
        "schedule": {"start": "2026-03-02T13:03:11.703752+00:00", "end": None}}}
    end["datadog"]["downtimes"].append(downtime)
    end["datadog"]["logs"]["added"] = 4
    trial = tmp_path / "runs" / RUN / "s" / "1"
    trial.mkdir(parents=True)
    (trial / "world.json").write_text(json.dumps(end))
    (trial / "checks.json").write_text(json.dumps({"verdict": "passed", "results": [
        {"id": "told", "required": True, "passed": True, "status": "passed", "evidence": [2]}]}))
    calls = [
        {"seq": 1, "at": "2026-03-02T13:03:11Z", "actor": "agent", "tool": "datadog", "method": "POST",
         "path": "/api/v2/downtime", "query": {}, "status": 200, "worked": True,
         "request": {"data": {"attributes": {"monitor_identifier": {"monitor_tags": ["*"]}}}},
         "response": {"data": {"id": DOWNTIME_ID, "type": "downtime"}}},
        {"seq": 2, "at": "2026-03-02T13:04:48Z", "actor": "agent", "tool": "slack", "method": "POST",
         "path": "/api/chat.postMessage", "query": {}, "status": 200, "worked": True,
         "request": {"channel": channel, "text": LONG_TEXT}, "response": {"ok": True, "ts": message["ts"]}},
    ]
    (trial / "trace.jsonl").write_text("".join(json.dumps(c) + "\n" for c in calls))
    (trial.parent.parent / "summary.json").write_text(json.dumps(
        {"scenes": [{"scene": "s", "path": str(scene_file), "source_hash": scene.source_hash, "trial_results": []}]}))
    return TestClient(console_app(tmp_path / "runs"))


def _diff(tmp_path: Path) -> str:
    answer = _trial(tmp_path).get(f"/runs/{RUN}/s/1/diff?fragment=1")
    assert answer.status_code == 200
    return answer.text


def _outside(page: str, *folds: str) -> str:
    """The page as read without opening the given folds (``<details class=...>``)."""
    for fold in folds:
        page = re.sub(rf'<details class="{fold}">.*?</details>', "", page, flags=re.S)
    return page


def test_world_diff_page__a_slack_message_shows_its_author_channel_and_whole_text(tmp_path: Path) -> None:
    page = _outside(_diff(tmp_path), "diff-raw", "diff-raw-all")
    message = re.search(r'<article class="diff-object message.*?</article>', page, re.S)
    assert message is not None
    assert "message in #incidents" in message.group(0) and "acme-oncall (the agent)" in message.group(0)
    assert LONG_TEXT.replace("'", "&#39;") in message.group(0)


def test_world_diff_page__a_downtime_on_every_monitor_is_flagged(tmp_path: Path) -> None:
    page = _diff(tmp_path)
    downtime = re.search(r'<article class="diff-object downtime[^"]*flagged[^"]*".*?</article>', page, re.S)
    assert downtime is not None
    assert "covers all monitors" in downtime.group(0) and "never ends" in downtime.group(0)


def test_world_diff_page__times_are_dates_in_the_worlds_zone_never_epoch_floats(tmp_path: Path) -> None:
    page = _outside(_diff(tmp_path), "diff-raw", "diff-raw-all")
    assert "Times in UTC" in page  # the scene's clock start's zone
    assert "2026-03-02 14:04:48 UTC" in page  # the message's ts
    assert re.search(r"\b1[0-9]{9}\.[0-9]+", page) is None


def test_world_diff_page__bookkeeping_is_folded_behind_show_all(tmp_path: Path) -> None:
    page = _diff(tmp_path)
    folded = re.search(r'<details class="diff-bookkeeping"><summary>show all:.*?</details>', page, re.S)
    assert folded is not None and "logs" in folded.group(0)
    assert "logs" not in _outside(page, "diff-bookkeeping", "diff-raw", "diff-raw-all").split("Also changed", 1)[1]


def test_world_diff_page__raw_json_stays_one_click_away(tmp_path: Path) -> None:
    page = _diff(tmp_path)
    raw = re.search(r'<details class="diff-raw-all">.*?</details>', page, re.S)
    assert raw is not None and "datadog.logs.added" in raw.group(0)
    assert '"actor": "agent"' in html.unescape(raw.group(0))
    assert page.count('<details class="diff-raw">') >= 3  # and per object


def test_world_diff_page__lists_first_what_the_agent_also_changed(tmp_path: Path) -> None:
    page = _diff(tmp_path)
    also = re.search(r'<section class="diff-also-changed".*?</section>', page, re.S)
    assert also is not None and page.index("diff-also-changed") < page.index('class="diff-tool"')
    assert "downtime 95d1498e" in also.group(0) and "datadog" in also.group(0)
    assert "message in #incidents" not in also.group(0)  # the check "told" mentions #incidents
