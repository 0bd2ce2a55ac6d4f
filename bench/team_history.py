"""A team's shared history of Ancha runs in AgentOS: the hosted console's pages over many
runs, and the upload of one run (a script, not a test).

    .venv/bin/python bench/team_history.py [--runs 10000] [--requests 30] [--deep-pages 100]
        [--trials 100] [--pushes 5] [--only pages,upload]

1. Pages, on PostgreSQL (127.0.0.1:5432; a fresh database, dropped after): RUNS complete runs
   of ~6 scenes each are bulk-inserted with SQLAlchemy Core (ancha_runs rows with a real
   summary.json's shape, 5 trials a scene, and a manifest of ~220 files; ancha_scene_results
   rows; 24 branches, ~2,000 commits, over ~200 days). `agentos serve` serves the app on a
   loopback port; the bench signs in (POST /ui/sign-in) and times REQUESTS GETs of each page:
   the runs page (first page; filtered by branch; by a scene in ~40% of runs; by a scene in
   ~1%; DEEP_PAGES pages deep through the `older runs` links) and a scene's chart (a scene in
   every run: its newest 1,000). Target: <= 300 ms each.
2. Upload: a 100-trial run folder (6 scenes; per trial checks.json, trace.jsonl, world.json,
   calls.jsonl, records.jsonl, replay.json, agent.log and, in one scene, state/ and
   state-journal/ files, sized as the bundled examples' trials are) pushed with
   `ancha.results.upload.push_run` to `agentos serve` over loopback, on SQLite and on
   PostgreSQL, PUSHES times each (a new run id each time). Reported: the total, each phase
   (reading and hashing the files, the manifest PUT, the tar batches, complete), and the total
   less the transfer (the bytes sent over loopback at loopback's measured raw throughput).
   Target: <= 2 s plus transfer. The blob store is a folder on the same disk as the database,
   and each push starts after a sync (and a PostgreSQL CHECKPOINT) of what came before.

The upload runs first (dropping the pages' database leaves the disk busy for a while).
Timings on a shared machine vary: the load average is printed with the table.
Prints a markdown table with the targets.
"""

from __future__ import annotations

import argparse
import html
import json
import os
import random
import re
import socket
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import psycopg
from sqlalchemy import func, insert, select, text

sys.path.insert(0, str(Path(__file__).resolve().parent))

from agentos_service import agentos_serve, pg_admin_url, pg_database, print_table, sqlite_database  # noqa: E402

from agentos.db import Database  # noqa: E402
from agentos.keys import issue_key  # noqa: E402
from agentos.models import AnchaRun, AnchaSceneResult, Workspace  # noqa: E402
from ancha.results.upload import RunSource, push_run  # noqa: E402

TARGET_PAGE_MS = 300
TARGET_UPLOAD_S = 2.0
HOT_SCENE = "orders-latency"
"""In every run: the scene whose chart is timed."""
COMMON_SCENE = "beta-exports"
RARE_SCENE = "legacy-import"
# Scenes besides the hot one, with the weight each is drawn with (5 of them per run).
SCENE_WEIGHTS = {
    "alert-handoff": 10, "beta-exports": 6, "export-question": 8, "offboarding": 8, "runbook-fix": 10,
    "invoice-dispute": 6, "pager-storm": 5, "onboarding": 6, "refund-abuse": 4, "quota-breach": 4,
    "schema-drift": 4, RARE_SCENE: 0.06,
}
TRIAL_FILES = ("agent.log", "calls.jsonl", "checks.json", "records.jsonl", "replay.json", "trace.jsonl", "world.json")


# --- services -------------------------------------------------------------------------------


def _blobs(folder: Path) -> dict[str, str]:
    """The served app's blob store: a folder of the bench's own."""
    return {"AGENTOS_BLOB_URL": folder.resolve().as_uri()}


def _sha(rng: random.Random) -> str:
    return f"{rng.getrandbits(256):064x}"


