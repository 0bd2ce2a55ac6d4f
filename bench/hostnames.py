"""What ``agent.hostnames: real`` costs: per call, against a base-URL call, and per trial.

    .venv/bin/python bench/hostnames.py [--calls 2000] [--envs 50]

One in-process server (``EmbeddedServer``) and one environment of a seeded GitHub scene made
with ``{"agent": {"hostnames": "real"}}``. The same ``GET /repos/acme/orders`` is made over
keep-alive connections with ``http.client`` (a light client, so that the server's share of
each call shows): to the plain-http base URL, to the server's own TLS listener (the https
base URL PagerDuty is handed out on), through the trial's proxy (``CONNECT api.github.com:443``
with ``HTTPSConnection.set_tunnel``, as clients that honour ``HTTPS_PROXY`` do) and straight
to the trial's TLS port by SNI (as the preloads and a container's ``:443`` do). The calls take
turns, so all meet the same load. The added cost is the difference of each one's percentile
and the base URL's. Target: at most 0.3 ms at p50 through the proxy. A new connection
through the proxy (CONNECT, TLS handshake, one call) is timed against a new plain one too.

Then a trial's set-up: making the per-process authority (``minting.Minter``) and a first
certificate, and ``POST /envs`` with real hostnames against the same without (its proxy and
TLS ports, their listening sockets and TLS context), in turns, each world deleted after.
Target: at most 20 ms more per environment at p50. Prints markdown tables. Not part of the
test suite.
"""

from __future__ import annotations

import argparse
import http.client
import os
import socket
import ssl
import statistics
import time
from collections.abc import Callable
from typing import Any

import httpx

from ancha.server.embedded import EmbeddedServer
from ancha.server.minting import Minter

HOST = "api.github.com"
PATH = "/repos/acme/orders"
WARMUP = 50
CALL_TARGET_MS = 0.3
ENV_TARGET_MS = 20.0
MINTS = 20


def scene() -> dict[str, Any]:
    return {
        "name": "bench-hostnames",
        "task": "Read the repository.",
        "world": {"github": {
            "users": [{"ref": "github_maya", "login": "maya", "name": "Maya Chen"}],
            "orgs": [{"login": "acme", "members": ["github_maya"]}],
            "repos": [{"ref": "github_orders", "name": "acme/orders", "description": "The orders service",
                       "files": {"README.md": "# orders\n"},
                       "issues": [{"title": "Checkout is slow", "author": "github_maya"}]}],
        }},
    }


def address(hostport: str) -> tuple[str, int]:
    host, _, port = hostport.rpartition(":")
    return host.strip("[]"), int(port)


class SNIConnection(http.client.HTTPConnection):
    """TLS to ``address`` asking for ``server_name`` (SNI), as a preload's redirected connection does."""

    def __init__(self, target: tuple[str, int], server_name: str, context: ssl.SSLContext) -> None:
        super().__init__(*target)
        self.server_name = server_name
        self.context = context

    def connect(self) -> None:
        raw = socket.create_connection((self.host, self.port), self.timeout)
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock = self.context.wrap_socket(raw, server_hostname=self.server_name)


Caller = Callable[[], None]


def caller(connection: http.client.HTTPConnection, path: str, headers: dict[str, str]) -> Caller:
    """One keep-alive GET on ``connection``, its answer read whole (and checked)."""

    def call() -> None:
        connection.request("GET", path, headers=headers)
        answer = connection.getresponse()
        body = answer.read()
        if answer.status != 200:
            raise SystemExit(f"GET {path} answered {answer.status}: {body[:300]!r}")

    return call


def new_connection_caller(make: Callable[[], http.client.HTTPConnection], path: str,
                          headers: dict[str, str]) -> Caller:
    """A GET on a connection of its own: the connect (and CONNECT, TLS handshake) each time."""

    def call() -> None:
        connection = make()
        try:
            caller(connection, path, {**headers, "connection": "close"})()
        finally:
            connection.close()

    return call


def in_turns(callers: dict[str, Caller], calls: int, warmup: int = WARMUP) -> dict[str, list[float]]:
    """Milliseconds of each caller's calls, one of each in turn."""
    times: dict[str, list[float]] = {name: [] for name in callers}
    for i in range(calls + warmup):
        for name, call in callers.items():
            t0 = time.perf_counter()
            call()
            if i >= warmup:
                times[name].append((time.perf_counter() - t0) * 1000)
    return times


def p50(values: list[float]) -> float:
    return statistics.median(values)


def p95(values: list[float]) -> float:
    return sorted(values)[max(0, int(len(values) * 0.95) - 1)]


def met(value: float, target: float) -> str:
    return "met" if value <= target else "not met"


