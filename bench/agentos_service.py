"""AgentOS service benchmark (a script, not a test).

    .venv/bin/python bench/agentos_service.py [--seconds 10] [--clients 8] [--subscribers 1000]
        [--metrics-runs 1000000] [--only runs,streams,metrics]

1. Runs per second end to end through the API: wrk (`$AGENTOS_BENCH_WRK`, default `wrk` on
   the PATH) posting runs (wait=true) of a mock two-model workflow with the reference's six
   checks over CLIENTS keep-alive connections for SECONDS; only 201 answers of a successful
   run scored with the six checks count, and the database is checked for as many finished
   runs afterwards. Setups: `agentos serve` on SQLite, one process and `--workers 2`;
   `agentos serve --workers 2` on PostgreSQL with the PostgreSQL broker; and one API process
   handing runs to an `agentos worker` through the arq queue on Redis.
2. Streams: two `agentos serve` processes on PostgreSQL with the PostgreSQL broker;
   runs executed on the first, waiting on a gate; SUBSCRIBERS WebSockets spread over both
   processes; the gate opens, and each subscriber's delay from its run's `finished_at`
   to its `run_evaluated` is measured.
3. GET /api/dashboard/metrics latency over METRICS_RUNS runs on PostgreSQL: the runs are
   bulk-inserted at schema revision 0001, then the upgrade fills the daily rollups
   (its time is reported); the full scan the dashboard did before the rollups is timed
   alongside.

PostgreSQL (127.0.0.1:5432, database `test`) and Redis (127.0.0.1:6379) are needed for
2, 3 and the queue row; a part whose service is missing is skipped with a note.
Prints a markdown table with the targets.
"""

from __future__ import annotations

import argparse
import asyncio
import json
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
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import psycopg
import uvicorn
import websockets
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from agentos.db import Database, migrate
from agentos.ids import new_id
from agentos.keys import issue_key
from agentos.timestamps import utcnow

WRK = os.environ.get("AGENTOS_BENCH_WRK", "wrk")
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
def agentos_serve(database_url: str, *extra: str, env: dict[str, str] | None = None) -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "agentos.cli", "serve", "--port", str(port), "--log-level", "warning", *extra],
        env={**os.environ, "AGENTOS_DATABASE_URL": database_url, **(env or {})},
    )
    try:
        yield answering(process, port, lambda base: httpx.get(base + "/api/workflows", timeout=1), "agentos serve")
    finally:
        process.terminate()
        process.wait(15)


def answering(process: subprocess.Popen[bytes], port: int, probe: Callable[[str], object], what: str) -> str:
    """The base URL of `process`'s server on `port`, once `probe(base)` gets an answer (30 s at most)."""
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            probe(base)
            return base
        except httpx.TransportError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"{what} did not start") from None
            time.sleep(0.05)


def print_table(rows: list[tuple[str, str, str, Any]], load_note: str = "") -> None:
    """The load average, then the rows (measure, result, target, met: True, False or a text) as markdown."""
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"load average at the end: {load} on {os.cpu_count()} CPUs{load_note}")
    print("| measure | result | target | meets target |")
    print("|---|---|---|---|")
    for measure, result, target, ok in rows:
        print(f"| {measure} | {result} | {target} | {'yes' if ok is True else 'no' if ok is False else ok} |")


@contextmanager
def agentos_worker(database_url: str, env: dict[str, str]) -> Iterator[None]:
    process = subprocess.Popen(
        [sys.executable, "-m", "agentos.cli", "worker", "--concurrency", "16"],
        env={**os.environ, "AGENTOS_DATABASE_URL": database_url, **env},
        stdout=subprocess.DEVNULL,
    )
    try:
        yield
    finally:
        process.terminate()
        process.wait(15)


@contextmanager
def sqlite_database() -> Iterator[str]:
    with tempfile.TemporaryDirectory() as tmp:
        yield f"sqlite:///{Path(tmp) / 'agentos.db'}"


@contextmanager
def pg_database() -> Iterator[str]:
    admin = pg_admin_url()
    if admin is None:
        raise LookupError("PostgreSQL not reachable")
    name = f"agentos_bench_{secrets.token_hex(4)}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield "postgresql+psycopg://" + admin.split("://", 1)[1].rsplit("/", 1)[0] + "/" + name
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def redis_url() -> str | None:
    url = os.environ.get("AGENTOS_BENCH_REDIS_URL", "redis://127.0.0.1:6379/0")
    try:
        import redis

        redis.Redis.from_url(url, socket_connect_timeout=2).ping()
        return url
    except Exception:
        return None


