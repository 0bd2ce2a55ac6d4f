"""Ops replicas benchmarks: Datadog logs search, PagerDuty incident pages, and a day-long
incident scene with escalations every 5 minutes and an agent waiting on the feed.

    .venv/bin/python bench/ops_replicas.py

Every figure is measured over HTTP against a real embedded server, with the vendors' own
wire formats. Prints a markdown table with each figure and its target. No peer replicates
Datadog or PagerDuty, so there is no ratio. Not part of the test suite.
"""

from __future__ import annotations

import json
import ssl
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import yaml

from ancha.scene.loading import load_scene
from ancha.server.embedded import EmbeddedServer
from ancha.world.registry import catalog

START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
SERVICES = ("orders", "payments", "search", "checkout", "auth", "billing", "email", "cart")
STATUSES = ("info", "info", "info", "warn", "error")
LOG_LINES = 100_000
INCIDENTS = 10_000


def resolved(scene: dict[str, Any], files: dict[str, str] | None = None) -> dict[str, Any]:
    """A scene as `ancha run` sends it: written as YAML (with its files), loaded and resolved."""
    folder = Path(tempfile.mkdtemp(prefix="ops-bench-"))
    for name, text in (files or {}).items():
        (folder / name).write_text(text)
    (folder / "scene.yaml").write_text(yaml.safe_dump(scene, sort_keys=False))
    return load_scene(folder / "scene.yaml", catalog()).model_dump(mode="json", by_alias=True)


def _env(http: httpx.Client, scene: dict[str, Any], trial: int = 1) -> dict[str, Any]:
    made = http.post("/envs", json={"scene": scene, "trial": trial}, timeout=300)
    assert made.status_code == 201, made.text[:500]
    return dict(made.json())


