"""Memory benchmark: how the server grows with calls, and what building trials costs.

    .venv/bin/python bench/memory.py [--calls 5000] [--messages 200000] [--trials 8]

1. Calls. An Ancha server runs in a child process with one Slack environment (a
   channel of 1,000 seeded messages); this process sends ``conversations.history
   (limit=100)`` over one keep-alive connection and reads the server's RSS
   (``/proc/PID/status``) after a warm-up and after every 1,000 calls. Targets:
   <= 8 MB per 1,000 calls, <= 40 MB over 5,000.
2. Trials. A child process loads a scene whose ``messages_file`` holds ``--messages``
   lines, then builds ``--trials`` trials of it (the server's ``Registry.create``),
   first one after another, each torn down before the next (``parallel: 1``), then all
   alive at once (``parallel: N``). It reports the time and the RSS of each step.
   Targets for building trials from a loaded 200,000-message scene: <= 5 s and <= 300 MB.

Prints markdown tables with each figure and its target. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import http.client
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

sys.path.insert(0, str(Path(__file__).parent))

from harness import seeded_scene  # noqa: E402
from slack_replica import SERVER, wait_until_up  # noqa: E402

from ancha.server.embedded import free_port  # noqa: E402

PER_1000_TARGET_MB = 8.0
TOTAL_TARGET_MB = 40.0
BUILD_TARGET_S = 5.0
BUILD_TARGET_MB = 300.0


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


def call_scene() -> dict[str, Any]:
    return {
        "name": "bench-memory",
        "world": {"slack": {
            "users": [{"ref": "laura", "name": "laura"}],
            "channels": [{"ref": "general", "name": "general", "members": ["laura", "slack_bot"]}],
            "messages": [{"channel": "general", "from": "laura", "text": f"message {i} " + "x" * 200}
                         for i in range(1000)],
        }},
    }


def bench_calls(calls: int) -> list[tuple[int, float, float]]:
    """(calls made, RSS MB, growth MB since the warm-up) after the warm-up and every 1,000 calls."""
    port = free_port("127.0.0.1")
    server = subprocess.Popen([sys.executable, "-c", SERVER, str(port)])
    try:
        wait_until_up(port)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("POST", "/envs", body=json.dumps({"scene": call_scene(), "trial": 1}),
                     headers={"content-type": "application/json"})
        answer = conn.getresponse()
        context = json.loads(answer.read())
        assert answer.status == 201, context
        slack = context["tools"]["slack"]
        prefix = slack["url"].split(f":{port}", 1)[1]
        headers = {"authorization": f"Bearer {slack['token']}",
                   "content-type": "application/x-www-form-urlencoded"}
        conn.request("POST", f"{prefix}/api/conversations.list", body="", headers=headers)
        channel = json.loads(conn.getresponse().read())["channels"][0]["id"]
        body = urlencode({"channel": channel, "limit": 100})

        def history() -> None:
            conn.request("POST", f"{prefix}/api/conversations.history", body=body, headers=headers)
            reply = conn.getresponse()
            data = reply.read()
            assert reply.status == 200 and len(json.loads(data)["messages"]) == 100, data[:200]

        for _ in range(200):  # warm-up: caches, allocator arenas
            history()
        base = rss_mb(server.pid)
        rows = [(0, base, 0.0)]
        for done in range(1, calls + 1):
            history()
            if done % 1000 == 0 or done == calls:
                now = rss_mb(server.pid)
                rows.append((done, now, now - base))
        conn.close()
        return rows
    finally:
        server.terminate()
        server.wait(timeout=10)


TRIALS = """
import json, sys, time
from pathlib import Path
from ancha.scene.loading import load_scene
from ancha.server.registry import Registry
from ancha.world.tools import catalog

def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024

scene_path, trials = Path(sys.argv[1]), int(sys.argv[2])
steps = []
t = time.perf_counter(); base = rss()
scene = load_scene(scene_path, catalog())
steps.append(("load the scene (once per run)", time.perf_counter() - t, rss() - base))
registry = Registry()
loaded = rss(); t = time.perf_counter(); peak = loaded
for trial in range(1, trials + 1):
    env = registry.create(scene, trial, None)
    peak = max(peak, rss())
    registry.delete(env.id)
steps.append((f"build {trials} trials one after another", time.perf_counter() - t, peak - loaded))
t = time.perf_counter()
alive = [registry.create(scene, trial, None) for trial in range(1, trials + 1)]
steps.append((f"build {trials} trials alive at once", time.perf_counter() - t, rss() - loaded))
print(json.dumps(steps))
"""


def bench_trials(messages: int, trials: int) -> list[tuple[str, float, float]]:
    with tempfile.TemporaryDirectory() as tmp:
        scene = seeded_scene(Path(tmp), messages)
        out = subprocess.run([sys.executable, "-c", TRIALS, str(scene), str(trials)],
                             check=True, capture_output=True, text=True)
    return [(label, seconds, mb) for label, seconds, mb in json.loads(out.stdout)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--messages", type=int, default=200_000)
    parser.add_argument("--trials", type=int, default=8)
    args = parser.parse_args()

    rows = bench_calls(args.calls)
    print(f"### Server RSS over {args.calls:,} conversations.history(limit=100) calls\n")
    print("| calls | RSS (MB) | growth (MB) | growth per 1,000 calls (MB) | target |")
    print("|---:|---:|---:|---:|---|")
    for done, rss, growth in rows:
        per = f"{growth / done * 1000:.1f}" if done else "-"
        print(f"| {done:,} | {rss:.1f} | {growth:.1f} | {per} | <= {PER_1000_TARGET_MB:g} per 1,000 |")
    total = rows[-1][2]
    verdict = "met" if total <= TOTAL_TARGET_MB else "MISSED"
    print(f"\nTotal growth {total:.1f} MB over {rows[-1][0]:,} calls (target <= {TOTAL_TARGET_MB:g} MB): {verdict}\n")

    steps = bench_trials(args.messages, args.trials)
    print(f"### Building trials of a {args.messages:,}-message messages_file scene\n")
    print("| step | time (s) | memory growth (MB) | target |")
    print("|---|---:|---:|---|")
    for label, seconds, mb in steps:
        target = "" if label.startswith("load") else f"<= {BUILD_TARGET_S:g} s, <= {BUILD_TARGET_MB:g} MB"
        print(f"| {label} | {seconds:.1f} | {mb:.0f} | {target} |")


if __name__ == "__main__":
    main()
