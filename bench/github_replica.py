"""Benchmark the GitHub replica over keep-alive loopback HTTP against the peer ``emulate``.

The Ancha server (``ancha serve``, as users run it) and emulate@0.12.2 (bench/emulate_peer.py)
each run in a child process, one measure (and one server answering) at a time, with the client (wrk when
installed, else Python ``http.client`` on 1 and 4 keep-alive connections) in this process: on a
2-core machine, server and client each have a core. ``--pin`` pins the server to core 0 and the
client to core 1 (best on an idle machine; on a loaded one, pinned processes wait behind others).
Both are fresh per measure: emulate answers 403 after 5,000 calls per token, and the replica
after GitHub's 5,000 core calls an hour per user. emulate's seed has no issues, so they are
created through its API, spread over tokens other than the measured one. With the Python client,
request rates are the best of 3 rounds per measure (the machine may be shared), the rounds
alternating between Ancha and emulate so both meet the same spells of load, and latencies the
median of all rounds; with wrk, see ``wrk_measure`` (rates marked "~").

Measures, with our req/s, emulate's req/s and the ratio where emulate has the call:

- GET /repos/{o}/{r}/issues/{n} (get an issue);
- GET /repos/{o}/{r}/issues?per_page=100 on 500 and on 5,000 issues (list stays flat);
- POST /repos/{o}/{r}/issues/{n}/comments (a write);
- (targets against emulate, issue 13's as for Slack: reads >= 2x, the write >= 2.5x)
- git clone over smart HTTP of a 1,000-file repository and environment creation after the
  first trial, both from bench/github_git.py (targets <= 1 s and <= 50 ms).

Every loop is bounded by a request count and a time limit. Usage:

    .venv/bin/python bench/github_replica.py [--quick] [--requests 3000] [--connections 1,4] [--pin] [--no-peer]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

import emulate_peer  # noqa: E402
import github_git  # noqa: E402

from ancha.server.embedded import free_port  # noqa: E402

SERVER = ["-m", "ancha.cli", "serve", "--no-key", "--host", "127.0.0.1", "--port"]
"""The server as users run it (``ancha serve``: its event loop, HTTP protocol and connection limits);
keyless, as the peer is: the bench's own control calls carry no key, and no agent runs here."""
SERVER_CPUS = {0}
CLIENT_CPUS = {1}
ISSUE_BODY = "Steps to reproduce: open the export page, pick CSV, press Export. Nothing downloads."
PEER_CALLS_PER_TOKEN = 4_500  # emulate answers 403 at its 5,000th call per token


PINNING = [False]


def cpus_available() -> bool:
    return PINNING[0] and hasattr(os, "sched_setaffinity") and (os.cpu_count() or 1) >= 2


def pin(cpus: set[int]) -> Callable[[], None] | None:
    return (lambda: os.sched_setaffinity(0, cpus)) if cpus_available() else None


# --- the two servers ------------------------------------------------------------------------------


def ancha_scene(sizes: tuple[int, ...]) -> dict[str, Any]:
    def issues(n: int) -> list[dict[str, Any]]:
        return [{"title": f"Issue {i}", "body": ISSUE_BODY, "author": "gh_laura"} for i in range(1, n + 1)]

    repos: list[dict[str, Any]] = [
        {"ref": "orders", "name": "acme/orders", "files": {"README.md": "# orders\n"},
         "permissions": {"github_agent": "write"}, "issues": issues(1)}]
    repos += [{"name": f"acme/issues{n}", "permissions": {"github_agent": "write"}, "issues": issues(n)}
              for n in sizes]
    return {"name": "bench-github-replica", "clock": {"start": github_git.START},
            "world": {"github": {"users": [{"ref": "gh_laura", "login": "laura"}],
                                 "orgs": [{"login": "acme", "members": ["github_agent", "gh_laura"]}],
                                 "repos": repos}}}


def wait_until_up(port: int, deadline_s: float = 30) -> None:
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("the Ancha server did not start")


class AnchaServer:
    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> AnchaServer:
        self._proc = subprocess.Popen([sys.executable, *SERVER, str(self.port)], preexec_fn=pin(SERVER_CPUS),
                                      stdout=subprocess.DEVNULL)
        wait_until_up(self.port)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._proc is not None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait(timeout=5)