def _summary(rng: random.Random, run_id: str, started: datetime, scenes: list[tuple[str, str]]) -> dict[str, Any]:
    """A summary.json as `ancha run` writes it (5 trials a scene); ``scenes``: (name, outcomes)."""
    entries = []
    for name, outcomes in scenes:
        trials = [{"trial": i + 1, "verdict": "passed" if o == "P" else "failed", "status": "done",
                   "reason": None if o == "P" else "a required check failed: resolved",
                   "timings": {"world_s": round(rng.uniform(0.001, 0.03), 4),
                               "agent_s": round(rng.uniform(0.1, 9), 4),
                               "total_s": round(rng.uniform(0.15, 10), 4),
                               "simulated_s": round(rng.uniform(0.1, 300), 3)}}
                  for i, o in enumerate(outcomes)]
        passed = outcomes.count("P")
        entries.append({
            "scene": name, "path": f"/home/runner/work/app/app/scenes/{name}/scene.yaml", "source_hash": _sha(rng),
            "trials": len(outcomes), "ran": len(outcomes), "passed": passed, "failed": len(outcomes) - passed,
            "invalid": 0, "pass_rate": passed / len(outcomes), "k": len(outcomes),
            "pass_hat_k": passed == len(outcomes), "pass_at_k": passed > 0, "min_pass_rate": 0.8,
            "gate_met": passed / len(outcomes) >= 0.8, "trial_results": trials,
        })
    return {
        "run_id": run_id, "started_at": started.isoformat() + "Z", "duration_s": round(rng.uniform(20, 600), 3),
        "interrupted": False, "exit_code": 0 if all(e["gate_met"] for e in entries) else 1,
        "seed": rng.getrandbits(62), "server": "embedded",
        "config": {"agent": {"command": "python agents/support_bot.py", "cwd": None, "env": [], "pass_env": [],
                             "input": "command", "execution": {"mode": "host", "image": None, "env": []}},
                   "scenes": ["scenes/**/scene.yaml"], "trials": 5, "parallel": 4, "min_pass_rate": 0.8,
                   "server": None},
        "scenes": entries,
    }


def _manifest(rng: random.Random, scenes: list[str]) -> list[dict[str, Any]]:
    files = [{"path": "summary.json", "size": rng.randint(6000, 9000), "sha256": _sha(rng)}]
    for scene in scenes:
        for trial in range(1, 6):
            for name in TRIAL_FILES:
                files.append({"path": f"{scene}/{trial}/{name}", "size": rng.randint(80, 70000), "sha256": _sha(rng)})
        files.append({"path": f"_scenes/{scene}/scene.yaml", "size": rng.randint(1000, 6000), "sha256": _sha(rng)})
    return files