def libpq(url: str) -> str:
    return url.replace("postgresql+psycopg://", "postgresql://")


# wrk's Lua script: POST a run (wait=true) on every request, for wrk's duration; count the
# answers that are a 201 with a successful run scored with the six checks, and the others.
WRK_SCRIPT = """
local checks = os.getenv("AGENTOS_BENCH_CHECKS")
wrk.method = "POST"
wrk.path = os.getenv("AGENTOS_BENCH_PATH")
wrk.headers["Authorization"] = "Bearer " .. os.getenv("AGENTOS_BENCH_KEY")
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"input": {"ticket": "wrk"}, "wait": true}'
local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args) ok = 0; bad = 0; sample = "" end
function response(status, headers, body)
  if status == 201 and body:find('"status":"success"', 1, true) and body:find(checks, 1, true) then
    ok = ok + 1
  else
    bad = bad + 1
    if sample == "" then sample = status .. " " .. body:sub(1, 300) end
  end
end
function done(summary, latency, requests)
  local oks, bads, samples = 0, 0, ""
  for _, thread in ipairs(threads) do
    oks = oks + thread:get("ok"); bads = bads + thread:get("bad")
    if samples == "" then samples = thread:get("sample") end
  end
  io.write(string.format("AGENTOS_BENCH ok=%d bad=%d seconds=%.6f p50_ms=%.2f p99_ms=%.2f\\n", oks, bads,
    summary.duration / 1e6, latency:percentile(50) / 1000, latency:percentile(99) / 1000))
  if samples ~= "" then io.write("AGENTOS_BENCH_SAMPLE " .. samples .. "\\n") end
end
"""


def wrk_runs(base: str, key: str, path: str, seconds: float, connections: int) -> dict[str, float]:
    """POST runs (wait=true) for `seconds` over `connections` keep-alive connections with wrk
    (one thread: an event loop in C, a small fraction of a core, where httpx threads took
    most of a core of this 2-core machine from the server). Returns the answers counted
    (any failed one ends the benchmark) and their rate."""
    with tempfile.NamedTemporaryFile("w", suffix=".lua") as script:
        script.write(WRK_SCRIPT)
        script.flush()
        env = {**os.environ, "AGENTOS_BENCH_PATH": path, "AGENTOS_BENCH_KEY": key,
               "AGENTOS_BENCH_CHECKS": '"total":6,'}
        out = subprocess.run(
            [WRK, "-t1", f"-c{connections}", f"-d{seconds:g}s", "--timeout", "30s", "-s", script.name, base],
            env=env, capture_output=True, text=True, check=True,
        ).stdout
    line = next(line for line in out.splitlines() if line.startswith("AGENTOS_BENCH "))
    fields = {k: float(v) for k, v in (item.split("=") for item in line.split()[1:])}
    if fields["bad"]:
        sample = next((line for line in out.splitlines() if line.startswith("AGENTOS_BENCH_SAMPLE")), "")
        raise SystemExit(f"{fields['bad']:.0f} runs failed: {sample}")
    return {"ok": fields["ok"], "rate": fields["ok"] / fields["seconds"], "p50_ms": fields["p50_ms"],
            "p99_ms": fields["p99_ms"]}


def finished_runs(url: str, workflow_id: str) -> int:
    """Runs of the workflow stored as finished, successful and scored with the six checks."""
    db = Database(url, run_migrations=False)
    try:
        with db.read() as session:
            from sqlalchemy import func, select

            from agentos.models import Run

            return int(session.scalar(
                select(func.count()).select_from(Run).where(
                    Run.workflow_id == workflow_id, Run.status == "success", Run.evals_total == 6)
            ) or 0)
    finally:
        db.dispose()


