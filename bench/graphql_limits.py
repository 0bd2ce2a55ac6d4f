"""Benchmark the worst GraphQL documents against the GitHub replica, and what other
environments of the same server feel meanwhile.

An ``ancha serve`` runs in a child process with two environments of one GitHub scene
(45 issues with comments). Environment A gets each hostile document below, ``--repeat``
times in a row; meanwhile this process calls ``GET /rate_limit`` (which does not count
against the rate limit) on environment B over one keep-alive connection, again and again.
For each document it reports A's answer, A's slowest round trip, the server's CPU time
per document (less B's calls: what one document holds the loop for on an idle machine),
the longest and median wait B saw (target <= 100 ms), and the server's peak RSS
(``VmHWM``) after it; at the end, B's longest wait over a while with no attack at all (the
machine's own noise). On a loaded machine the waits grow with the load; the CPU time does
not.

Prints a markdown table. Usage: .venv/bin/python bench/graphql_limits.py [--repeat 5] [--issue-only]
(``--issue-only``: the three reproductions of issue 26, for a run against older code).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import secrets
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from git_gzip import create_env, status_kb  # noqa: E402
from slack_replica import wait_until_up  # noqa: E402

from ancha.server.embedded import free_port  # noqa: E402
from ancha.world.tools.github.graphql.limits import MAX_QUERY_BYTES, MAX_TOKENS  # noqa: E402

STALL_TARGET_S = 0.100
SEARCH = 's{n}: search(query: "repo:acme/many", type: ISSUE, first: 100) { nodes { ... on Issue { number title ' \
         'body comments(first: 5) { nodes { body author { login } } } } } } '


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of a process so far."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def documents(issue_id: str) -> list[tuple[str, dict[str, Any]]]:
    """(label, request body) for each hostile document."""
    def query(text: str, **extra: Any) -> dict[str, Any]:
        return {"query": text, **extra}

    per_field = (MAX_TOKENS - 10) // 4
    aliases = " ".join(f"a{i}: viewer {{ login }}" for i in range((MAX_TOKENS - 10) // 6))
    searches = "".join(SEARCH.replace("{n}", str(i)) for i in range((MAX_TOKENS - 10) // 45))
    bomb = "query { ...F0 } " + " ".join(f"fragment F{i} on Query {{ viewer {{ login }} ...F{i + 1} ...F{i + 1} }}"
                                         for i in range(30)) + " fragment F30 on Query { viewer { login } }"
    operations = " ".join(f"query Q{i} {{ ...F0 }}" for i in range(60)) + " " + " ".join(
        f"fragment F{i} on Query {{ viewer {{ login }} ...F{i + 1} }}" for i in range(25)) + \
        " fragment F25 on Query { viewer { login } }"
    deep = "{ viewer { " + "repositories(first: 1) { nodes { owner { " * 7 + "login" + " } } }" * 7 + " } }"
    return [
        ("`{viewer{login}}` x 50,000 (750 KB)", query("{viewer{login}}" * 50_000)),
        ("`{viewer{login}}` x 350,000 (5 MB)", query("{viewer{login}}" * 350_000)),
        ("`nodes(ids:)` with 100,000 ids (2.8 MB)", query("query($ids: [ID!]!) { nodes(ids: $ids) { id } }",
                                                        variables={"ids": [issue_id] * 100_000})),
        ("`nodes(ids:)` with 20,000 ids", query("query($ids: [ID!]!) { nodes(ids: $ids) { id } }",
                                              variables={"ids": [issue_id] * 20_000})),
        ("a comment up to the byte limit", query("{ viewer { login } }\n#" + "x" * (MAX_QUERY_BYTES - 30))),
        ("a string up to the byte limit", query('{ search(query: "' + "x" * (MAX_QUERY_BYTES - 80)
                                                + '", type: ISSUE, first: 1) { issueCount } }')),
        ("one field repeated to the token limit", query("{ " + "viewer { login } " * per_field + "}")),
        ("aliases to the token limit", query("{ " + aliases + " }")),
        ("aliased searches: 45 issues x 5 comments each", query("{ " + searches + "}")),
        ("fragment bomb (2^30 spreads)", query(bomb)),
        ("60 operations x a 25-fragment chain", query(operations, operationName="Q1")),
        ("depth 23 (the limit is 25)", query(deep)),
        ("`{viewer{login}}` x 2,000 (10,000 tokens)", query("{viewer{login}}" * 2_000)),
    ]


def scene() -> dict[str, Any]:
    issues = [{"title": f"Issue {i}", "body": "text " * 40, "author": "gh_carol",
               "comments": [{"author": "gh_carol", "body": f"comment {c}"} for c in range(5)]} for i in range(45)]
    return {"name": "bench-graphql-limits", "clock": {"start": "2026-03-02T09:00:00Z"},
            "world": {"github": {"users": [{"ref": "gh_carol", "login": "carol"}],
                                 "orgs": [{"login": "acme", "members": ["github_agent"]}],
                                 "repos": [{"ref": "many", "name": "acme/many", "issues": issues,
                                            "permissions": {"github_agent": "write"}}]}}}


def summary(status: int, raw: bytes) -> str:
    try:
        body = json.loads(raw)
    except ValueError:
        return f"{status} {raw[:60]!r}"
    errors = body.get("errors") if isinstance(body, dict) else None
    if errors:
        first = errors[0]
        return f"{status} {first.get('type') or ''} {first['message'][:70]}".replace("  ", " ")
    return f"{status} data ({len(raw):,} bytes)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--issue-only", action="store_true", help="only the three documents of issue 26")
    args = parser.parse_args()
    port, key = free_port("127.0.0.1"), secrets.token_hex(16)
    ancha = str(Path(sys.executable).with_name("ancha"))
    server = subprocess.Popen([ancha, "serve", "--port", str(port), "--key", key], stdout=subprocess.DEVNULL)
    rows: list[tuple[str, str, float, float, float, float, int, float]] = []
    try:
        wait_until_up(port)
        target, target_token = create_env(port, key, 1, scene())
        other, other_token = create_env(port, key, 2, scene())
        setup = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        setup.request("POST", f"{target}/graphql", json.dumps({"query": '{ repository(owner: "acme", name: "many")'
                                                                         ' { issue(number: 1) { id } } }'}),
                      {"Authorization": f"bearer {target_token}", "Content-Type": "application/json"})
        issue_id = json.loads(setup.getresponse().read())["data"]["repository"]["issue"]["id"]
        before_peak = status_kb(server.pid, "VmHWM") / 1024
        pinger = [http.client.HTTPConnection("127.0.0.1", port, timeout=600)]

        def ping() -> float:
            started = time.perf_counter()
            for _ in range(3):
                try:
                    pinger[0].request("GET", f"{other}/rate_limit", headers={"Authorization": f"token {other_token}"})
                    reply = pinger[0].getresponse()
                    reply.read()
                    break
                except (ConnectionError, http.client.HTTPException):
                    # A server held up long enough closes idle connections once it is back: the
                    # wait goes on over a new one.
                    pinger[0] = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
            assert reply.status == 200, reply.status
            return time.perf_counter() - started

        warm = cpu_seconds(server.pid)
        for _ in range(200):
            ping()
        per_ping = (cpu_seconds(server.pid) - warm) / 200
        chosen = documents(issue_id)
        chosen = [chosen[0], chosen[1], chosen[2]] if args.issue_only else chosen
        for label, request in chosen:
            payload = json.dumps(request).encode()
            done = threading.Event()
            answers: list[tuple[int, bytes, float]] = []

            def attack(payload: bytes = payload, done: threading.Event = done,
                       answers: list[tuple[int, bytes, float]] = answers) -> None:
                attacker = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
                for _ in range(args.repeat):
                    started = time.perf_counter()
                    attacker.request("POST", f"{target}/graphql", payload,
                                     {"Authorization": f"bearer {target_token}", "Content-Type": "application/json"})
                    reply = attacker.getresponse()
                    answers.append((reply.status, reply.read(), time.perf_counter() - started))
                done.set()

            waits: list[float] = []
            cpu = cpu_seconds(server.pid)
            thread = threading.Thread(target=attack)
            thread.start()
            while not done.is_set():
                waits.append(ping())
            thread.join()
            spent = max(cpu_seconds(server.pid) - cpu - per_ping * len(waits), 0.0) / args.repeat
            status, raw, _ = answers[0]
            rows.append((label, summary(status, raw), max(a[2] for a in answers), spent, max(waits),
                         statistics.median(waits), len(waits), status_kb(server.pid, "VmHWM") / 1024))
        quiet: list[float] = []
        until = time.perf_counter() + 5
        while time.perf_counter() < until:
            quiet.append(ping())
    finally:
        server.terminate()
        server.wait(timeout=10)
    print(f"### Hostile GraphQL documents against `ancha serve` ({args.repeat} of each in a row)\n")
    print(f"Server peak RSS before any attack: {before_peak:.0f} MB\n")
    print("| document | answer | slowest answer (ms) | server CPU per document (ms) | other env: longest wait (ms) "
          "| median (ms) | calls | peak RSS (MB) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for label, answer, slowest, spent, longest, median, calls, peak in rows:
        print(f"| {label} | {answer} | {slowest * 1000:.0f} | {spent * 1000:.0f} | {longest * 1000:.0f} "
              f"| {median * 1000:.1f} | {calls} | {peak:.0f} |")
    worst = max(row[4] for row in rows)
    print(f"\nMost server CPU for one document: {max(row[3] for row in rows) * 1000:.0f} ms.")
    print(f"\nNo attack: longest wait over 5 s, {max(quiet) * 1000:.0f} ms (the machine's noise).")
    print(f"Longest wait of another environment: {worst * 1000:.0f} ms (target <= {STALL_TARGET_S * 1000:.0f} ms): "
          f"{'met' if worst <= STALL_TARGET_S else 'MISSED'}")


if __name__ == "__main__":
    main()