def insert_history(db: Database, workspace_id: str, runs: int, seed: int = 7) -> dict[str, Any]:
    """RUNS complete runs of 6 scenes over ~200 days: 50% on main, the rest on 23 other branches;
    a branch moves to a new commit on one run in four. Returns what the pages are filtered by."""
    rng = random.Random(seed)
    branches = ["main"] + [f"feature/{word}-{n}" for n, word in enumerate((
        "search", "export", "billing", "oauth", "retries", "cache", "slack-bot", "pager", "invoices", "audit",
        "locale", "metrics", "webhooks", "quotas", "sso", "onboarding", "refunds", "dedupe", "timeouts", "alerts",
        "release-2", "release-3", "docs"))]
    heads = {b: _sha(rng)[:40] for b in branches}
    others = list(SCENE_WEIGHTS)
    weights = [SCENE_WEIGHTS[s] for s in others]
    base_rate = {s: rng.uniform(0.6, 0.98) for s in [HOT_SCENE, *others]}
    start = datetime(2026, 6, 1)
    step = timedelta(days=200) / runs
    run_table, scene_table = AnchaRun.__table__, AnchaSceneResult.__table__
    batch_runs: list[dict[str, Any]] = []
    batch_scenes: list[dict[str, Any]] = []
    counts: dict[str, int] = {}
    on_branch: dict[str, int] = {}

    def flush() -> None:
        with db.write_connection() as conn:
            conn.execute(insert(run_table), batch_runs)
            conn.execute(insert(scene_table), batch_scenes)
        batch_runs.clear()
        batch_scenes.clear()

    for index in range(runs):
        branch = "main" if rng.random() < 0.5 else rng.choice(branches[1:])
        if rng.random() < 0.25:
            heads[branch] = _sha(rng)[:40]
        commit = heads[branch]
        started = start + step * index + timedelta(seconds=rng.uniform(0, 30))
        run_id = f"{started:%Y%m%dT%H%M%SZ}-{rng.getrandbits(24):06x}"
        picked: list[str] = []
        while len(picked) < 5:
            scene = rng.choices(others, weights)[0]
            if scene not in picked:
                picked.append(scene)
        names = [HOT_SCENE, *picked]
        scenes = [(name, "".join("P" if rng.random() < base_rate[name] else "F" for _ in range(5))) for name in names]
        summary = _summary(rng, run_id, started, scenes)
        manifest = _manifest(rng, names)
        pk = f"r{index:011d}"
        batch_runs.append({
            "id": pk, "workspace_id": workspace_id, "run_id": run_id, "status": "complete", "started_at": started,
            "uploaded_at": started + timedelta(minutes=6), "completed_at": started + timedelta(minutes=6, seconds=2),
            "commit": commit, "branch": branch, "ci_provider": "github",
            "ci_url": f"https://github.com/acme/support-bot/actions/runs/{9000000 + index}/attempts/1",
            "agent_version": f"1.{index // 2000}.{index % 7}", "exit_code": summary["exit_code"],
            "scenes": len(names), "trials": 5 * len(names), "passed": sum(o.count("P") for _, o in scenes),
            "gate_met": summary["exit_code"] == 0, "bytes": sum(f["size"] for f in manifest),
            "manifest": manifest, "summary": summary, "uploaded_by": None,
        })
        for entry in summary["scenes"]:
            counts[entry["scene"]] = counts.get(entry["scene"], 0) + 1
            batch_scenes.append({
                "run_pk": pk, "scene": entry["scene"], "workspace_id": workspace_id, "run_id": run_id,
                "started_at": started, "commit": commit, "branch": branch, "trials": 5, "passed": entry["passed"],
                "failed": entry["failed"], "invalid": 0, "pass_rate": entry["pass_rate"], "min_pass_rate": 0.8,
                "gate_met": entry["gate_met"],
                "outcomes": "".join("P" if t["verdict"] == "passed" else "F" for t in entry["trial_results"]),
                "source_hash": entry["source_hash"],
            })
        on_branch[branch] = on_branch.get(branch, 0) + 1
        if len(batch_runs) == 500:
            flush()
    if batch_runs:
        flush()
    with db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        for table in ("ancha_runs", "ancha_scene_results"):
            conn.execute(text(f"ANALYZE {table}" if db.is_sqlite else f"VACUUM ANALYZE {table}"))
    return {"branch": branches[3], "on_branch": on_branch.get(branches[3], 0), "counts": counts}


@dataclass
class Timing:
    samples: list[float] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def p95(self) -> float:
        ordered = sorted(self.samples)
        return ordered[max(0, round(len(ordered) * 0.95) - 1)]


def time_page(client: httpx.Client, path: str, requests: int, expect: str, count: int) -> Timing:
    """``requests`` GETs after 3 warm-ups; each must be a 200 that holds ``expect`` ``count`` times."""
    timing = Timing()
    for round_ in range(requests + 3):
        started = time.perf_counter()
        answer = client.get(path)
        elapsed = (time.perf_counter() - started) * 1000
        if answer.status_code != 200 or answer.text.count(expect) != count:
            raise SystemExit(f"GET {path} answered {answer.status_code}, with {answer.text.count(expect)}"
                             f" {expect!r} where {count} were expected: {answer.text[:300]}")
        if round_ >= 3:
            timing.samples.append(elapsed)
    return timing


_OLDER = re.compile(r'<a id="older" href="([^"]+)"')


