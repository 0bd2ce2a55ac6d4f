"""AgentOS service benchmark (a script, not a test).

    .venv/bin/python bench/agentos_service.py [--runs 2000] [--clients 4] [--metrics-runs 100000]

1. Runs per second end to end through the API: `agentos serve` on SQLite in its own
   process on loopback, httpx keep-alive clients posting runs (wait=true) of a mock
   two-model workflow with the reference's six checks.
2. GET /api/dashboard/metrics latency over 100,000 runs on PostgreSQL (bulk-inserted),
   served the same way. Skipped with a note when PostgreSQL is not reachable.

Prints a markdown table with the targets.
"""

from __future__ import annotations

import argparse
import os
import random
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import psycopg

from agentos.db import Database
from agentos.ids import new_id
from agentos.keys import issue_key
from agentos.timestamps import utcnow

PG_ADMIN_URLS = [os.environ.get("AGENTOS_BENCH_PG_URL", ""), "postgresql://postgres@127.0.0.1:5432/test",
                 "postgresql://root@127.0.0.1:5432/test"]

NODES = [
    {"id": "classify", "type": "llm", "provider": "mock", "model": "gpt-4o-mini",
     "prompt": "Classify: {{input.ticket}}", "output": "category",
     "responses": [{"text": "refund", "input_tokens": 40, "output_tokens": 1}]},
    {"id": "order", "type": "set", "values": {"order_id": "input.get('order_id', 'GB204815')"}},
    {"id": "draft", "type": "llm", "provider": "mock", "model": "gpt-4o-mini",
     "prompt": "Reply to the {{category}} ticket: {{input.ticket}}", "output": "draft_reply",
     "responses": [{"text": "We'll process your refund today.", "input_tokens": 1200, "output_tokens": 300}]},
]
CHECKS = [
    {"name": "Mentions the refund", "type": "contains", "target": "draft_reply", "value": "refund"},
    {"name": "No internal error leaked", "type": "not_contains", "target": "draft_reply", "value": "Traceback"},
    {"name": "Category is known", "type": "regex", "target": "category", "value": "^(billing|refund|technical)$"},
    {"name": "Under budget", "type": "max_cost_usd", "value": 0.05},
    {"name": "Under 8 seconds", "type": "max_duration_ms", "value": 8000},
    {"name": "Reply is substantial", "type": "expression", "value": "len(draft_reply) > 40"},
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def agentos_serve(database_url: str) -> Iterator[str]:
    port = free_port()
    env = {**os.environ, "AGENTOS_DATABASE_URL": database_url}
    process = subprocess.Popen(
        [sys.executable, "-m", "agentos.cli", "serve", "--port", str(port), "--log-level", "warning"],
        env=env,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(base + "/api/workflows", timeout=1)
                break
            except httpx.TransportError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit("agentos serve did not start") from None
                time.sleep(0.05)
        yield base
    finally:
        process.terminate()
        process.wait(15)


def bench_runs(total: int, clients: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'agentos.db'}"
        db = Database(url)
        key = issue_key(db, "bench")
        db.dispose()
        with agentos_serve(url) as base:
            headers = {"Authorization": f"Bearer {key}"}
            with httpx.Client(base_url=base, headers=headers) as client:
                workflow = client.post("/api/workflows", json={"name": "Bench", "nodes": NODES, "checks": CHECKS})
                workflow.raise_for_status()
                path = f"/api/workflows/{workflow.json()['id']}/runs"
                for _ in range(50):
                    client.post(path, json={"input": {"ticket": "warm-up"}}).raise_for_status()
                sequential = 300
                started = time.perf_counter()
                for i in range(sequential):
                    client.post(path, json={"input": {"ticket": f"t{i}"}}).raise_for_status()
                one_client = sequential / (time.perf_counter() - started)

            per_client = total // clients
            failures: list[str] = []

            def worker() -> None:
                with httpx.Client(base_url=base, headers=headers) as own:
                    for i in range(per_client):
                        response = own.post(path, json={"input": {"ticket": f"t{i}"}})
                        if response.status_code != 201 or response.json()["status"] != "success":
                            failures.append(response.text)

            threads = [threading.Thread(target=worker) for _ in range(clients)]
            started = time.perf_counter()
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            elapsed = time.perf_counter() - started
            if failures:
                raise SystemExit(f"{len(failures)} runs failed: {failures[0]}")
    return {"one_client": one_client, "concurrent": per_client * clients / elapsed}


def pg_admin_url() -> str | None:
    for url in PG_ADMIN_URLS:
        if not url:
            continue
        try:
            with psycopg.connect(url, connect_timeout=3):
                return url
        except psycopg.Error:
            continue
    return None


def bench_metrics(runs: int) -> dict[str, float] | None:
    admin = pg_admin_url()
    if admin is None:
        return None
    name = f"agentos_bench_{secrets.token_hex(4)}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    url = "postgresql+psycopg://" + admin.split("://", 1)[1].rsplit("/", 1)[0] + "/" + name
    try:
        db = Database(url)
        key = issue_key(db, "bench")
        with db.read() as session:
            from sqlalchemy import select

            from agentos.models import Workspace

            workspace_id = session.scalar(select(Workspace.id).where(Workspace.name == "bench"))
        db.dispose()
        insert_runs(url, str(workspace_id), runs)
        with agentos_serve(url) as base, httpx.Client(
            base_url=base, headers={"Authorization": f"Bearer {key}"}
        ) as client:
            client.get("/api/dashboard/metrics").raise_for_status()
            timings = []
            for _ in range(30):
                started = time.perf_counter()
                response = client.get("/api/dashboard/metrics")
                timings.append((time.perf_counter() - started) * 1000)
                response.raise_for_status()
            assert response.json()["total_runs"] == runs, response.json()
        timings.sort()
        return {"median_ms": statistics.median(timings), "p95_ms": timings[int(len(timings) * 0.95) - 1]}
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def insert_runs(url: str, workspace_id: str, runs: int) -> None:
    """COPY `runs` rows spread over the last 40 days: 80% evaluated, 95% successful."""
    rng = random.Random(7)
    now = utcnow()
    workflow_ids = [new_id() for _ in range(5)]
    conninfo = url.replace("postgresql+psycopg://", "postgresql://")
    columns = ("id, workspace_id, workflow_id, workflow_version, status, input, state, error, cost_usd, "
               "duration_ms, created_at, started_at, finished_at, evals, evals_passed, evals_total")
    with psycopg.connect(conninfo) as conn:
        with conn.cursor() as cursor, cursor.copy(f"COPY runs ({columns}) FROM STDIN") as copy:
            for _ in range(runs):
                created = now - timedelta(seconds=rng.uniform(0, 40 * 86400))
                success = rng.random() < 0.95
                evaluated = success and rng.random() < 0.8
                passed = rng.randint(3, 6) if evaluated else None
                copy.write_row((
                    new_id(), workspace_id, rng.choice(workflow_ids), 1, "success" if success else "failed",
                    "{}", "{}", None if success else "boom", rng.uniform(0, 0.01), rng.randint(100, 9000),
                    created, created, created + timedelta(seconds=2),
                    None, passed, 6 if evaluated else None,
                ))
        conn.execute("ANALYZE runs")
        conn.commit()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--metrics-runs", type=int, default=100_000)
    args = parser.parse_args()

    runs = bench_runs(args.runs, args.clients)
    metrics = bench_metrics(args.metrics_runs) if args.metrics_runs else None
    rows: list[tuple[str, str, str, Any]] = [
        ("runs/s end to end, SQLite, mock provider, 1 keep-alive client", f"{runs['one_client']:.0f}",
         ">= 200", runs["one_client"] >= 200),
        (f"runs/s end to end, SQLite, mock provider, {args.clients} keep-alive clients",
         f"{runs['concurrent']:.0f}", ">= 200", runs["concurrent"] >= 200),
    ]
    if metrics is None:
        rows.append(("metrics latency, PostgreSQL", "skipped: PostgreSQL not reachable", "<= 300 ms", "-"))
    else:
        rows.append((f"GET /api/dashboard/metrics over {args.metrics_runs:,} runs, PostgreSQL, median",
                     f"{metrics['median_ms']:.1f} ms", "<= 300 ms", metrics["median_ms"] <= 300))
        rows.append((f"GET /api/dashboard/metrics over {args.metrics_runs:,} runs, PostgreSQL, p95",
                     f"{metrics['p95_ms']:.1f} ms", "<= 300 ms", metrics["p95_ms"] <= 300))
    print("| measure | result | target | meets target |")
    print("|---|---|---|---|")
    for measure, result, target, ok in rows:
        print(f"| {measure} | {result} | {target} | {'yes' if ok is True else 'no' if ok is False else ok} |")


if __name__ == "__main__":
    main()
