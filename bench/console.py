"""The console's trial page for a trial with 10,000 calls, loaded in headless Chromium.

    .venv/bin/python bench/console.py [--calls 10000] [--rounds 5] [--screenshot PATH]

Builds a real trial: an embedded Ancha server, a Slack world, and an httpx agent making
``--calls`` API calls (posts, history reads, a few failing calls); the trial folder is
written as the runner writes it (trace, records, world, checks from ``/checks``). Then
``ancha ui``'s app serves it on a loopback port and Playwright drives Debian's Chromium
(``/usr/bin/chromium``): the page's load time (navigation start to the load event, from
the browser's own Navigation Timing) for the trial page, the same page focused on a call
(an evidence link's target) and the run list; the first load (the console parses the
trace) and warm loads. The target is ≤ 1 s. No peer exists, so no ratio.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
import uvicorn

from ancha.console.app import console_app
from ancha.console.links import PREFIX
from ancha.server.app import create_app
from ancha.server.embedded import EmbeddedServer, free_port

SCENE = {
    "name": "busy",
    "task": "Keep #support tidy.",
    "world": {"slack": {
        "users": [{"ref": "laura", "name": "laura"}],
        "channels": [{"ref": "support", "name": "support", "members": ["slack_bot", "laura"]}],
        "messages": [{"ref": "q", "channel": "support", "from": "laura", "text": "Where is the export?"}],
    }},
    "checks": [
        {"id": "answered", "state": {"slack.message": {"channel": "support", "from": "slack_bot",
                                                       "in_thread_of": "q"}}},
        {"id": "posted", "trace": {"called": ["POST /api/chat.postMessage"]}},
        {"id": "no_deletes", "trace": {"not_called": ["POST /api/chat.delete"]}},
    ],
}


def build_trial(calls: int, folder: Path) -> None:
    with EmbeddedServer() as server, httpx.Client(base_url=server.url, timeout=60) as control:
        context = control.post("/envs", json={"scene": SCENE, "trial": 1}).json()
        slack = context["tools"]["slack"]
        agent = httpx.Client(base_url=slack["url"] + "/api/", headers={"authorization": f"Bearer {slack['token']}"})
        channel = agent.post("conversations.list").json()["channels"][0]["id"]
        for i in range(calls - 1):
            if i % 500 == 499:
                agent.post("chat.delete", json={"channel": channel, "ts": "1.000"})  # fails: message_not_found
            elif i % 3 == 0:
                agent.post("conversations.history", json={"channel": channel, "limit": 20})
            else:
                agent.post("chat.postMessage", json={"channel": channel, "text": f"update {i}"})
        env = f"/envs/{context['env_id']}"
        folder.mkdir(parents=True)
        (folder / "trace.jsonl").write_bytes(control.get(env + "/trace").content)
        (folder / "records.jsonl").write_bytes(control.get(env + "/records").content)
        (folder / "world.json").write_bytes(control.get(env + "/state").content)
        results = control.post(env + "/checks").json()["results"]
        verdict = "passed" if all(r["passed"] for r in results) else "failed"
        (folder / "checks.json").write_text(json.dumps({"scene": "busy", "trial": 1, "verdict": verdict,
                                                        "status": "done", "reason": None, "results": results}))
        (folder / "agent.log").write_text("busy agent\n")


def serve(runs: Path) -> tuple[str, uvicorn.Server]:
    port = free_port("127.0.0.1")
    app = create_app(mounts={PREFIX: console_app(runs)})
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off"))
    threading.Thread(target=server.run, daemon=True).start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    return f"http://127.0.0.1:{port}{PREFIX}", server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--screenshot", type=Path, default=None, help="Save the focused trial page here (PNG).")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        runs = Path(tmp) / "runs"
        started = time.perf_counter()
        build_trial(args.calls, runs / "20260101T000000Z-bench0" / "busy" / "1")
        built = time.perf_counter() - started
        (runs / "20260101T000000Z-bench0" / "summary.json").write_text(json.dumps({"scenes": [
            {"scene": "busy", "trials": 1, "passed": 1, "failed": 0, "invalid": 0, "pass_rate": 1.0, "k": 1,
             "pass_hat_k": True, "trial_results": [{"trial": 1, "verdict": "passed"}]}]}))
        base, server = serve(runs)
        trial = f"{base}/runs/20260101T000000Z-bench0/busy/1"
        pages = {"trial page": trial, "trial page, focused on call 9000": f"{trial}?focus={min(9000, args.calls)}",
                 "runs list": base + "/"}
        rows = []
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            for name, url in pages.items():
                times = []
                for _ in range(args.rounds + 1):
                    page.goto(url, wait_until="load")
                    times.append(page.evaluate(
                        "() => { const n = performance.getEntriesByType('navigation')[0]; return n.loadEventEnd - n.startTime; }"))
                size = len(httpx.get(url).content)
                rows.append((name, times[0], statistics.median(times[1:]), max(times[1:]), size))
            if args.screenshot:
                page.goto(pages["trial page, focused on call 9000"], wait_until="load")
                page.screenshot(path=str(args.screenshot))
            browser.close()
        server.should_exit = True
    print(f"trial of {args.calls:,} calls built in {built:.1f} s; Chromium {sys.platform}, {args.rounds} warm rounds\n")
    print("| page | first load (ms) | warm median (ms) | warm max (ms) | HTML (KB) | target |")
    print("|---|---:|---:|---:|---:|---|")
    for name, first, median, worst, size in rows:
        print(f"| {name} | {first:.0f} | {median:.0f} | {worst:.0f} | {size / 1024:.0f} | ≤ 1000 ms |")


if __name__ == "__main__":
    main()
