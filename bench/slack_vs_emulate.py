"""Benchmark the Slack replica against the peer ``emulate`` (its Slack service), side by side.

The Ancha server (``ancha serve``: one process, hosted as ``ancha run`` hosts it) and
emulate@0.12.2 (bench/emulate_peer.py, Node) each run in a child process; the client is wrk
(a C client, so it measures the servers rather than itself), the same Lua script for both.
Per measure, emulate is started fresh and Ancha gets a fresh environment; then ``--rounds``
rounds of ``--seconds`` each alternate between Ancha and emulate, so both meet the same spells
of load on a shared machine. Rates are the median of the rounds; latencies the median of the
rounds' p50. ``--pin`` pins both servers to core 0 and wrk to core 1 (best on an idle machine).

emulate answers 403 after 5,000 calls per token, so it is seeded with many tokens (all for
its admin user) and the Lua script moves to the next token every 4,000 requests; Ancha's
script carries one token the same way, so the client's work per request is the same.
emulate's seed has no messages: they are posted through its API (spread over other tokens).

Measures (Ancha req/s, emulate req/s, the ratio, the target):

- chat.postMessage on 1 and 8 keep-alive connections (target >= 2.5x);
- conversations.history limit=100 in a channel of 1,000 and of 10,000 messages, on 1 and 8
  connections (target >= 2x).

Usage: .venv/bin/python bench/slack_vs_emulate.py [--quick] [--seconds 2] [--rounds 5] [--pin]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

sys.path.insert(0, str(Path(__file__).resolve().parent))

import emulate_peer  # noqa: E402
import github_replica  # noqa: E402
from github_replica import AnchaServer, cpus_available  # noqa: E402

PER_TOKEN = 4_000  # emulate answers 403 at a token's 5,000th call
PEER_TOKENS = 400
PEER_USER = "U000000001"  # the admin user emulate's Slack seeds by default
PEER_POSTS = "C000000001"  # its #general
TEXT = "benchmark message: the deploy finished"


@dataclass
class Measure:
    label: str
    method: str
    channel: str  # "posts" or "h{N}"
    messages: int
    connections: int
    target: float


def measures(sizes: tuple[int, ...], connections: tuple[int, ...]) -> list[Measure]:
    out = [Measure("chat.postMessage", "chat.postMessage", "posts", 0, c, 2.5) for c in connections]
    for n in sizes:
        out += [Measure(f"conversations.history limit=100 @ {n:,} msgs", "conversations.history", f"h{n}", n, c, 2.0)
                for c in connections]
    return out


def args_for(m: Measure, channel_id: str) -> dict[str, str]:
    if m.method == "chat.postMessage":
        return {"channel": channel_id, "text": TEXT}
    return {"channel": channel_id, "limit": "100"}


# --- Ancha ----------------------------------------------------------------------------------------


def ancha_scene(messages: int) -> dict[str, Any]:
    channels = [{"ref": "posts", "name": "posts", "members": ["laura", "slack_bot"]}]
    world: dict[str, Any] = {"users": [{"ref": "laura", "name": "laura"}], "channels": channels}
    if messages:
        channels.append({"ref": f"h{messages}", "name": f"h{messages}", "members": ["laura", "slack_bot"]})
        world["messages"] = [{"channel": f"h{messages}", "from": "laura", "text": f"{TEXT} {i}"}
                             for i in range(messages)]
    return {"name": "bench-slack-vs-emulate", "world": {"slack": world}}


def post_json(port: int, path: str, body: dict[str, Any] | None, method: str = "POST") -> tuple[int, Any]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        conn.request(method, path, json.dumps(body) if body is not None else None, {"Content-Type": "application/json"})
        answer = conn.getresponse()
        data = answer.read()
        return answer.status, json.loads(data) if data else None
    finally:
        conn.close()


@contextmanager
def ancha_target(server: AnchaServer, m: Measure, trial: int) -> Iterator[tuple[str, list[str], str]]:
    """A fresh environment: (the Slack tool's base URL, [its token], the measured channel's id)."""
    status, context = post_json(server.port, "/envs", {"scene": ancha_scene(m.messages), "trial": trial})
    if status != 201:
        raise RuntimeError(f"POST /envs: {status} {str(context)[:500]}")
    try:
        tool = context["tools"]["slack"]
        url, token = tool["url"], tool["token"]
        answer = slack_call(url, token, "conversations.list", {"limit": "1000"})
        ids = {c["name"]: c["id"] for c in answer["channels"]}
        yield url, [token], ids[m.channel]
    finally:
        post_json(server.port, f"/envs/{context['env_id']}", None, method="DELETE")


# --- emulate --------------------------------------------------------------------------------------


def slack_call(url: str, token: str, method: str, args: dict[str, str],
               conn: http.client.HTTPConnection | None = None) -> dict[str, Any]:
    host_port, _, prefix = url.removeprefix("http://").partition("/")
    own = conn is None
    if conn is None:
        host, _, port = host_port.partition(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        conn.request("POST", f"/{prefix}/api/{method}".replace("//", "/"), urlencode(args),
                     {"Authorization": f"Bearer {token}", "Content-Type": "application/x-www-form-urlencoded"})
        answer = conn.getresponse()
        data = json.loads(answer.read())
        if answer.status != 200 or not data.get("ok"):
            raise RuntimeError(f"{url} {method}: HTTP {answer.status} {str(data)[:200]}")
        return dict(data)
    finally:
        if own:
            conn.close()


def seed_peer_messages(url: str, channel: str, count: int, tokens: list[str]) -> None:
    """Post ``count`` messages into emulate's ``channel`` (4 connections, tokens rotated)."""
    errors: list[str] = []
    per = [count // 4 + (1 if i < count % 4 else 0) for i in range(4)]

    def work(index: int) -> None:
        host, _, port = url.removeprefix("http://").partition(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=30)
        try:
            for made in range(per[index]):
                token = tokens[index + 4 * (made // PER_TOKEN)]
                slack_call(url, token, "chat.postMessage", {"channel": channel, "text": f"{TEXT} {made}"}, conn)
        except RuntimeError as exc:
            errors.append(str(exc))
        finally:
            conn.close()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise RuntimeError(errors[0])


@contextmanager
def peer_target(m: Measure) -> Iterator[tuple[str, list[str], str]]:
    """A fresh emulate Slack (with ``m.messages`` messages in a channel): (URL, tokens, channel id)."""
    tokens = [f"xoxb-bench-{i}" for i in range(PEER_TOKENS)]
    seeders = [f"xoxb-seed-{i}" for i in range(4 * (m.messages // PER_TOKEN + 1))]
    seed = {"tokens": {t: {"login": PEER_USER, "scopes": []} for t in tokens + seeders},
            "slack": {"channels": [{"name": f"h{m.messages}"}] if m.messages else []}}
    cpus = github_replica.SERVER_CPUS if cpus_available() else None
    with emulate_peer.Emulate(seed, service="slack", cpus=cpus) as peer:
        channels = slack_call(peer.url, seeders[0], "conversations.list", {})["channels"]
        ids = {c["name"]: c["id"] for c in channels}
        channel = ids[f"h{m.messages}"] if m.messages else PEER_POSTS
        if m.messages:
            seed_peer_messages(peer.url, channel, m.messages, seeders)
        yield peer.url, tokens, channel


# --- the client -----------------------------------------------------------------------------------


@dataclass
class Round:
    rate: float
    p50_ms: float
    done: int


def wrk_round(url: str, tokens: list[str], method: str, args: dict[str, str], connections: int,
              seconds: float) -> Round:
    """One wrk run of ``seconds``; every answer must be HTTP 200 with ``"ok":true``."""
    body = urlencode(args)
    lua = [
        'wrk.method = "POST"',
        f"wrk.body = {json.dumps(body)}",
        "local requests = {}",
        "local tokens = {" + ",".join(json.dumps(t) for t in tokens) + "}",
        "for i, token in ipairs(tokens) do",
        '  requests[i] = wrk.format(nil, nil, {["Authorization"] = "Bearer " .. token, ["Host"] = wrk.host,',
        '    ["Content-Type"] = "application/x-www-form-urlencoded"}, nil)',
        "end",
        "local sent = 0",
        "function request()",
        "  sent = sent + 1",
        f"  return requests[(math.floor(sent / {PER_TOKEN}) % #requests) + 1]",
        "end",
        "function response(status, headers, body)",
        '  if status ~= 200 or not string.find(body, \'"ok":true\', 1, true) then',
        '    io.stderr:write("BAD " .. status .. " " .. string.sub(body, 1, 200) .. "\\n")',
        "    wrk.thread:stop()",
        "  end",
        "end",
    ]
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write("\n".join(lua) + "\n")
    try:
        run = subprocess.run(
            ["wrk", "-t1", f"-c{connections}", f"-d{max(1, round(seconds))}s", "--latency", "-s", script.name,
             f"{url}/api/{method}"],
            capture_output=True, text=True, timeout=seconds + 30,
            preexec_fn=(lambda: os.sched_setaffinity(0, github_replica.CLIENT_CPUS)) if cpus_available() else None)
    finally:
        Path(script.name).unlink(missing_ok=True)
    if run.returncode != 0 or "BAD" in run.stderr or "Non-2xx" in run.stdout:
        raise RuntimeError(f"{url} {method}: wrk saw errors: {run.stderr[:300]} {run.stdout[-300:]}")
    out = run.stdout
    scale = {"us": 0.001, "ms": 1.0, "s": 1000.0}
    p50 = re.search(r"50%\s+([\d.]+)(us|ms|s)\b", out)
    rate = re.search(r"Requests/sec:\s+([\d.]+)", out)
    done = re.search(r"(\d+) requests in", out)
    if p50 is None or rate is None or done is None:
        raise RuntimeError(f"wrk's output: {out}")
    return Round(float(rate.group(1)), float(p50.group(1)) * scale[p50.group(2)], int(done.group(1)))


@dataclass
class Row:
    measure: Measure
    ours: list[Round]
    peer: list[Round]

    @staticmethod
    def rate(rounds: list[Round]) -> float:
        return statistics.median(r.rate for r in rounds)

    @staticmethod
    def p50(rounds: list[Round]) -> float:
        return statistics.median(r.p50_ms for r in rounds)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="1-second rounds, 3 of them")
    parser.add_argument("--seconds", type=float, help="seconds per round (default 2)")
    parser.add_argument("--rounds", type=int, help="rounds per server and measure (default 5)")
    parser.add_argument("--connections", default="1,8")
    parser.add_argument("--sizes", default="1000,10000", help="messages in the history channel")
    parser.add_argument("--only", default="", help="run only measures whose label contains this")
    parser.add_argument("--pin", action="store_true", help="servers on core 0, wrk on core 1")
    options = parser.parse_args()
    github_replica.PINNING[0] = options.pin
    seconds = options.seconds or (1.0 if options.quick else 2.0)
    rounds = options.rounds or (3 if options.quick else 5)
    if not shutil.which("wrk"):
        print("wrk is not installed (apt-get install wrk)", file=sys.stderr)
        return 2
    reason = emulate_peer.unavailable()
    if reason:
        print(f"emulate cannot run: {reason}", file=sys.stderr)
        return 2
    emulate_peer.install()
    sizes = tuple(int(s) for s in options.sizes.split(","))
    conns = tuple(int(c) for c in options.connections.split(","))
    rows: list[Row] = []
    started = time.monotonic()
    with AnchaServer() as server:
        for trial, m in enumerate(measures(sizes, conns), start=1):
            if options.only and options.only not in m.label:
                continue
            with ancha_target(server, m, trial) as ours, peer_target(m) as peer:
                row = Row(m, [], [])
                first = [0, 0]  # each wrk run counts from its first token: start past the used ones
                for _ in range(rounds):
                    for side, (url, tokens, channel), into in ((0, ours, row.ours), (1, peer, row.peer)):
                        if first[side] >= len(tokens):
                            raise RuntimeError(f"{url}: out of tokens; raise PEER_TOKENS")
                        done = wrk_round(url, tokens[first[side]:], m.method, args_for(m, channel), m.connections,
                                         seconds)
                        into.append(done)
                        first[side] += done.done // PER_TOKEN + 1 if len(tokens) > 1 else 0
                rows.append(row)
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    pinning = "servers on core 0, wrk on core 1" if cpus_available() else "no CPU pinning"
    print(f"Slack replica vs emulate@{emulate_peer.VERSION} (Slack); client wrk -t1, keep-alive; {rounds} "
          f"interleaved rounds of {seconds:.0f} s per server and measure, medians; fresh emulate and fresh "
          f"environment per measure; {pinning}; {time.monotonic() - started:.0f} s in all; load average {load} "
          f"on {os.cpu_count()} cores")
    print()
    print("| call | conns | Ancha req/s | Ancha p50 ms | emulate req/s | emulate p50 ms | Ancha / emulate | target |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    met = True
    for row in rows:
        ratio = row.rate(row.ours) / row.rate(row.peer)
        ok = ratio >= row.measure.target
        met = met and ok
        print(f"| {row.measure.label} | {row.measure.connections} | {row.rate(row.ours):,.0f} | "
              f"{row.p50(row.ours):.2f} | {row.rate(row.peer):,.0f} | {row.p50(row.peer):.2f} | {ratio:.2f}x | "
              f">= {row.measure.target}x: {'met' if ok else 'NOT met'} |")
    sys.stdout.flush()
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
