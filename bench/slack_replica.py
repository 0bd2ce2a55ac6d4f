"""Benchmark the Slack replica over keep-alive loopback HTTP.

Runs the Ancha server (``ancha.server.app.create_app()`` under uvicorn) in a child
process, builds one environment with a 100-message and a 10,000-message channel, and
measures chat.postMessage and conversations.history (limit=100) on 1 and 8 keep-alive
connections. Prints a markdown table with the targets:

- chat.postMessage >= 2,000 req/s on one connection;
- conversations.history on 10,000 messages within 1.5x of history on 100 messages.

Usage: .venv/bin/python bench/slack_replica.py [--requests 4000]
"""

from __future__ import annotations

import argparse
import http.client
import json
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any
from urllib.parse import urlencode

from ancha.server.embedded import free_port

SERVER = (
    "import sys, uvicorn; from ancha.server.app import create_app; "
    "uvicorn.run(create_app(), host='127.0.0.1', port=int(sys.argv[1]), log_level='warning', "
    "access_log=False, lifespan='off')"
)


def wait_until_up(port: int) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("the server did not start")


def scene() -> dict[str, Any]:
    messages = [{"channel": "small", "from": "laura", "text": f"small {i}"} for i in range(100)]
    messages += [{"channel": "large", "from": "laura", "text": f"large {i}"} for i in range(10_000)]
    return {
        "name": "bench-slack",
        "world": {"slack": {
            "users": [{"ref": "laura", "name": "laura"}],
            "channels": [{"ref": ref, "name": ref, "members": ["laura", "slack_bot"]}
                         for ref in ("small", "large", "posts")],
            "messages": messages,
        }},
    }


class Caller:
    """One keep-alive connection that calls Web API methods with a form body."""

    def __init__(self, port: int, prefix: str, token: str) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port)
        self.prefix = prefix
        self.headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/x-www-form-urlencoded"}

    def call(self, method: str, args: dict[str, str]) -> dict[str, Any]:
        self.conn.request("POST", f"{self.prefix}/api/{method}", urlencode(args), self.headers)
        answer = self.conn.getresponse()
        body = answer.read()
        if answer.status != 200:
            raise RuntimeError(f"{method}: HTTP {answer.status} {body[:200]!r}")
        return dict(json.loads(body))


def run(port: int, prefix: str, token: str, method: str, args: dict[str, str], total: int,
        connections: int) -> tuple[float, float]:
    """(requests per second, median latency in ms) over ``connections`` threads."""
    per = total // connections
    latencies: list[float] = []
    lock = threading.Lock()
    callers = [Caller(port, prefix, token) for _ in range(connections)]
    for caller in callers:  # open the connections before timing
        caller.call("auth.test", {})

    def work(caller: Caller) -> None:
        mine: list[float] = []
        for _ in range(per):
            t = time.perf_counter()
            answer = caller.call(method, args)
            mine.append(time.perf_counter() - t)
            if not answer.get("ok"):
                raise RuntimeError(f"{method}: {answer}")
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=work, args=(c,)) for c in callers]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - start
    return per * connections / elapsed, statistics.median(latencies) * 1000


def wrk_rate(url: str, token: str, method: str, args: dict[str, str], connections: int,
             seconds: int = 5) -> float:
    """Requests/s measured by wrk (a C client: it measures the server, not the client)."""
    script = (f'wrk.method = "POST"\nwrk.body = "{urlencode(args)}"\n'
              'wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"\n'
              f'wrk.headers["Authorization"] = "Bearer {token}"\n')
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as lua:
        lua.write(script)
    out = subprocess.run(["wrk", f"-t{min(connections, 2)}", f"-c{connections}", f"-d{seconds}s", "-s", lua.name,
                          f"{url}/api/{method}"], capture_output=True, text=True, check=True).stdout
    if "Non-2xx" in out:
        raise RuntimeError(f"wrk saw errors: {out}")
    return float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]