def older_link(page: str) -> str:
    found = _OLDER.search(page)
    if found is None:
        raise SystemExit("the runs page has no `older runs` link")
    return html.unescape(found.group(1))


def bench_pages(runs: int, requests: int, deep_pages: int) -> list[tuple[str, Timing]]:
    with pg_database() as url, tempfile.TemporaryDirectory() as tmp:
        db = Database(url)
        key = issue_key(db, "bench", "viewer")
        with db.read() as session:
            workspace_id = session.scalar(select(Workspace.id).where(Workspace.name == "bench"))
        assert workspace_id is not None
        started = time.perf_counter()
        shape = insert_history(db, workspace_id, runs)
        db.dispose()
        counts = shape["counts"]
        print(f"inserted {runs:,} runs in {time.perf_counter() - started:.1f} s; scenes in runs: "
              + ", ".join(f"{s} {n:,}" for s, n in sorted(counts.items(), key=lambda kv: -kv[1])), file=sys.stderr)
        results: list[tuple[str, Timing]] = []
        with agentos_serve(url, env=_blobs(Path(tmp) / "blobs")) as base, httpx.Client(base_url=base, timeout=60) as client:
            signed = client.post("/ui/sign-in", data={"key": key})
            if signed.status_code != 303 or "agentos_session" not in client.cookies:
                raise SystemExit(f"signing in failed: {signed.status_code} {signed.text[:200]}")
            n = f"{runs:,} runs"
            row, page_rows = 'class="run-row"', min(50, runs)
            pages = [
                (f"runs page, first page ({n})", "/ui/", row, page_rows),
                (f"runs page, branch {shape['branch']} ({n})", "/ui/?branch=" + shape["branch"], row,
                 min(50, shape["on_branch"])),
                (f"runs page, scene {COMMON_SCENE} (in {counts[COMMON_SCENE]:,} runs)", f"/ui/?scene={COMMON_SCENE}",
                 row, min(50, counts[COMMON_SCENE])),
                (f"runs page, scene {RARE_SCENE} (in {counts.get(RARE_SCENE, 0):,} runs)", f"/ui/?scene={RARE_SCENE}",
                 row, min(50, counts.get(RARE_SCENE, 0))),
            ]
            path = "/ui/"
            for _ in range(deep_pages):
                path = older_link(client.get(path).text)
            pages.append((f"runs page, {deep_pages} pages deep by `older runs` ({n})", path, row,
                          min(50, runs - 50 * deep_pages)))
            pages.append((f"scene chart /ui/scenes/{HOT_SCENE} (in {counts[HOT_SCENE]:,} runs; newest 1,000)",
                          f"/ui/scenes/{HOT_SCENE}", 'id="pass-rate-chart"', 1))
            for name, page, expect, count in pages:
                results.append((name, time_page(client, page, requests, expect, count)))
        return results


# --- part 2: an upload ----------------------------------------------------------------------

# Per trial, the bytes of each file in the bundled examples' scenes (their trial 1).
SCENE_SHAPES: dict[str, dict[str, int]] = {
    "alert-handoff": {"agent.log": 82, "calls.jsonl": 3139, "checks.json": 2346, "records.jsonl": 351,
                      "trace.jsonl": 8560, "world.json": 9126},
    "beta-exports": {"agent.log": 77, "calls.jsonl": 4400, "checks.json": 4618, "records.jsonl": 6952,
                     "trace.jsonl": 19573, "world.json": 13282},
    "export-question": {"agent.log": 89, "calls.jsonl": 1443, "checks.json": 1482, "records.jsonl": 366,
                        "trace.jsonl": 3831, "world.json": 8387},
    "offboarding": {"agent.log": 75, "calls.jsonl": 2808, "checks.json": 2026, "records.jsonl": 361,
                    "trace.jsonl": 7472, "world.json": 12368},
    "orders-latency": {"agent.log": 334, "calls.jsonl": 6557, "checks.json": 4888, "records.jsonl": 1507,
                       "trace.jsonl": 44459, "world.json": 34927},
    "runbook-fix": {"agent.log": 71, "calls.jsonl": 5522, "checks.json": 3001, "records.jsonl": 2394,
                    "trace.jsonl": 69636, "world.json": 51347},
}


