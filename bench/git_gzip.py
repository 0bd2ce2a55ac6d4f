"""Benchmark a gzip bomb against the GitHub replica's git smart HTTP.

An ``ancha serve`` runs in a child process with two environments of one GitHub scene.
Environment A gets a ``git-receive-pack`` body with ``Content-Encoding: gzip`` that
inflates to 512 MiB of zeros (521,844 bytes, as in issue 26) while this process calls
``GET /rate_limit`` (which does not count against the rate limit) on environment B over
one keep-alive connection, again and again. It reports:

- A's answer (the body limit is 100 MiB: past it, 413 ``Request body too large``);
- the server's peak RSS (``VmHWM``) before and under the attack, and its RSS after;
- the longest wait B saw while the attack ran (target <= 100 ms), and B's median; and,
  for comparison, B's longest wait over as long again with no attack (the machine's noise).

Prints a markdown table. Usage: .venv/bin/python bench/git_gzip.py [--inflated-mib 512] [--rounds 3]
"""

from __future__ import annotations

import argparse
import http.client
import json
import secrets
import statistics
import subprocess
import sys
import threading
import time
import zlib
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from slack_replica import wait_until_up  # noqa: E402

from ancha.server.embedded import free_port  # noqa: E402

STALL_TARGET_S = 0.100


def status_kb(pid: int, field: str) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} for process {pid}")


def bomb(inflated_mib: int) -> bytes:
    """gzip (level 6) of ``inflated_mib`` MiB of zeros, made a MiB at a time."""
    packer = zlib.compressobj(6, zlib.DEFLATED, 31)
    chunk = bytes(1 << 20)
    return b"".join([packer.compress(chunk) for _ in range(inflated_mib)] + [packer.flush()])


def scene() -> dict[str, Any]:
    return {"name": "bench-git-gzip", "clock": {"start": "2026-03-02T09:00:00Z"},
            "world": {"github": {"orgs": [{"login": "acme", "members": ["github_agent"]}],
                                 "repos": [{"ref": "orders", "name": "acme/orders", "private": True,
                                            "files": {"README.md": "# orders\n"},
                                            "permissions": {"github_agent": "write"}}]}}}


def create_env(port: int, key: str, trial: int, world: dict[str, Any] | None = None) -> tuple[str, str]:
    """A trial of ``world`` (a scene; this bench's by default) on the server at ``port``:
    (path prefix of its GitHub tool, its token)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.request("POST", "/envs", json.dumps({"scene": world or scene(), "trial": trial}),
                 {"Content-Type": "application/json", "Authorization": f"Bearer {key}"})
    answer = conn.getresponse()
    context = json.loads(answer.read())
    if answer.status != 201:
        raise RuntimeError(f"POST /envs: {answer.status} {context}")
    tool = context["tools"]["github"]
    return tool["url"].split(f":{port}", 1)[1], tool["token"]


def attack_once(port: int, key: str, body: bytes, trial: int) -> dict[str, Any]:
    target, target_token = create_env(port, key, 2 * trial + 2)
    other, other_token = create_env(port, key, 2 * trial + 3)
    waits: list[float] = []
    done = threading.Event()
    answer: dict[str, Any] = {}

    def attack() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        started = time.perf_counter()
        conn.request("POST", f"{target}/acme/orders.git/git-receive-pack", body,
                     {"Content-Type": "application/x-git-receive-pack-request", "Content-Encoding": "gzip",
                      "Authorization": f"token {target_token}"})
        reply = conn.getresponse()
        answer.update(status=reply.status, body=reply.read()[:200], seconds=time.perf_counter() - started)
        done.set()

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    headers = {"Authorization": f"token {other_token}"}

    def ping() -> float:
        started = time.perf_counter()
        conn.request("GET", f"{other}/rate_limit", headers=headers)
        reply = conn.getresponse()
        reply.read()
        assert reply.status == 200, reply.status
        return time.perf_counter() - started

    for _ in range(50):
        ping()
    thread = threading.Thread(target=attack)
    thread.start()
    while not done.is_set():
        waits.append(ping())
    thread.join()
    # The same calls for as long again with no attack: the machine's own noise, for comparison.
    quiet: list[float] = []
    until = time.perf_counter() + answer["seconds"]
    while time.perf_counter() < until:
        quiet.append(ping())
    return {**answer, "longest": max(waits), "median": statistics.median(waits), "pings": len(waits),
            "quiet": max(quiet)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--inflated-mib", type=int, default=512)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    body = bomb(args.inflated_mib)
    port, key = free_port("127.0.0.1"), secrets.token_hex(16)
    ancha = str(Path(sys.executable).with_name("ancha"))
    server = subprocess.Popen([ancha, "serve", "--port", str(port), "--key", key], stdout=subprocess.DEVNULL)
    try:
        wait_until_up(port)
        create_env(port, key, 1)
        before_peak = status_kb(server.pid, "VmHWM") / 1024
        rows = []
        for trial in range(1, args.rounds + 1):
            result = attack_once(port, key, body, trial)
            time.sleep(0.5)  # what the server holds once the attack is over
            rows.append((result, status_kb(server.pid, "VmHWM") / 1024, status_kb(server.pid, "VmRSS") / 1024))
    finally:
        server.terminate()
        server.wait(timeout=10)
    print(f"### gzip bomb: {len(body):,} bytes inflating to {args.inflated_mib} MiB, against `ancha serve`\n")
    print(f"Server peak RSS before any attack: {before_peak:.0f} MB\n")
    print("| round | answer | attack time (s) | peak RSS (MB) | RSS after (MB) | other env: longest wait (ms) "
          "| median (ms) | calls | no attack: longest wait (ms) | target |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for n, (result, peak, after) in enumerate(rows, 1):
        print(f"| {n} | {result['status']} | {result['seconds']:.2f} | {peak:.0f} | {after:.0f} | "
              f"{result['longest'] * 1000:.0f} | {result['median'] * 1000:.1f} | {result['pings']} | "
              f"{result['quiet'] * 1000:.0f} | <= {STALL_TARGET_S * 1000:.0f} ms |")
    worst = max(result["longest"] for result, _, _ in rows)
    print(f"\nLongest wait of another environment: {worst * 1000:.0f} ms (target <= {STALL_TARGET_S * 1000:.0f} ms): "
          f"{'met' if worst <= STALL_TARGET_S else 'MISSED'}")


if __name__ == "__main__":
    main()