def peer_seed(tokens: list[str], repos: list[str]) -> dict[str, Any]:
    scopes = ["repo", "user", "admin:org", "admin:repo_hook"]
    return {"tokens": {t: {"login": "laura", "scopes": scopes} for t in tokens},
            "github": {"users": [{"login": "laura", "name": "Laura"}],
                       "orgs": [{"login": "acme", "members": [{"login": "laura", "role": "admin"}]}],
                       "repos": [{"owner": "acme", "name": name, "auto_init": True} for name in repos]}}


def seed_peer_issues(url: str, repo: str, count: int, tokens: list[str], time_limit: float) -> None:
    """Create ``count`` issues in emulate through its API (4 connections, tokens rotated)."""
    per_thread = [count // 4 + (1 if i < count % 4 else 0) for i in range(4)]
    deadline = time.monotonic() + time_limit
    errors: list[str] = []

    def work(index: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", int(url.rsplit(":", 1)[1]), timeout=30)
        made = 0
        try:
            while made < per_thread[index] and time.monotonic() < deadline and not errors:
                token = tokens[index + 4 * (made // PEER_CALLS_PER_TOKEN)]
                body = json.dumps({"title": f"Issue {index}-{made}", "body": ISSUE_BODY})
                conn.request("POST", f"/repos/acme/{repo}/issues", body,
                             {"Authorization": f"token {token}", "Content-Type": "application/json"})
                answer = conn.getresponse()
                answer.read()
                if answer.status != 201:
                    errors.append(f"seeding emulate: HTTP {answer.status}")
                made += 1
        finally:
            conn.close()
        if made < per_thread[index] and not errors:
            errors.append(f"seeding emulate: {made} of {per_thread[index]} issues in {time_limit:.0f} s")

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise RuntimeError(errors[0])


# --- the client -----------------------------------------------------------------------------------


@dataclass
class Call:
    label: str
    method: str
    path: str  # below the tool's base URL
    body: dict[str, Any] | None = None
    expect: int = 200
    items: int | None = None  # a list call's expected length
    ratio: float = 2.0  # the target against emulate: issue 13's, as for Slack (reads 2x, writes 2.5x)


@dataclass
class Result:
    rate: float
    p50_ms: float
    done: int
    bound: str = ""  # "~" when the rate is connections / mean latency (a wrk run stopped early)


ROUNDS = 3


def measure(targets: list[tuple[str, str]], call: Call, total: int, connections: int,
            time_limit: float) -> list[Result]:
    """Per target (base URL, token): the best of ``ROUNDS`` rounds' requests/s (the machine may be
    shared: the best round is the least disturbed) and the p50 latency over all rounds. Rounds
    alternate between the targets, so each sees the same spells of load. ``total`` requests and
    ``time_limit`` seconds bound each target's rounds together."""
    if shutil.which("wrk"):
        return [wrk_measure(url, token, call, connections, total, min(time_limit, 10.0)) for url, token in targets]
    rates: list[list[float]] = [[] for _ in targets]
    latencies: list[list[float]] = [[] for _ in targets]
    for _ in range(ROUNDS):
        for index, (url, token) in enumerate(targets):
            done, elapsed, mine = measure_round(url, token, call, total // ROUNDS, connections, time_limit / ROUNDS)
            rates[index].append(done / elapsed)
            latencies[index] += mine
    return [Result(max(r), statistics.median(lat) * 1000, len(lat)) for r, lat in zip(rates, latencies, strict=True)]


def measure_round(base_url: str, token: str, call: Call, total: int, connections: int,
                  time_limit: float) -> tuple[int, float, list[float]]:
    """(requests done, seconds, latencies) over ``connections`` keep-alive connections, stopping at
    ``total`` requests or ``time_limit`` seconds; every answer's status (and length) is checked."""
    host_port, _, prefix = base_url.removeprefix("http://").partition("/")
    host, _, port = host_port.partition(":")
    prefix = "/" + prefix if prefix else ""
    headers = {"Authorization": f"token {token}", "Accept": "application/vnd.github+json",
               "Content-Type": "application/json"}
    body = json.dumps(call.body) if call.body is not None else None
    per = [total // connections + (1 if i < total % connections else 0) for i in range(connections)]
    latencies: list[list[float]] = [[] for _ in range(connections)]
    errors: list[str] = []
    ready = threading.Barrier(connections + 1)

    def work(index: int) -> None:
        conn = http.client.HTTPConnection(host, int(port), timeout=30)
        try:
            conn.request(call.method, prefix + call.path, body, headers)  # open the connection before timing
            conn.getresponse().read()
        except OSError as exc:
            errors.append(f"{base_url}: {exc}")
        ready.wait()
        deadline = time.perf_counter() + time_limit
        mine = latencies[index]
        try:
            for _ in range(per[index]):
                if errors or time.perf_counter() > deadline:
                    break
                t = time.perf_counter()
                conn.request(call.method, prefix + call.path, body, headers)
                answer = conn.getresponse()
                data = answer.read()
                mine.append(time.perf_counter() - t)
                if answer.status != call.expect:
                    errors.append(f"{base_url}: {call.method} {call.path}: HTTP {answer.status} {data[:200]!r}")
                elif call.items is not None and len(json.loads(data)) != call.items:
                    errors.append(f"{base_url}: {call.method} {call.path}: {len(json.loads(data))} items, "
                                  f"not {call.items}")
        finally:
            conn.close()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(connections)]
    for thread in threads:
        thread.start()
    ready.wait()
    start = time.perf_counter()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - start
    if errors:
        raise RuntimeError(errors[0])
    flat = [x for lat in latencies for x in lat]
    return len(flat), elapsed, flat


def wrk_measure(base_url: str, token: str, call: Call, connections: int, total: int, time_limit: float) -> Result:
    """wrk (a C client: it measures the server, not the client). wrk runs for whole seconds, but
    both servers allow 5,000 calls per user or token: a short Python probe sizes the run and a
    Lua counter stops it at ``total`` answers. wrk then divides by its full duration, so a run
    that stopped early reports the closed-loop rate instead: connections / mean latency ("~")."""
    probe, probe_s, _ = measure_round(base_url, token, call, 100, 1, 2.0)
    stop_at = min(total, PEER_CALLS_PER_TOKEN) - probe - 2 * connections
    seconds = max(1, min(int(time_limit), int(stop_at / (4 * probe / probe_s))))
    lines = [f'wrk.method = "{call.method}"', f'wrk.headers["Authorization"] = "token {token}"',
             'wrk.headers["Content-Type"] = "application/json"']
    if call.body is not None:
        lines.append(f"wrk.body = {json.dumps(json.dumps(call.body))}")
    lines += ["local answered = 0", "function response(status, headers, body)", "  answered = answered + 1",
              f"  if answered >= {stop_at - connections} then wrk.thread:stop() end", "end"]
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as lua:
        lua.write("\n".join(lines) + "\n")
    try:
        out = subprocess.run(["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--latency", "-s", lua.name,
                              base_url + call.path],
                             capture_output=True, text=True, check=True, timeout=seconds + 30).stdout
    finally:
        Path(lua.name).unlink(missing_ok=True)
    if "Non-2xx" in out:
        raise RuntimeError(f"wrk saw errors: {out}")
    scale = {"us": 0.001, "ms": 1.0, "s": 1000.0}

    def ms(pattern: str) -> float:
        found = re.search(pattern + r"\s+([\d.]+)(us|ms|s)\b", out)
        if found is None:
            raise RuntimeError(f"wrk's output has no {pattern}: {out}")
        return float(found.group(1)) * scale[found.group(2)]

    done = int(re.search(r"(\d+) requests in", out).group(1))  # type: ignore[union-attr]
    if done >= stop_at - connections:
        return Result(connections * 1000 / ms("Latency"), ms("50%"), done, "~")
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    return Result(rate, ms("50%"), done)


# --- the benchmark --------------------------------------------------------------------------------


@dataclass
class Row:
    label: str
    connections: int | str
    ours: Result | None
    peer: Result | None
    peer_note: str = ""
    target: str = ""


def calls(sizes: tuple[int, ...]) -> list[tuple[Call, str, int]]:
    """(call, the repository it needs seeded with issues, how many issues)."""
    out: list[tuple[Call, str, int]] = [
        (Call("GET /repos/{o}/{r}/issues/{n} (get issue)", "GET", "/repos/acme/orders/issues/1"), "orders", 1)]
    for n in sizes:
        out.append((Call(f"GET /repos/{{o}}/{{r}}/issues?per_page=100 @ {n:,} issues", "GET",
                         f"/repos/acme/issues{n}/issues?per_page=100", items=min(n, 100)), f"issues{n}", n))
    out.append((Call("POST /repos/{o}/{r}/issues/{n}/comments (create comment)", "POST",
                     "/repos/acme/orders/issues/1/comments", {"body": "Benchmark comment: looking into it."},
                     expect=201, ratio=2.5), "orders", 1))
    return out


@contextmanager
def peer_target(repo: str, issues: int) -> Iterator[tuple[str, str]]:
    """A fresh emulate with ``issues`` issues in acme/{repo} (and acme/orders): (base URL, token)."""
    seeders = [f"seed_{i}" for i in range(4 * (issues // PEER_CALLS_PER_TOKEN + 1))]
    cpus = SERVER_CPUS if cpus_available() else None
    with emulate_peer.Emulate(peer_seed(["bench_token", *seeders], ["orders", repo]), cpus=cpus) as peer:
        seed_peer_issues(peer.url, repo, issues, seeders, time_limit=max(60.0, issues / 50))
        yield peer.url, "bench_token"


def in_process(sizes: tuple[int, ...], total: int, time_limit: float) -> list[tuple[str, float, float]]:
    """(label, best round's ops/s, ms per op) of the replica alone (``Environment.dispatch``, trace
    included, no HTTP): steadier than loopback HTTP on a shared machine."""
    from ancha.scene.model import Scene
    from ancha.world.environment import Environment
    from ancha.world.kernel.tool import ToolRequest

    out = []
    for call, repo, issues in calls(sizes):
        env = Environment("bench", Scene.model_validate(ancha_scene((issues,) if repo != "orders" else ())), 1)
        headers = {"authorization": f"token {env.tools['github'].credentials()['token']}",
                   "content-type": "application/json"}
        path, _, query = call.path.partition("?")
        request = ToolRequest(call.method, path, query=query, headers=headers,
                              body=json.dumps(call.body).encode() if call.body is not None else b"")
        best = 0.0
        deadline = time.monotonic() + time_limit
        for _ in range(ROUNDS):
            done = 0
            start = time.perf_counter()
            while done < total // ROUNDS and time.monotonic() < deadline:
                answer = env.dispatch("github", request)
                if answer.status != call.expect:
                    raise RuntimeError(f"{call.label}: {answer.status} {answer.body[:200]!r}")
                done += 1
            if done:
                best = max(best, done / (time.perf_counter() - start))
        out.append((call.label, best, 1000 / best if best else float("nan")))
    return out


@contextmanager
def ancha_target(server: AnchaServer, scene: dict[str, Any], trial: int) -> Iterator[tuple[str, str]]:
    """A fresh environment of ``scene``: (the GitHub tool's base URL, token)."""
    with httpx.Client(base_url=server.url, timeout=120) as client:
        answer = client.post("/envs", json={"scene": scene, "trial": trial})
        if answer.status_code != 201:
            raise RuntimeError(f"POST /envs: {answer.status_code} {answer.text[:500]}")
        context = answer.json()
        try:
            yield context["tools"]["github"]["url"], context["tools"]["github"]["token"]
        finally:
            client.delete(f"/envs/{context['env_id']}")


def peer_clone_note(url_seed_repo: str = "orders") -> str:
    """Whether emulate serves git's smart HTTP (it does not list it; probe rather than assume)."""
    with emulate_peer.Emulate(peer_seed(["bench_token"], [url_seed_repo]), cpus=SERVER_CPUS if cpus_available() else None) as peer:
        answer = httpx.get(f"{peer.url}/acme/{url_seed_repo}.git/info/refs?service=git-upload-pack",
                           headers={"Authorization": "token bench_token"}, timeout=10)
        kind = answer.headers.get("content-type", "")
        if answer.status_code == 200 and "git-upload-pack-advertisement" in kind:
            return ""
        return f"n/a: emulate has no git smart HTTP (info/refs answers {answer.status_code})"


def git_rows(server: AnchaServer, envs: int, clones: int, time_limit: float, peer_note: str) -> list[Row]:
    """bench/github_git.py's environment creation and clone, against this server."""
    rows: list[Row] = []
    with httpx.Client(base_url=server.url, timeout=120) as client:
        first, context = github_git.create_env(client, 1)
        contexts = [context]
        later: list[float] = []
        deadline = time.monotonic() + time_limit
        for trial in range(2, envs + 2):
            if time.monotonic() > deadline:
                break
            elapsed, made = github_git.create_env(client, trial)
            later.append(elapsed)
            contexts.append(made)
        p50 = statistics.median(later)
        rows.append(Row(f"environment creation, {github_git.FILES:,}-file repo (first trial, cold)", "-",
                        Result(1 / first, first * 1000, 1), None, "n/a: emulate has no environments"))
        rows.append(Row(f"environment creation, same scene, later trials (p50 of {len(later)})", "-",
                        Result(1 / p50, p50 * 1000, len(later)), None, "n/a: emulate has no environments",
                        f"<= 50 ms: {'met' if p50 <= 0.050 else 'NOT met'}"))
        if shutil.which("git"):
            times: list[float] = []
            deadline = time.monotonic() + time_limit
            for n in range(clones):
                if times and time.monotonic() > deadline:
                    break
                with tempfile.TemporaryDirectory() as folder:
                    times.append(github_git.clone(contexts[n % len(contexts)], Path(folder)))
            c50 = statistics.median(times)
            rows.append(Row(f"git clone over smart HTTP of acme/orders.git: {github_git.FILES:,} files + "
                            f"{github_git.COMMITS} commits (p50 of {len(times)})", 1, Result(1 / c50, c50 * 1000, len(times)), None,
                            peer_note, f"<= 1 s: {'met' if c50 <= 1.0 else 'NOT met'}"))
        for made in contexts:
            client.delete(f"/envs/{made['env_id']}")
    return rows


def print_table(rows: list[Row], client: str) -> None:
    print(f"| call (client: {client}) | conns | Ancha req/s | Ancha p50 ms | emulate req/s | emulate p50 ms "
          "| Ancha / emulate | target |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for row in rows:
        ours, peer = row.ours, row.peer
        timed_once = row.label.startswith(("environment", "git clone"))  # ms per operation, not a rate
        cells = [row.label, str(row.connections),
                 "-" if timed_once else (f"{ours.bound}{ours.rate:,.0f}" if ours else "n/a"),
                 f"{ours.p50_ms:.2f}" if ours else "n/a",
                 f"{peer.bound}{peer.rate:,.0f}" if peer else (row.peer_note or "n/a"),
                 f"{peer.p50_ms:.2f}" if peer else "n/a",
                 (f"{ours.rate / peer.rate:.2f}x" + (" ~" if ours.bound or peer.bound else "")) if ours and peer
                 else "n/a",
                 row.target]
        print("| " + " | ".join(cells) + " |")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="a fast smoke run: few requests, short limits")
    parser.add_argument("--requests", type=int, help="requests per measure (default 3,000; quick 300)")
    parser.add_argument("--connections", default=None, help="comma-separated (default 1,4; quick 1)")
    parser.add_argument("--time-limit", type=float, help="seconds per measure (default 10; quick 3)")
    parser.add_argument("--no-peer", action="store_true", help="skip emulate")
    parser.add_argument("--pin", action="store_true",
                        help="pin servers to core 0 and the client to core 1 (best on an idle machine; on a "
                             "loaded one, pinned processes queue behind others on their core)")
    options = parser.parse_args()
    PINNING[0] = options.pin
    total = options.requests or (300 if options.quick else 3000)
    total = min(total, PEER_CALLS_PER_TOKEN - 10)  # the peer's per-token budget
    connections = [int(c) for c in (options.connections or ("1" if options.quick else "1,4")).split(",")]
    time_limit = options.time_limit or (3.0 if options.quick else 10.0)
    sizes = (500, 5_000)
    if cpus_available():
        os.sched_setaffinity(0, CLIENT_CPUS)
    peer_reason = "skipped (--no-peer)" if options.no_peer else emulate_peer.unavailable()
    if peer_reason is None:
        try:
            emulate_peer.install()
        except (subprocess.SubprocessError, OSError) as exc:
            peer_reason = f"npm install emulate@{emulate_peer.VERSION} failed: {exc}"

    rows: list[Row] = []
    github_git.ensure_registered()
    started = time.monotonic()
    with AnchaServer() as server:
        trial = 0
        for call, repo, issues in calls(sizes):
            for conns in connections:
                # a fresh environment per measure: the replica limits each user to GitHub's 5,000
                # core calls an hour, as emulate does per token
                trial += 1
                peer: Result | None = None
                note = peer_reason or ""
                with ExitStack() as stack:
                    targets = [stack.enter_context(
                        ancha_target(server, ancha_scene((issues,) if repo != "orders" else ()), trial))]
                    if peer_reason is None:
                        try:
                            targets.append(stack.enter_context(peer_target(repo, issues)))
                        except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
                            note = f"n/a: {str(exc)[:120]}"
                    try:
                        results = measure(targets, call, total, conns, time_limit)
                    except RuntimeError as exc:
                        if len(targets) < 2 or not str(exc).startswith(targets[1][0]):
                            raise
                        note = f"n/a: {str(exc)[:120]}"  # the peer failed: measure ours alone, afresh
                        trial += 1
                        scene = ancha_scene((issues,) if repo != "orders" else ())
                        with ancha_target(server, scene, trial) as fresh:
                            results = measure([fresh], call, total, conns, time_limit)
                ours = results[0]
                peer = results[1] if len(results) > 1 else None
                target = ""
                if peer:
                    met = ours.rate >= call.ratio * peer.rate
                    target = f">= {call.ratio}x emulate: {'met' if met else 'NOT met'}"
                rows.append(Row(call.label, conns, ours, peer, note, target))
        flat = {r.label: r for r in rows if r.connections == connections[0] and "per_page" in r.label}
        small, large = (flat.get(f"GET /repos/{{o}}/{{r}}/issues?per_page=100 @ {n:,} issues") for n in sizes)
        if small and large and small.ours and large.ours:
            growth = small.ours.rate / large.ours.rate
            flatness = f"within 1.5x of @ 500: {growth:.2f}x, {'met' if growth <= 1.5 else 'NOT met'}"
            large.target = f"{large.target}; {flatness}" if large.target else flatness
        clone_note = peer_reason or ""
        if peer_reason is None:
            try:
                clone_note = peer_clone_note()
            except (RuntimeError, OSError, httpx.HTTPError) as exc:
                clone_note = f"n/a: {str(exc)[:120]}"
        rows += git_rows(server, 5 if options.quick else 20, 2 if options.quick else 5, time_limit * 2,
                         clone_note or "n/a")
    inner = in_process(sizes, total, time_limit)
    client_name = "wrk, 1 thread" if shutil.which("wrk") else "Python http.client, keep-alive"
    pinning = "servers on core 0, client on core 1" if cpus_available() else "no CPU pinning (--pin to pin)"
    rates = "wrk: one run, ~ = closed-loop rate" if shutil.which("wrk") else f"req/s: best of {ROUNDS} rounds"
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"GitHub replica vs emulate@{emulate_peer.VERSION}; {total:,} requests or {time_limit:.0f} s per measure "
          f"({rates}); {pinning}; emulate fresh per measure; "
          f"{time.monotonic() - started:.0f} s in all; load average {load} on {os.cpu_count()} cores")
    print()
    print_table(rows, client_name)
    print()
    print("Environment and clone rows give time per operation in the p50 ms column (from bench/github_git.py).")
    print()
    print("| in-process (Environment.dispatch, no HTTP; best of 3 rounds) | ops/s | ms per op |")
    print("|---|---:|---:|")
    for label, rate, per in inner:
        print(f"| {label} | {rate:,.0f} | {per:.2f} |")
    lists = [rate for label, rate, _ in inner if "per_page" in label]
    if len(lists) == 2:
        growth = lists[0] / lists[1]
        print(f"| list @ 5,000 vs @ 500 issues (target: within 1.5x) | {growth:.2f}x | "
              f"{'met' if growth <= 1.5 else 'NOT met'} |")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