def _p(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


# --- Datadog logs search -----------------------------------------------------------------


def _logs() -> list[dict[str, Any]]:
    lines = []
    for i in range(LOG_LINES):
        status = STATUSES[i % len(STATUSES)]
        lines.append({"service": SERVICES[i % len(SERVICES)], "status": status, "host": f"host-{i % 40}",
                      "message": f"request {i} {'timed out waiting for db' if status == 'error' else 'served'}",
                      "at": (START - timedelta(seconds=LOG_LINES - i)).isoformat(),
                      "attributes": {"http": {"status_code": 500 if status == "error" else 200}, "user": f"u{i % 997}"}})
    return lines


def bench_logs(http: httpx.Client) -> list[tuple[str, float, float]]:
    scene = resolved({"name": "logs", "clock": {"start": START.isoformat()}, "world": {"datadog": {
        "logs_file": "logs.jsonl"}}}, {"logs.jsonl": "".join(json.dumps(line) + "\n" for line in _logs())})
    t = time.perf_counter()
    context = _env(http, scene)
    built = time.perf_counter() - t
    tool = context["tools"]["datadog"]
    headers = {"DD-API-KEY": tool["api_key"], "DD-APPLICATION-KEY": tool["app_key"], "Content-Type": "application/json"}
    url = f"{tool['url']}/api/v2/logs/events/search"
    queries = {
        "service:orders status:error": {},
        "service:payments @http.status_code:5*": {},
        "(service:orders OR service:cart) -status:info host:host-7": {},
        '"timed out waiting"': {},
        '"payment declined"': {},  # in no line: free text has no index, so this scans every line
        "*": {},
    }
    rows = [(f"logs: build a world of {LOG_LINES:,} lines (POST /envs)", built * 1000, 0.0)]
    t = time.perf_counter()
    first = http.post(url, content=json.dumps({"filter": {"query": "upstream", "from": "now-2d", "to": "now"}}),
                      headers=headers)
    assert first.status_code == 200, first.text[:300]
    rows.append(("logs: first free-text search (indexes the messages' words)", (time.perf_counter() - t) * 1000, 0.0))
    for query in queries:
        body = json.dumps({"filter": {"query": query, "from": "now-2d", "to": "now"}, "page": {"limit": 50},
                           "sort": "-timestamp"})
        samples = []
        for _ in range(60):
            t = time.perf_counter()
            answer = http.post(url, content=body, headers=headers)
            samples.append(time.perf_counter() - t)
            assert answer.status_code == 200, answer.text[:300]
        rows.append((f"logs search `{query}` (50 per page)", _p(samples, 0.5), _p(samples, 0.95)))
    http.delete(f"/envs/{context['env_id']}")
    return rows


# --- PagerDuty incident pages ----------------------------------------------------------


def bench_incidents(http: httpx.Client, verify: ssl.SSLContext) -> list[tuple[str, float, float]]:
    seed = {"users": [{"ref": "u1", "name": "U", "email": "u@acme.test"}],
            "escalation_policies": [{"ref": "ep", "name": "EP", "rules": [{"delay": "10m", "targets": ["$u1"]}]}],
            "services": [{"ref": "svc", "name": "Orders", "escalation_policy": "$ep"}],
            "incidents": [{"service": "$svc", "title": f"incident {i}",
                           "status": ("resolved", "acknowledged", "triggered")[i % 3],
                           "at": (START - timedelta(minutes=INCIDENTS - i)).isoformat()} for i in range(INCIDENTS)]}
    context = _env(http, resolved({"name": "incidents", "clock": {"start": START.isoformat()},
                                   "world": {"pagerduty": seed}}))
    tool = context["tools"]["pagerduty"]
    rows = []
    with httpx.Client(verify=verify, headers={"Authorization": f"Token token={tool['token']}"}) as pd:
        for label, query in (("all", "date_range=all"), ("statuses[]=triggered", "date_range=all&statuses[]=triggered")):
            for offset in (0, 2_500, 5_000, 9_900) if label == "all" else (0, 1_000, 2_000, 3_200):
                samples = []
                for _ in range(30):
                    t = time.perf_counter()
                    answer = pd.get(f"{tool['url']}/incidents?{query}&limit=100&offset={offset}")
                    samples.append(time.perf_counter() - t)
                    assert answer.status_code == 200 and answer.json()["incidents"], answer.text[:300]
                rows.append((f"incidents {label}, page of 100 at offset {offset:,}", _p(samples, 0.5),
                             _p(samples, 0.95)))
    http.delete(f"/envs/{context['env_id']}")
    return rows


# --- a day-long incident scene ---------------------------------------------------------


def day_scene() -> dict[str, Any]:
    """Every two hours an incident is triggered; nobody acknowledges it, so it escalates every
    5 minutes through three rules, eight times round (24 escalations per incident, 288 in the
    day), each one a webhook on the agent's feed."""
    users = [{"ref": f"pd_{n}", "name": n.title(), "email": f"{n}@acme.test"} for n in ("ana", "ben", "cy")]
    return resolved({
        "name": "day-of-pages",
        "clock": {"start": START.isoformat(), "limit": "24h10m"},
        "world": {"pagerduty": {
            "users": users,
            "escalation_policies": [{"ref": "ep", "name": "orders", "num_loops": 8,
                                     "rules": [{"delay": "5m", "targets": ["$" + u["ref"]]} for u in users]}],
            "services": [{"ref": "svc", "name": "orders", "escalation_policy": "$ep"}],
        }},
        "world_rules": {"events": [{"at": f"{hour}h", "do": [{"pagerduty.trigger": {
            "service": "$svc", "title": f"orders p99 above 2s ({hour}h)"}}]} for hour in range(0, 24, 2)]},
    })


def bench_day(http: httpx.Client, trials: int = 3) -> list[tuple[str, float, float]]:
    samples, events = [], 0
    scene = day_scene()
    for trial in range(1, trials + 1):
        t = time.perf_counter()
        context = _env(http, scene, trial)
        feed = {"Authorization": f"Bearer {context['events']['token']}"}
        cursor, seen = "0", 0
        while True:  # the agent: wait on the feed, read what arrives, wait again
            answer = http.get(context["events"]["url"], params={"after": cursor, "wait": "30s"}, headers=feed,
                              timeout=40).json()
            cursor, seen = answer["cursor"], seen + len(answer["events"])
            status = http.get(f"/envs/{context['env_id']}").json()
            if status["status"] != "running":
                break
        samples.append(time.perf_counter() - t)
        events = seen
        http.delete(f"/envs/{context['env_id']}")
    return [(f"24 h scene, {events} webhooks to a feed-waiting agent (real s per trial)",
             statistics.median(samples), max(samples))]


def main() -> None:
    with EmbeddedServer() as server, httpx.Client(base_url=server.url, timeout=60) as http:
        verify = ssl.create_default_context(cadata=server.tls.ca_pem)
        rows = bench_logs(http) + bench_incidents(http, verify)
        day = bench_day(http)
    print("| measure | p50 ms | p95 ms | target |\n|---|---:|---:|---|")
    for label, p50, p95 in rows:
        target = "p50 ≤ 5 ms" if label.startswith("logs search") else (
            "flat per page" if label.startswith("incidents") else "")
        print(f"| {label} | {p50:.1f} | {f'{p95:.1f}' if p95 else '–'} | {target} |")  # one-off: no p95
    print("\n| measure | median | max | target |\n|---|---:|---:|---|")
    for label, median, worst in day:
        print(f"| {label} | {median:.2f} s | {worst:.2f} s | ≤ 2 s |")


if __name__ == "__main__":
    main()
