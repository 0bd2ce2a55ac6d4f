"""A container agent's network namespace: only the planned endpoints answer inside it."""

from __future__ import annotations

import asyncio
import ctypes
import os
import socket
import subprocess
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TypeVar

import pytest

from ancha.runner.agents.container_network import (
    CLONE_NEWNET,
    NETNS_FOLDER,
    Enclosure,
    Endpoint,
    add_hosts,
    isolation_problem,
    plan_endpoints,
    remove_stale_namespaces,
    rewrite_url,
)

T = TypeVar("T")
needs_namespaces = pytest.mark.skipif(isolation_problem() is not None, reason=str(isolation_problem()))


def test_plan__loopback_keeps_its_address_a_name_its_name_another_address_moves_to_loopback() -> None:
    server, tls, remote, named = (Endpoint("127.0.0.1", 8000), Endpoint("127.0.0.1", 8443),
                                  Endpoint("10.1.2.3", 8000), Endpoint("ancha.internal", 443))
    plan = plan_endpoints([server, tls, remote, named, server])
    assert plan == {server: server, tls: tls, remote: Endpoint("127.0.0.1", 40000), named: named}
    assert add_hosts(plan) == [("ancha.internal", "127.0.0.1")]
    assert rewrite_url("http://127.0.0.1:8000/envs/e1/slack", plan) == "http://127.0.0.1:8000/envs/e1/slack"
    assert rewrite_url("http://10.1.2.3:8000/envs/e1/slack?x=1", plan) == "http://127.0.0.1:40000/envs/e1/slack?x=1"
    assert rewrite_url("https://ancha.internal/envs/e1/okta", plan) == "https://ancha.internal/envs/e1/okta"
    assert rewrite_url("https://example.com/", plan) == "https://example.com/"


class _Hello(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        body = b"hello"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def two_servers() -> Iterator[tuple[int, int]]:
    """Two HTTP servers on the host's loopback: the first is allowed, the second is not."""
    servers = [ThreadingHTTPServer(("127.0.0.1", 0), _Hello) for _ in range(2)]
    threads = [threading.Thread(target=s.serve_forever, daemon=True) for s in servers]
    for thread in threads:
        thread.start()
    yield servers[0].server_address[1], servers[1].server_address[1]
    for server in servers:
        server.shutdown()
        server.server_close()


def inside(path: str, action: Callable[[], T]) -> T:
    """Run ``action`` in a thread that has entered the namespace at ``path``."""
    result: list[T] = []
    failure: list[BaseException] = []

    def run() -> None:
        fd = os.open(path, os.O_RDONLY)
        try:
            assert ctypes.CDLL(None, use_errno=True).setns(fd, CLONE_NEWNET) == 0
        finally:
            os.close(fd)
        try:
            result.append(action())
        except BaseException as exc:
            failure.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if failure:
        raise failure[0]
    return result[0]


def get(port: int) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        conn.sendall(b"GET / HTTP/1.0\r\nHost: x\r\n\r\n")
        data = b""
        while chunk := conn.recv(4096):
            data += chunk
    return data


@needs_namespaces
def test_enclosure__only_the_planned_endpoint_answers_inside(two_servers: tuple[int, int]) -> None:
    allowed, other = two_servers

    async def scenario() -> tuple[bytes, str, str, bool]:
        enclosure = await Enclosure.open(plan_endpoints([Endpoint("127.0.0.1", allowed)]))
        try:
            answer = await asyncio.to_thread(inside, enclosure.path, lambda: get(allowed))
            refused = await asyncio.to_thread(inside, enclosure.path, lambda: _error(lambda: get(other)))
            unreachable = await asyncio.to_thread(
                inside, enclosure.path,
                lambda: _error(lambda: socket.create_connection(("192.0.2.1", 443), timeout=10).close()))
        finally:
            await enclosure.close()
        return answer, refused, unreachable, Path(enclosure.path).exists()

    answer, refused, unreachable, left = asyncio.run(scenario())
    assert answer.startswith(b"HTTP/1.0 200") and answer.endswith(b"hello")
    assert refused.startswith("ConnectionRefusedError")
    assert unreachable.startswith("OSError: [Errno 101] Network is unreachable")
    assert left is False  # closed: the namespace is gone


def _error(action: Callable[[], object]) -> str:
    try:
        action()
    except OSError as exc:
        return f"{type(exc).__name__}: {exc}"
    return "ok"


@needs_namespaces
def test_remove_stale_namespaces__deletes_those_of_runners_that_are_gone() -> None:
    dead = _dead_pid()
    stale, alive = f"ancha-{dead}-0badc0de", f"ancha-{os.getpid()}-0badc0de"
    for name in (stale, alive):
        subprocess.run(["ip", "netns", "add", name], check=True)
    try:
        remove_stale_namespaces()
        assert not Path(NETNS_FOLDER, stale).exists()
        assert Path(NETNS_FOLDER, alive).exists()
    finally:
        for name in (stale, alive):
            subprocess.run(["ip", "netns", "delete", name], capture_output=True)


def _dead_pid() -> int:
    """The PID of a process that has exited (and been reaped)."""
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid
