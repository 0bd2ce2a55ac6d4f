"""Memory benchmark: how the server grows with calls, and what building trials costs.

    .venv/bin/python bench/memory.py [--calls 5000] [--messages 200000] [--trials 8]

1. Calls. An Ancha server runs in a child process with one Slack environment (a
   channel of 1,000 seeded messages); this process sends ``conversations.history
   (limit=100)`` over one keep-alive connection and reads the server's RSS
   (``/proc/PID/status``) after a warm-up and after every 1,000 calls. Targets:
   <= 8 MB per 1,000 calls, <= 40 MB over 5,000.
2. Trials. ``ancha run`` (embedded server, ``parallel: 1``) runs ``--trials`` trials of a
   scene whose ``messages_file`` holds ``--messages`` lines, with an agent that lists the
   channels, reads a page of history and posts; every trial writes its ``world.json``
   (the whole history). It reports the run's wall time and peak RSS, the trials' own
   times from ``summary.json``, and, from a separate process, loading the scene alone.
   Targets for 200,000 messages and 8 trials: <= 5 s and <= 300 MB.

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


READER = """
import json, os, urllib.request
api = os.environ["ANCHA_SLACK_URL"] + "/api/"
headers = {"authorization": "Bearer " + os.environ["ANCHA_SLACK_TOKEN"]}
def call(method, **args):
    request = urllib.request.Request(api + method, data=json.dumps(args).encode(),
                                     headers={**headers, "content-type": "application/json"})
    return json.load(urllib.request.urlopen(request))
channel = call("conversations.list")["channels"][0]["id"]
page = call("conversations.history", channel=channel, limit=100)
call("chat.postMessage", channel=channel, text="read %d messages" % len(page["messages"]))
"""

LOAD = """
import json, resource, sys, time
from pathlib import Path
from ancha.scene.loading import load_scene
from ancha.world.registry import catalog
t = time.perf_counter()
load_scene(Path(sys.argv[1]), catalog())
print(json.dumps([time.perf_counter() - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024]))
"""


def bench_trials(messages: int, trials: int) -> list[tuple[str, float, float]]:
    """``ancha run`` of a ``messages``-line scene for ``trials`` trials (parallel 1) with an
    agent that reads a history page and posts: (step, wall seconds, peak RSS MB of the run)."""
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        (project / "scenes" / "seeded").mkdir(parents=True)
        scene = seeded_scene(project / "scenes" / "seeded", messages)
        (project / "reader.py").write_text(READER)
        (project / "ancha.yaml").write_text(
            f"agent:\n  command: {sys.executable} reader.py\nscenes: [scenes/*/scene.yaml]\n"
            f"trials: {trials}\nparallel: 1\nmin_pass_rate: 1\n")
        load_s, load_mb = json.loads(subprocess.run([sys.executable, "-c", LOAD, str(scene)], check=True,
                                                    capture_output=True, text=True).stdout)
        ancha = str(Path(sys.executable).with_name("ancha"))
        code = ("import resource, subprocess, sys, time; t = time.perf_counter(); "
                "r = subprocess.run(sys.argv[1:], capture_output=True); "
                "print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, "
                "r.returncode)")
        out = subprocess.run([sys.executable, "-c", code, ancha, "run", "--no-progress"], cwd=project, check=True,
                             capture_output=True, text=True).stdout.split()
        run_s, run_mb, status = float(out[0]), float(out[1]), int(out[2])
        summary = json.loads((project / ".ancha" / "runs" / "latest" / "summary.json").read_text())
        outcomes = summary["scenes"][0]["trial_results"]
        passed = sum(1 for o in outcomes if o["verdict"] == "passed")
        if status != 0 or passed != trials:
            raise SystemExit(f"ancha run exited {status}, {passed}/{trials} trials passed")
        world = sum(o["timings"]["world_s"] for o in outcomes)
        total = sum(o["timings"]["total_s"] for o in outcomes)
    return [("load the scene (alone, once per run)", load_s, load_mb),
            (f"build {trials} worlds (in the run)", world, float("nan")),
            (f"{trials} trials, end to end: world, agent, grading, world.json", total, float("nan")),
            (f"ancha run: load + {trials} trials, {trials} world.json files", run_s, run_mb)]


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
    print(f"### A {args.messages:,}-message messages_file scene, {args.trials} trials\n")
    print("| step | time (s) | peak RSS (MB) | target |")
    print("|---|---:|---:|---|")
    for label, seconds, mb in steps:
        target = f"<= {BUILD_TARGET_S:g} s, <= {BUILD_TARGET_MB:g} MB" if label.startswith("ancha run") else ""
        print(f"| {label} | {seconds:.1f} | {'-' if mb != mb else f'{mb:.0f}'} | {target} |")
    _, run_s, run_mb = steps[-1]
    verdict = "met" if run_s <= BUILD_TARGET_S and run_mb <= BUILD_TARGET_MB else "MISSED"
    print(f"\nancha run {run_s:.1f} s and {run_mb:.0f} MB (targets <= {BUILD_TARGET_S:g} s, "
          f"<= {BUILD_TARGET_MB:g} MB): {verdict}")


if __name__ == "__main__":
    main()