class Trial:
    """One environment with real hostnames, and how to call its GitHub both ways. Each caller
    gets one of its own: a token's rate limit (5,000 calls an hour, as at GitHub) holds 2,000
    calls, not 8,000."""

    def __init__(self, http_: httpx.Client, server: EmbeddedServer) -> None:
        context = http_.post("/envs", json={"scene": scene(), "agent": {"hostnames": "real"}}).raise_for_status().json()
        hostnames = context["hostnames"]
        self.env_id = context["env_id"]
        self.auth = {"authorization": f"token {context['tools']['github']['token']}",
                     "accept": "application/vnd.github+json"}
        self.vendor_ca = ssl.create_default_context(cadata=hostnames["ca_pem"])
        self.server_ca = ssl.create_default_context(cadata=context["tls"]["ca_pem"])
        self.base_path = f"/envs/{self.env_id}/github{PATH}"
        self.proxy, self.tls = address(hostnames["proxy"]), address(hostnames["tls"])
        self.server = address(server.url.removeprefix("http://"))
        self.server_tls = address(server.tls_url.removeprefix("https://"))

    def plain(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection(*self.server)

    def tunnelled(self) -> http.client.HTTPSConnection:
        connection = http.client.HTTPSConnection(*self.proxy, context=self.vendor_ca)
        connection.set_tunnel(HOST, 443)
        return connection


def call_costs(server: EmbeddedServer, calls: int) -> None:
    http_ = httpx.Client(base_url=server.url, timeout=30)
    trials = [Trial(http_, server) for _ in range(6)]
    base, secure, proxy, sni, fresh_base, fresh_proxy = trials
    kept = {
        "base URL, http": caller(base.plain(), base.base_path, base.auth),
        "base URL, https (server's TLS listener)": caller(
            http.client.HTTPSConnection(*secure.server_tls, context=secure.server_ca), secure.base_path, secure.auth),
        f"proxy: CONNECT {HOST}:443, TLS": caller(proxy.tunnelled(), PATH, proxy.auth),
        f"TLS port by SNI ({HOST})": caller(SNIConnection(sni.tls, HOST, sni.vendor_ca), PATH,
                                            {**sni.auth, "host": HOST}),
    }
    times = in_turns(kept, calls)
    fresh = in_turns({"new connection, base URL http": new_connection_caller(fresh_base.plain, fresh_base.base_path,
                                                                              fresh_base.auth),
                      "new connection through the proxy": new_connection_caller(fresh_proxy.tunnelled, PATH,
                                                                                fresh_proxy.auth)},
                     max(calls // 10, 50), warmup=10)
    hosts = sum(http_.get(f"/envs/{t.env_id}/trace").text.count(f'"host": "{HOST}"') for t in trials)
    for trial in trials:
        http_.delete(f"/envs/{trial.env_id}")
    http_.close()

    plain = times["base URL, http"]
    print(f"GET {PATH} on one keep-alive connection each, {calls} calls each in turns (after {WARMUP} warm-up), "
          f"each caller in a world of its own; {hosts} trace entries name {HOST}\n")
    print("| call | p50 ms | p95 ms | added p50 ms | added p95 ms | target (added p50) |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, values in times.items():
        added50, added95 = p50(values) - p50(plain), p95(values) - p95(plain)
        through = name.startswith("proxy")
        target = f"≤ {CALL_TARGET_MS} ms ({met(added50, CALL_TARGET_MS)})" if through else ""
        added = (f"{added50:+.3f} | {added95:+.3f}") if values is not plain else "— | —"
        print(f"| {name} | {p50(values):.3f} | {p95(values):.3f} | {added} | {target} |")
    first = fresh["new connection, base URL http"]
    print()
    print("| new connection per call | p50 ms | p95 ms | added p50 ms |")
    print("|---|---:|---:|---:|")
    for name, values in fresh.items():
        added = "—" if values is first else f"{p50(values) - p50(first):+.2f}"
        print(f"| {name} | {p50(values):.2f} | {p95(values):.2f} | {added} |")


def setup_costs(server: EmbeddedServer, envs: int) -> None:
    made, first_cert, next_cert = [], [], []
    for i in range(MINTS):
        t0 = time.perf_counter()
        minter = Minter()
        t1 = time.perf_counter()
        minter.context(HOST)
        t2 = time.perf_counter()
        minter.context(f"host{i}.example.com")
        t3 = time.perf_counter()
        minter.close()
        made.append((t1 - t0) * 1000)
        first_cert.append((t2 - t1) * 1000)
        next_cert.append((t3 - t2) * 1000)

    http_ = httpx.Client(base_url=server.url, timeout=30)
    body = scene()
    times: dict[str, list[float]] = {"without": [], "real": []}
    for i in range(envs + 5):
        for mode in times:
            agent = {"hostnames": "real"} if mode == "real" else {}
            t0 = time.perf_counter()
            answer = http_.post("/envs", json={"scene": body, "trial": i + 1, "agent": agent})
            elapsed = (time.perf_counter() - t0) * 1000
            answer.raise_for_status()
            http_.delete(f"/envs/{answer.json()['env_id']}")
            if i >= 5:
                times[mode].append(elapsed)
    http_.close()

    added = p50(times["real"]) - p50(times["without"])
    print(f"\nA trial's set-up: the authority made {MINTS} times; POST /envs {envs} times each way, in turns "
          "(after 5 warm-up), each world deleted after\n")
    print("| step | p50 ms | p95 ms | target |")
    print("|---|---:|---:|---:|")
    print(f"| Minter(): authority key and certificate, leaf key (once per server process) "
          f"| {p50(made):.2f} | {p95(made):.2f} | |")
    print(f"| first certificate ({HOST}) | {p50(first_cert):.2f} | {p95(first_cert):.2f} | |")
    print(f"| each further hostname's certificate | {p50(next_cert):.2f} | {p95(next_cert):.2f} | |")
    print(f"| POST /envs, base URLs | {p50(times['without']):.2f} | {p95(times['without']):.2f} | |")
    print(f"| POST /envs, hostnames: real | {p50(times['real']):.2f} | {p95(times['real']):.2f} | |")
    print(f"| added by real hostnames | {added:+.2f} | {p95(times['real']) - p95(times['without']):+.2f} "
          f"| ≤ {ENV_TARGET_MS:.0f} ms ({met(added, ENV_TARGET_MS)}) |")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--envs", type=int, default=50)
    args = parser.parse_args()
    with EmbeddedServer() as server:
        call_costs(server, args.calls)
        setup_costs(server, args.envs)
    print(f"\nload average while it ran: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs "
          "(client and server share this process)")


if __name__ == "__main__":
    main()