def bench_runs(setup: str, seconds: float, clients: int) -> dict[str, float]:
    """Runs/s for one setup: "sqlite", "sqlite-workers-2", "postgresql-workers-2" or "postgresql-queue".

    wrk posts the runs; every answer counted is a 201 whose run succeeded and was scored
    with the six checks, and afterwards the database must hold a finished run for each
    (plus at most one per connection: a run in flight when wrk stopped still finishes)."""
    with (sqlite_database() if setup.startswith("sqlite") else pg_database()) as url, ExitStack() as stack:
        db = Database(url)
        key = issue_key(db, "bench")
        db.dispose()
        env: dict[str, str] = {}
        extra: tuple[str, ...] = ()
        if not setup.startswith("sqlite"):
            env["AGENTOS_BROKER_URL"] = libpq(url)
        if setup.endswith("workers-2"):
            extra = ("--workers", "2")
        if setup == "postgresql-queue":
            queue = redis_url()
            if queue is None:
                raise LookupError("Redis not reachable")
            env |= {"AGENTOS_QUEUE_URL": queue, "AGENTOS_QUEUE_NAME": f"agentos-bench:{secrets.token_hex(4)}"}
            stack.enter_context(agentos_worker(url, env))
        with agentos_serve(url, *extra, env=env) as base:
            headers = {"Authorization": f"Bearer {key}"}
            with httpx.Client(base_url=base, headers=headers) as client:
                workflow = client.post("/api/workflows", json={"name": "Bench", "nodes": NODES, "checks": CHECKS})
                workflow.raise_for_status()
                workflow_id = workflow.json()["id"]
                path = f"/api/workflows/{workflow_id}/runs"
                for _ in range(50):
                    client.post(path, json={"input": {"ticket": "warm-up"}}).raise_for_status()
            # Warm every process (with --workers 2 the kernel spreads connections over both).
            answered = 50 + wrk_runs(base, key, path, 1, clients)["ok"]
            one = wrk_runs(base, key, path, min(seconds, 3), 1)
            many = wrk_runs(base, key, path, seconds, clients)
            answered += one["ok"] + many["ok"]
            time.sleep(1.0 if setup == "postgresql-queue" else 0.3)  # the runs in flight when wrk stopped
            stored = finished_runs(url, workflow_id)
            if not answered <= stored <= answered + 2 * clients + 1:
                raise SystemExit(f"{answered:.0f} runs answered as finished, but {stored} stored as finished")
    return {"one_client": one["rate"], "concurrent": many["rate"], "answered": many["ok"],
            "p50_ms": many["p50_ms"], "p99_ms": many["p99_ms"]}