def in_process(total: int) -> list[tuple[str, float]]:
    """The replica alone (``Environment.dispatch``, trace included): what the HTTP stack adds is the rest."""
    from ancha.scene.model import Scene
    from ancha.world.environment import Environment
    from ancha.world.kernel.tool import ToolRequest

    env = Environment("bench", Scene.model_validate(scene()), 1)
    token = env.tools["slack"].credentials()["token"]
    headers = {"authorization": f"Bearer {token}", "content-type": "application/x-www-form-urlencoded"}
    rows = []
    for label, method, args in (
        ("chat.postMessage", "chat.postMessage", {"channel": env.ref_id("posts"), "text": "benchmark message"}),
        ("conversations.history limit=100 @100 msgs", "conversations.history",
         {"channel": env.ref_id("small"), "limit": "100"}),
        ("conversations.history limit=100 @10,000 msgs", "conversations.history",
         {"channel": env.ref_id("large"), "limit": "100"}),
    ):
        body = urlencode(args).encode()
        start = time.perf_counter()
        for _ in range(total):
            answer = env.dispatch("slack", ToolRequest("POST", f"/api/{method}", headers=headers, body=body))
            if not answer.worked:
                raise RuntimeError(answer.body[:200])
        rows.append((label, total / (time.perf_counter() - start)))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=4000, help="requests per measurement")
    options = parser.parse_args()
    port = free_port()
    server = subprocess.Popen([sys.executable, "-c", SERVER, str(port)])
    try:
        wait_until_up(port)
        conn = http.client.HTTPConnection("127.0.0.1", port)
        conn.request("POST", "/envs", json.dumps({"scene": scene(), "trial": 1}),
                     {"Content-Type": "application/json"})
        answer = conn.getresponse()
        context = json.loads(answer.read())
        if answer.status != 201:
            raise RuntimeError(f"POST /envs: {answer.status} {context}")
        tool = context["tools"]["slack"]
        prefix = tool["url"].split(f":{port}", 1)[1]
        token = tool["token"]
        caller = Caller(port, prefix, token)
        channels = {c["name"]: c["id"] for c in caller.call("conversations.list", {})["channels"]}

        n = options.requests
        rows: list[tuple[str, int, float, float]] = []
        rate, p50 = run(port, prefix, token, "api.test", {}, n, 1)
        rows.append(("api.test (no-op: the HTTP stack's ceiling)", 1, rate, p50))
        for connections in (1, 8):
            rate, p50 = run(port, prefix, token, "chat.postMessage",
                            {"channel": channels["posts"], "text": "benchmark message"}, n, connections)
            rows.append(("chat.postMessage", connections, rate, p50))
        history: dict[tuple[str, int], float] = {}
        for name in ("small", "large"):
            for connections in (1, 8):
                rate, p50 = run(port, prefix, token, "conversations.history",
                                {"channel": channels[name], "limit": "100"}, n // 2, connections)
                history[(name, connections)] = rate
                label = f"conversations.history limit=100 @{'100' if name == 'small' else '10,000'} msgs"
                rows.append((label, connections, rate, p50))

        post_rate = rows[1][2]
        ratio = history[("small", 1)] / history[("large", 1)]
        wrk_rows: list[tuple[str, int, float]] = []
        if shutil.which("wrk"):
            url = f"http://127.0.0.1:{port}{prefix}"
            for connections in (1, 8):
                wrk_rows.append(("chat.postMessage", connections, wrk_rate(
                    url, token, "chat.postMessage", {"channel": channels["posts"], "text": "benchmark"}, connections)))
            for name in ("small", "large"):
                label = f"conversations.history limit=100 @{'100' if name == 'small' else '10,000'} msgs"
                wrk_rows.append((label, 1, wrk_rate(url, token, "conversations.history",
                                                    {"channel": channels[name], "limit": "100"}, 1)))
            post_rate = wrk_rows[0][2]
            ratio = wrk_rows[2][2] / wrk_rows[3][2]
        if wrk_rows:
            print("| benchmark (client: wrk) | connections | req/s |")
            print("|---|---:|---:|")
            for label, connections, rate in wrk_rows:
                print(f"| {label} | {connections} | {rate:,.0f} |")
            print()
        print("| benchmark (client: Python http.client, which costs as much CPU as the server) | connections | req/s | p50 ms |")
        print("|---|---:|---:|---:|")
        for label, connections, rate, p50 in rows:
            print(f"| {label} | {connections} | {rate:,.0f} | {p50:.2f} |")
        print()
        print("| in-process (Environment.dispatch, no HTTP) | ops/s |")
        print("|---|---:|")
        for label, rate in in_process(n):
            print(f"| {label} | {rate:,.0f} |")
        print()
        print("| target | measured | met |")
        print("|---|---:|---|")
        client = "wrk" if wrk_rows else "http.client; install wrk to measure the server alone"
        print(f"| chat.postMessage >= 2,000 req/s on 1 connection ({client}) | {post_rate:,.0f} req/s | "
              f"{'yes' if post_rate >= 2000 else 'NO'} |")
        print(f"| history@10k within 1.5x of history@100 (1 connection) | {ratio:.2f}x | "
              f"{'yes' if ratio <= 1.5 else 'NO'} |")
        return 0 if post_rate >= 2000 and ratio <= 1.5 else 1
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    raise SystemExit(main())
