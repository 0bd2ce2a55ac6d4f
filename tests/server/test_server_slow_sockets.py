"""Many slow or idle sockets do not starve the server: ``ancha serve`` raises its soft
file limit to the hard one, and closes connections too slow to send a request, so that
a normal client keeps getting answers while a slowloris runs against it.

The slowloris test takes about 6 s: it runs a real attack (300 sockets) against a
subprocess whose file limit is lowered, with a 2 s read timeout."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from ancha.server.embedded import free_port

SCENE = {"name": "slow-sockets", "world": {"slack": {"channels": [{"name": "general"}]}}}
ATTACKERS = 300
"""Sockets held open at once: well past the server's lowered limit of 128 files."""


def _serve(limit: str) -> tuple[subprocess.Popen[bytes], str]:
    """``ancha serve`` under ``ulimit <limit>``, short timeouts, and its URL once it answers."""
    port, tls_port = free_port(), free_port()
    ancha = Path(sys.executable).with_name("ancha")
    command = (f"ulimit {limit} && exec {ancha} serve --no-key --port {port} --tls-port {tls_port} "
               "--keep-alive 1 --read-timeout 2")
    server = subprocess.Popen(["bash", "-c", command], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if httpx.get(url + "/envs", timeout=2).status_code == 200:
                return server, url
        except httpx.HTTPError:
            pass
        assert server.poll() is None, "ancha serve exited"
        time.sleep(0.1)
    server.kill()
    raise AssertionError("ancha serve did not start")


@pytest.fixture
def low_hard_limit() -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    server, url = _serve("-n 128")  # soft and hard: raising cannot help, the timeouts must
    yield server, url
    _stop(server)


def _stop(server: subprocess.Popen[bytes]) -> None:
    server.terminate()
    try:
        server.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait(timeout=10)


class Slowloris:
    """Keeps ``count`` sockets open against ``port``: half send nothing, half drip a request
    header one byte at a time; each one the server closes is opened again."""

    def __init__(self, port: int, count: int) -> None:
        self.port = port
        self.count = count
        self.stop = threading.Event()
        self.sockets: list[tuple[socket.socket, bool]] = []
        self.thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Slowloris:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(timeout=10)
        for sock, _ in self.sockets:
            sock.close()

    def _open(self, drip: bool) -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.settimeout(1)
        try:
            sock.connect(("127.0.0.1", self.port))
            if drip:
                sock.send(b"POST /envs HTTP/1.1\r\nHost: x\r\n")
        except OSError:
            sock.close()
            return
        self.sockets.append((sock, drip))

    def _run(self) -> None:
        while not self.stop.is_set():
            while len(self.sockets) < self.count and not self.stop.is_set():
                self._open(drip=len(self.sockets) % 2 == 0)
            alive = []
            for sock, drip in self.sockets:
                try:
                    if drip:
                        sock.send(b"X")
                    alive.append((sock, drip))
                except OSError:
                    sock.close()
            self.sockets = alive
            self.stop.wait(0.3)


def test_slowloris__a_normal_client_keeps_getting_answers(low_hard_limit: tuple[subprocess.Popen[bytes], str]) -> None:
    server, url = low_hard_limit
    port = int(url.rsplit(":", 1)[1])
    with Slowloris(port, ATTACKERS) as attack:
        deadline = time.monotonic() + 20
        while len(attack.sockets) < ATTACKERS and time.monotonic() < deadline:
            time.sleep(0.05)  # wait (on a condition) until the attack holds its sockets
        answered = 0
        for _ in range(3):
            with httpx.Client(base_url=url, timeout=20) as client:
                created = client.post("/envs", json={"scene": SCENE})
                assert created.status_code == 201, created.text
                slack = created.json()["tools"]["slack"]
                auth = client.post(slack["url"] + "/api/auth.test",
                                   headers={"authorization": f"Bearer {slack['token']}"})
                assert auth.status_code == 200 and auth.json()["ok"] is True
                assert client.get("/envs").status_code == 200
                assert client.delete(f"/envs/{created.json()['env_id']}").status_code == 204
                answered += 1
        assert answered == 3
        assert server.poll() is None


def test_serve__raises_its_soft_file_limit_to_the_hard_limit() -> None:
    server, _ = _serve("-Sn 128")
    try:
        limits = Path(f"/proc/{server.pid}/limits").read_text()
        line = next(row for row in limits.splitlines() if row.startswith("Max open files"))
        soft, hard = line.split()[3:5]
        assert soft == hard and soft != "128", line
    finally:
        _stop(server)
