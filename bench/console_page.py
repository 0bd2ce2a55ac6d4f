"""How soon a trial page of 10,000 calls paints, served by a real ``ancha ui``, in Chromium.

    .venv/bin/python bench/console_page.py [--calls 10000] [--loads 5]

Builds a failed trial as ``ancha run`` leaves one: an embedded Ancha server, a Slack world
and an httpx agent making ``--calls`` API calls (posts, history reads, every 500th a
``chat.delete`` that fails, so the ``no_deletes`` check fails); the trial folder gets the
trace, records, world and the server's ``/checks`` answer, and the run a ``summary.json``
naming the scene file. Then ``ancha ui`` serves the runs folder and Debian's Chromium
(``/usr/bin/chromium``, Playwright) loads the trial page ``--loads`` times, each in a fresh
browser context (no cached scripts or styles). Per load, from the browser's own
Performance API: first paint and first contentful paint (``getEntriesByType('paint')``),
DOMContentLoaded and load (Navigation Timing, from navigation start), and the server's
response time for the HTML (request start to the response's last byte). The first load
reads the trial from disk (the console's cache is cold); the table gives it apart, and the
p50 over all ``--loads``. Target: first paint ≤ 1 s.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from ancha.server.embedded import EmbeddedServer, free_port

CHROMIUM = "/usr/bin/chromium"
TARGET_MS = 1000.0
RUN_ID = "20260302T090000Z-bench1"
SCENE_YAML = """\
name: busy
task: Keep #support tidy.
world:
  slack:
    users: [{ref: laura, name: laura}]
    channels: [{ref: support, name: support, members: [$slack_bot, $laura]}]
    messages: [{ref: q, channel: $support, from: $laura, text: Where is the export?}]
checks:
  - id: answered
    state: {slack.message: {channel: $support, from: $slack_bot, in_thread_of: $q}}
  - id: posted
    trace: {called: ["POST /api/chat.postMessage"]}
  - id: no_deletes
    trace: {not_called: ["POST /api/chat.delete"]}
"""
TIMINGS = """() => {
  const nav = performance.getEntriesByType('navigation')[0];
  const paint = Object.fromEntries(performance.getEntriesByType('paint').map(p => [p.name, p.startTime]));
  return {fp: paint['first-paint'], fcp: paint['first-contentful-paint'],
          dcl: nav.domContentLoadedEventEnd - nav.startTime, load: nav.loadEventEnd - nav.startTime,
          server: nav.responseEnd - nav.requestStart, bytes: nav.encodedBodySize};
}"""


def build_trial(project: Path, calls: int) -> str:
    """A graded trial of ``calls`` calls in ``project/.ancha/runs``; returns its console path."""
    scene_file = project / "scenes" / "busy" / "scene.yaml"
    scene_file.parent.mkdir(parents=True)
    scene_file.write_text(SCENE_YAML)
    folder = project / ".ancha" / "runs" / RUN_ID / "busy" / "1"
    with EmbeddedServer() as server, httpx.Client(base_url=server.url, timeout=60) as control:
        made = control.post("/envs", json={"scene": SCENE_YAML, "trial": 1})
        made.raise_for_status()
        context = made.json()
        slack = context["tools"]["slack"]
        with httpx.Client(base_url=slack["url"] + "/api/",
                          headers={"authorization": f"Bearer {slack['token']}"}) as agent:
            channel = agent.post("conversations.list").json()["channels"][0]["id"]
            for i in range(calls - 1):
                if i % 500 == 499:
                    agent.post("chat.delete", json={"channel": channel, "ts": "1.000"})  # message_not_found
                elif i % 3 == 0:
                    agent.post("conversations.history", json={"channel": channel, "limit": 20})
                else:
                    agent.post("chat.postMessage", json={"channel": channel, "text": f"update {i}"})
        env = f"/envs/{context['env_id']}"
        folder.mkdir(parents=True)
        for name, what in (("trace.jsonl", "/trace"), ("records.jsonl", "/records"), ("world.json", "/state")):
            (folder / name).write_bytes(control.get(env + what).content)
        results = control.post(env + "/checks").json()["results"]
    verdict = "passed" if all(r["passed"] for r in results) else "failed"
    (folder / "checks.json").write_text(json.dumps({"scene": "busy", "trial": 1, "verdict": verdict, "status": "done",
                                                    "reason": None, "results": results}))
    (folder / "agent.log").write_text("busy agent\n")
    (folder.parents[1] / "summary.json").write_text(json.dumps({"run_id": RUN_ID, "scenes": [{
        "scene": "busy", "path": str(scene_file), "trials": 1, "passed": int(verdict == "passed"),
        "failed": int(verdict == "failed"), "invalid": 0, "pass_rate": float(verdict == "passed"), "k": 1,
        "pass_hat_k": verdict == "passed", "trial_results": [{"trial": 1, "verdict": verdict}]}]}))
    return f"/runs/{RUN_ID}/busy/1"


def start_ui(project: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port("127.0.0.1")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    process = subprocess.Popen([sys.executable, "-m", "ancha.cli", "ui", "--no-open", "--port", str(port)],
                               cwd=project, env=env, stdout=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/ui"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if httpx.get(url + "/", timeout=2).status_code == 200:
                return process, url
        except httpx.HTTPError:
            time.sleep(0.05)  # the port is not open yet
    process.terminate()
    raise SystemExit(f"ancha ui did not answer on {url} within 30 s")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=10_000)
    parser.add_argument("--loads", type=int, default=5)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        started = time.perf_counter()
        path = build_trial(project, args.calls)
        built = time.perf_counter() - started
        process, url = start_ui(project)
        loads = []
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
                for _ in range(args.loads):
                    context = browser.new_context(viewport={"width": 1440, "height": 900})
                    page = context.new_page()
                    page.goto(url + path, wait_until="load")
                    page.wait_for_function("() => performance.getEntriesByType('paint').length >= 2")
                    loads.append(page.evaluate(TIMINGS))
                    print(f"load {len(loads)}: {loads[-1]}", file=sys.stderr)
                    context.close()
                browser.close()
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:  # still rendering a page on its thread pool
                process.kill()
                process.wait()
    names = {"fp": "first paint", "fcp": "first contentful paint", "dcl": "DOMContentLoaded", "load": "load",
             "server": "server response (HTML)"}
    print(f"trial of {args.calls:,} calls built in {built:.1f} s; `ancha ui`, Chromium, {args.loads} loads, "
          f"each in a fresh context; HTML {loads[0]['bytes'] / 1024:.0f} KB\n")
    print("| measure | first load (cold cache), ms | p50 of all loads, ms | max, ms | target |")
    print("|---|---:|---:|---:|---|")
    for key, name in names.items():
        values = [load[key] for load in loads]
        target = f"≤ {TARGET_MS:.0f} ms: {'met' if statistics.median(values) <= TARGET_MS else 'MISSED'}" \
            if key == "fp" else ""
        print(f"| {name} | {values[0]:.0f} | {statistics.median(values):.0f} | {max(values):.0f} | {target} |")


if __name__ == "__main__":
    main()