class Gate:
    """An HTTP endpoint the runs' first node waits on, until the benchmark opens it."""

    def __init__(self) -> None:
        self.opened = threading.Event()
        self.port = free_port()
        app = Starlette(routes=[Route("/gate", self.gate)])
        self.server = uvicorn.Server(uvicorn.Config(app, port=self.port, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        while not self.server.started:
            time.sleep(0.01)

    async def gate(self, _: Request) -> JSONResponse:
        while not self.opened.is_set():
            await asyncio.sleep(0.005)
        return JSONResponse({"open": True})

    def close(self) -> None:
        self.opened.set()
        self.server.should_exit = True
        self.thread.join(10)


def bench_streams(subscribers: int, runs: int) -> dict[str, float]:
    """`subscribers` WebSockets over two API processes, following `runs` runs executed on the
    first; each process's subscribers are held by a client process of their own."""
    import multiprocessing

    gate = Gate()
    try:
        with pg_database() as url:
            db = Database(url)
            key = issue_key(db, "bench")
            db.dispose()
            env = {"AGENTOS_BROKER_URL": libpq(url)}
            with agentos_serve(url, env=env) as a, agentos_serve(url, env=env) as b:
                headers = {"Authorization": f"Bearer {key}"}
                nodes = [{"id": "wait", "type": "http", "method": "GET",
                          "url": f"http://127.0.0.1:{gate.port}/gate", "output": "gate"}, *NODES]
                with httpx.Client(base_url=a, headers=headers, timeout=60) as client:
                    client.post("/api/workflows", json={"name": "Gated", "nodes": nodes, "checks": CHECKS}
                                ).raise_for_status()
                    run_ids = [client.post("/api/workflows/Gated/runs", json={"input": {"ticket": "t"}, "wait": False}
                                           ).json()["id"] for _ in range(runs)]
                context = multiprocessing.get_context("spawn")
                results = context.Queue()
                ready = [context.Event() for _ in (a, b)]
                go = context.Event()
                clients = [
                    context.Process(target=_subscriber_process,
                                    args=(base, key, run_ids, subscribers // 2, ready[i], go, results, "AB"[i]))
                    for i, base in enumerate((a, b))
                ]
                for process in clients:
                    process.start()
                for event in ready:
                    if not event.wait(180):
                        raise SystemExit("the subscribers did not all get run_started")
                go.set()
                gate.opened.set()
                received: list[tuple[str, str, float]] = []
                for _ in clients:
                    received.extend(results.get(timeout=180))
                for process in clients:
                    process.join(30)
                with httpx.Client(base_url=a, headers=headers, timeout=60) as client:
                    finished = {r: client.get(f"/api/runs/{r}").json()["finished_at"] for r in run_ids}
    finally:
        gate.close()
    from datetime import datetime

    def epoch(iso: str) -> float:
        return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()

    delays = sorted(at - epoch(finished[run_id]) for _, run_id, at in received)
    on_b = sorted(at - epoch(finished[run_id]) for side, run_id, at in received if side == "B")
    return {
        "subscribers": len(delays),
        "p50_ms": statistics.median(delays) * 1000,
        "p99_ms": delays[int(len(delays) * 0.99) - 1] * 1000,
        "max_ms": delays[-1] * 1000,
        "max_b_ms": on_b[-1] * 1000,
        "within_2s": sum(1 for d in delays if d <= 2.0),
    }


def _subscriber_process(base: str, key: str, run_ids: list[str], count: int, ready: Any, go: Any,
                        results: Any, side: str) -> None:
    results.put(asyncio.run(_follow_all(base, key, run_ids, count, ready, go, side)))


async def _follow_all(
    base: str, key: str, run_ids: list[str], subscribers: int, ready: Any, go: Any, side: str
) -> list[tuple[str, str, float]]:
    """Open every subscription, report once each has its run_started, and return (side, run
    id, wall-clock time its run_evaluated arrived) per subscriber."""
    started = 0
    results: list[tuple[str, str, float]] = []
    ws_base = base.replace("http://", "ws://")

    async def follow(index: int) -> None:
        nonlocal started
        run_id = run_ids[index % len(run_ids)]
        async with websockets.connect(f"{ws_base}/api/runs/{run_id}/stream?api_key={key}", open_timeout=120,
                                      max_queue=None) as socket:
            first = json.loads(await socket.recv())
            assert first["type"] == "run_started", first
            started += 1
            if started == subscribers:
                ready.set()
            async for raw in socket:
                if '"run_evaluated"' in raw:
                    results.append((side, run_id, time.time()))

    tasks = []
    for index in range(subscribers):
        tasks.append(asyncio.ensure_future(follow(index)))
        if index % 50 == 49:
            await asyncio.sleep(0.05)  # do not open hundreds of connections in one burst: the listen backlog
    await asyncio.wait_for(asyncio.gather(*tasks), 300)
    return results


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


OLD_SCAN = """
SELECT date(created_at), count(*), sum(CASE WHEN status = 'success' THEN 1 ELSE 0 END),
       sum(CASE WHEN status IN ('success', 'failed') THEN 1 ELSE 0 END), coalesce(sum(cost_usd), 0),
       count(evals_total), coalesce(sum(evals_passed), 0), coalesce(sum(evals_total), 0)
FROM runs WHERE workspace_id = %s GROUP BY date(created_at)
"""


def bench_metrics(runs: int) -> dict[str, float]:
    with pg_database() as url:
        db = Database(url, run_migrations=False)
        _migrate_to(db, "0001")
        with db.write() as session:
            from sqlalchemy import text

            workspace_id = new_id()
            session.execute(text("INSERT INTO workspaces (id, name, created_at) VALUES (:i, 'bench', now())"),
                            {"i": workspace_id})
        insert_runs(url, workspace_id, runs)
        started = time.perf_counter()
        migrate(db.engine)  # to head: fills run_rollups from the runs
        upgrade_seconds = time.perf_counter() - started
        key = issue_key(db, "bench")
        db.dispose()
        with psycopg.connect(libpq(url)) as conn:
            conn.execute(OLD_SCAN, (workspace_id,)).fetchall()
            scans = []
            for _ in range(5):
                started = time.perf_counter()
                conn.execute(OLD_SCAN, (workspace_id,)).fetchall()
                scans.append((time.perf_counter() - started) * 1000)
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
        return {"median_ms": statistics.median(timings), "p95_ms": timings[int(len(timings) * 0.95) - 1],
                "scan_ms": statistics.median(scans), "upgrade_s": upgrade_seconds}


def _migrate_to(db: Database, revision: str) -> None:
    from alembic import command
    from alembic.config import Config

    from agentos.db import MIGRATIONS

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with db.engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, revision)


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


RUN_SETUPS = {
    "sqlite": "SQLite, 1 API process",
    "sqlite-workers-2": "SQLite, serve --workers 2",
    "postgresql-workers-2": "PostgreSQL, serve --workers 2, PostgreSQL broker",
    "postgresql-queue": "PostgreSQL, 1 API process + 1 agentos worker (arq on Redis)",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=10, help="how long wrk posts runs, per setup")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--subscribers", type=int, default=1000)
    parser.add_argument("--stream-runs", type=int, default=10)
    parser.add_argument("--metrics-runs", type=int, default=1_000_000)
    parser.add_argument("--only", default="runs,streams,metrics", help="comma-separated parts to run")
    parser.add_argument("--setups", default=",".join(RUN_SETUPS), help="comma-separated run setups")
    args = parser.parse_args()
    parts = set(args.only.split(","))

    rows: list[tuple[str, str, str, Any]] = []
    if "runs" in parts:
        for setup in args.setups.split(","):
            label = RUN_SETUPS[setup]
            # The setup before left dirty pages (a SQLite file of 10,000 runs, deleted): written out
            # now, they no longer slow this setup's commits (PostgreSQL's fsyncs waited behind them).
            os.sync()
            try:
                runs = bench_runs(setup, args.seconds, args.clients)
            except LookupError as missing:
                rows.append((f"runs/s, {label}", f"skipped: {missing}", ">= 500", "-"))
                continue
            rows.append((f"runs/s end to end, {label}, mock provider, 1 keep-alive connection",
                         f"{runs['one_client']:.0f}", "-", "-"))
            rows.append((f"runs/s end to end, {label}, mock provider, {args.clients} keep-alive connections "
                         f"({runs['answered']:.0f} runs; latency p50 {runs['p50_ms']:.1f} ms, "
                         f"p99 {runs['p99_ms']:.1f} ms)",
                         f"{runs['concurrent']:.0f}", ">= 500", runs["concurrent"] >= 500))
    if "streams" in parts:
        try:
            streams = bench_streams(args.subscribers, args.stream_runs)
            where = (f"{args.subscribers:,} subscribers over 2 API processes, {args.stream_runs} runs, "
                     "PostgreSQL broker: run_evaluated after the run's finished_at")
            rows.append((f"{where}, p50", f"{streams['p50_ms']:.0f} ms", "-", "-"))
            rows.append((f"{where}, p99", f"{streams['p99_ms']:.0f} ms", "-", "-"))
            rows.append((f"{where}, max", f"{streams['max_ms']:.0f} ms", "<= 2000 ms", streams["max_ms"] <= 2000))
            rows.append((f"{where}, max on the second process (through the broker)", f"{streams['max_b_ms']:.0f} ms",
                         "<= 2000 ms", streams["max_b_ms"] <= 2000))
            rows.append(("subscribers that got run_evaluated within 2 s",
                         f"{streams['within_2s']:,} of {args.subscribers:,}", "all",
                         streams["within_2s"] == args.subscribers))
        except LookupError as missing:
            rows.append(("stream subscribers", f"skipped: {missing}", "-", "-"))
    if "metrics" in parts:
        try:
            metrics = bench_metrics(args.metrics_runs)
            n = f"{args.metrics_runs:,}"
            rows.append((f"GET /api/dashboard/metrics over {n} runs, PostgreSQL, median",
                         f"{metrics['median_ms']:.1f} ms", "<= 200 ms", metrics["median_ms"] <= 200))
            rows.append((f"GET /api/dashboard/metrics over {n} runs, PostgreSQL, p95",
                         f"{metrics['p95_ms']:.1f} ms", "<= 200 ms", metrics["p95_ms"] <= 200))
            rows.append((f"the dashboard's full scan before the rollups, over {n} runs (SQL alone)",
                         f"{metrics['scan_ms']:.0f} ms", "-", "-"))
            rows.append((f"migration 0002 filling the rollups from {n} runs", f"{metrics['upgrade_s']:.1f} s",
                         "-", "-"))
        except LookupError as missing:
            rows.append(("metrics latency", f"skipped: {missing}", "<= 200 ms", "-"))
    print("| measure | result | target | meets target |")
    print("|---|---|---|---|")
    for measure, result, target, ok in rows:
        print(f"| {measure} | {result} | {target} | {'yes' if ok is True else 'no' if ok is False else ok} |")


if __name__ == "__main__":
    main()