def _jsonl(rng: random.Random, size: int, kind: str) -> bytes:
    lines: list[str] = []
    total = 0
    seq = 0
    while total < size:
        seq += 1
        line = json.dumps({"seq": seq, "at": f"2026-03-02T14:{seq // 60 % 60:02d}:{seq % 60:02d}.{rng.randint(0, 999999):06d}Z",
                           "actor": rng.choice(["agent", "world"]), "tool": rng.choice(["slack", "github", "pagerduty"]),
                           "method": rng.choice(["GET", "POST", "PUT"]), "path": f"/api/{kind}/{rng.getrandbits(40):x}",
                           "status": 200, "request": {"text": f"{rng.getrandbits(128):032x}"},
                           "response": {"ok": True, "ts": f"{rng.getrandbits(30)}.{seq:06d}"}})
        lines.append(line)
        total += len(line) + 1
    return ("\n".join(lines) + "\n").encode()[:size]


def build_run(folder: Path, trials: int, seed: int = 11) -> Path:
    """A finished run of ``trials`` trials over the six example scenes' shapes, with each scene's
    source file (pushed under _scenes/); returns the run folder."""
    rng = random.Random(seed)
    run_id = "20261203T123400Z-bench0"
    run = folder / run_id
    scenes = list(SCENE_SHAPES)
    per_scene = [trials // len(scenes) + (1 if i < trials % len(scenes) else 0) for i in range(len(scenes))]
    outcomes = []
    for scene, count in zip(scenes, per_scene, strict=True):
        source = folder / "scenes" / scene / "scene.yaml"
        source.parent.mkdir(parents=True, exist_ok=True)
        source.write_text(f"name: {scene}\ntask: Handle it.\n" + "# padding\n" * 200)
        verdicts = ""
        for trial in range(1, count + 1):
            where = run / scene / str(trial)
            where.mkdir(parents=True)
            sizes = SCENE_SHAPES[scene]
            for name in ("calls.jsonl", "records.jsonl", "trace.jsonl"):
                (where / name).write_bytes(_jsonl(rng, sizes[name] + rng.randint(-200, 200), name.split(".")[0]))
            for name in ("checks.json", "world.json"):
                body = json.dumps({"scene": scene, "trial": trial, "data": [
                    {"id": rng.getrandbits(48), "text": f"{rng.getrandbits(192):048x}"}
                    for _ in range(sizes[name] // 90)]}, indent=1)
                (where / name).write_text(body)
            passed = rng.random() < 0.85
            verdicts += "P" if passed else "F"
            (where / "agent.log").write_text("x" * sizes["agent.log"])
            (where / "replay.json").write_text(json.dumps({"env_id": f"env_{rng.getrandbits(48):012x}", "seed": 42,
                                                           "trial": trial, "scene": scene}, indent=2))
            if scene == "orders-latency":
                digest = _sha(rng)
                (where / "state").mkdir()
                (where / "state" / "incident.json").write_text('{"status": "resolved"}\n')
                (where / "state-journal" / "objects").mkdir(parents=True)
                (where / "state-journal" / "objects" / digest).write_text('{"status": "resolved"}\n')
                (where / "state-journal" / "index.jsonl").write_text(
                    json.dumps({"seq": 9, "at": "2026-03-02T14:03:06Z", "files": {"incident.json": digest}}) + "\n")
        outcomes.append((scene, verdicts))
    summary = _summary(rng, run_id, datetime(2026, 12, 3, 12, 34), [])
    for scene, verdicts in outcomes:
        entry = _summary(rng, run_id, datetime(2026, 12, 3, 12, 34), [(scene, verdicts)])["scenes"][0]
        entry["path"] = str(folder / "scenes" / scene / "scene.yaml")
        summary["scenes"].append(entry)
    (run / "summary.json").write_text(json.dumps(summary, indent=2))
    return run


def loopback_throughput(megabytes: int = 256) -> float:
    """Bytes a second one TCP connection carries over loopback (a reader discarding them)."""
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    received = 0

    def read() -> None:
        nonlocal received
        conn, _ = server.accept()
        with conn:
            while data := conn.recv(1 << 20):
                received += len(data)

    reader = threading.Thread(target=read)
    reader.start()
    block = os.urandom(1 << 20)
    started = time.perf_counter()
    with socket.create_connection(("127.0.0.1", port)) as conn:
        for _ in range(megabytes):
            conn.sendall(block)
    reader.join()
    elapsed = time.perf_counter() - started
    server.close()
    return received / elapsed


@dataclass
class Request:
    method: str
    path: str
    sent: int
    began: float
    ended: float


class TimedTransport(httpx.HTTPTransport):
    """Records each request's start, its answer's arrival and the body bytes it sent."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[Request] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        began = time.perf_counter()
        answer = super().handle_request(request)
        answer.read()
        self.requests.append(Request(request.method, request.url.path, int(request.headers.get("content-length", 0)),
                                     began, time.perf_counter()))
        return answer


@dataclass
class Push:
    total: float
    hashing: float
    manifest: float
    batches: float
    batch_count: int
    packing: float
    complete: float
    sent_bytes: int
    files: int


def push_once(run: Path, base: str, key: str, run_id: str) -> Push:
    summary = json.loads((run / "summary.json").read_text())
    summary["run_id"] = run_id
    (run / "summary.json").write_text(json.dumps(summary, indent=2))
    transport = TimedTransport()
    with httpx.Client(transport=transport, timeout=120) as client:
        started = time.perf_counter()
        uploaded = push_run(run, base, key, RunSource(commit="5e6e501" + "0" * 33, branch="main"), client=client)
        ended = time.perf_counter()
    requests = transport.requests
    put = next(r for r in requests if r.method == "PUT")
    batches = [r for r in requests if r.method == "POST" and r.path.endswith("/files")]
    done = next(r for r in requests if r.path.endswith("/complete"))
    answered = sum(r.ended - r.began for r in requests)
    if uploaded.already_there or not uploaded.sent_files:
        raise SystemExit(f"push of {run_id} sent nothing: {uploaded}")
    return Push(total=ended - started, hashing=put.began - started, manifest=put.ended - put.began,
                batches=sum(r.ended - r.began for r in batches), batch_count=len(batches),
                packing=(ended - started) - answered - (put.began - started), complete=done.ended - done.began,
                sent_bytes=sum(r.sent for r in requests), files=uploaded.sent_files)


def check_stored(url: str, run_id: str, scenes: int) -> None:
    db = Database(url, run_migrations=False)
    try:
        with db.read() as session:
            run = session.scalar(select(AnchaRun).where(AnchaRun.run_id == run_id))
            rows = session.scalar(select(func.count()).select_from(AnchaSceneResult)
                                  .where(AnchaSceneResult.run_id == run_id))
        if run is None or run.status != "complete" or rows != scenes:
            raise SystemExit(f"run {run_id} was not stored complete with {scenes} scene rows")
    finally:
        db.dispose()


def settle_disk() -> None:
    """Write out what came before (the run folder just built, the last push, PostgreSQL's
    buffers of the 10,000 runs of the pages), so a push's fsyncs do not queue behind it."""
    admin = pg_admin_url()
    if admin is not None:
        try:
            with psycopg.connect(admin, autocommit=True) as conn:
                conn.execute("CHECKPOINT")
        except psycopg.Error:
            pass  # not a superuser: the OS's sync below still helps
    os.sync()


def bench_upload(setup: str, trials: int, pushes: int) -> tuple[Push, list[Push]]:
    """The median push (by total) of ``pushes``, and all of them."""
    with tempfile.TemporaryDirectory(dir=os.environ.get("AGENTOS_BENCH_TMP")) as tmp:
        folder = Path(tmp)
        run = build_run(folder / "project", trials)
        with (sqlite_database() if setup == "sqlite" else pg_database()) as url:
            db = Database(url)
            key = issue_key(db, "bench", "ci")
            db.dispose()
            done: list[Push] = []
            with agentos_serve(url, env=_blobs(folder / "blobs")) as base:
                for index in range(pushes):
                    run_id = f"20261203T123400Z-bench{index}"
                    settle_disk()
                    done.append(push_once(run, base, key, run_id))
                    check_stored(url, run_id, len(SCENE_SHAPES))
    return sorted(done, key=lambda p: p.total)[len(done) // 2], done


# --- the table ------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10_000, help="runs inserted for the pages")
    parser.add_argument("--requests", type=int, default=30, help="timed GETs of each page")
    parser.add_argument("--deep-pages", type=int, default=100, help="`older runs` links followed for the deep page")
    parser.add_argument("--trials", type=int, default=100, help="trials of the pushed run")
    parser.add_argument("--pushes", type=int, default=5, help="pushes on each database (the median is reported)")
    parser.add_argument("--only", default="pages,upload", help="comma-separated parts to run")
    parser.add_argument("--setups", default="sqlite,postgresql", help="databases the upload is timed on")
    args = parser.parse_args()
    parts = set(args.only.split(","))

    rows: list[tuple[str, str, str, Any]] = []
    # The upload first: the pages' 10,000 runs, inserted and then dropped, leave the disk busy for a while.
    if "upload" in parts:
        throughput = loopback_throughput()
        rows.append(("loopback raw throughput (one TCP connection)", f"{throughput / 1e6:,.0f} MB/s", "-", "-"))
        for setup in args.setups.split(","):
            label = {"sqlite": "SQLite", "postgresql": "PostgreSQL"}[setup]
            try:
                push, pushes = bench_upload(setup, args.trials, args.pushes)
            except LookupError as missing:
                rows.append((f"upload, {label}", f"skipped: {missing}", f"<= {TARGET_UPLOAD_S} s + transfer", "-"))
                continue
            transfer = push.sent_bytes / throughput
            where = f"push_run of a {args.trials}-trial run ({push.files} files, {push.sent_bytes / 1e6:.1f} MB), {label}"
            rows.append((f"{where}: total (median of {len(pushes)}; all: "
                         + ", ".join(f"{p.total:.2f}" for p in pushes) + " s)", f"{push.total:.2f} s", "-", "-"))
            rows.append((f"{where}: reading and hashing the files (client)", f"{push.hashing * 1000:.0f} ms", "-", "-"))
            rows.append((f"{where}: manifest PUT", f"{push.manifest * 1000:.0f} ms", "-", "-"))
            rows.append((f"{where}: {push.batch_count} tar batch(es) POSTed", f"{push.batches * 1000:.0f} ms", "-", "-"))
            rows.append((f"{where}: packing the tars (client)", f"{push.packing * 1000:.0f} ms", "-", "-"))
            rows.append((f"{where}: complete", f"{push.complete * 1000:.0f} ms", "-", "-"))
            rows.append((f"{where}: total less transfer ({transfer * 1000:.1f} ms at loopback's throughput)",
                         f"{push.total - transfer:.2f} s", f"<= {TARGET_UPLOAD_S:.0f} s",
                         push.total - transfer <= TARGET_UPLOAD_S))
    if "pages" in parts:
        try:
            for name, timing in bench_pages(args.runs, args.requests, args.deep_pages):
                ok = timing.p95 <= TARGET_PAGE_MS
                rows.append((f"GET {name}, PostgreSQL: median / p95 of {args.requests}",
                             f"{timing.median:.1f} / {timing.p95:.1f} ms", f"<= {TARGET_PAGE_MS} ms", ok))
        except LookupError as missing:
            rows.append(("history pages", f"skipped: {missing}", f"<= {TARGET_PAGE_MS} ms", "-"))
    print_table(rows)


if __name__ == "__main__":
    main()
