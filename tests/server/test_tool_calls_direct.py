"""Plain tool calls are answered on the connection (``server/tool_calls.py``), everything else
through ASGI: both give the same answer, in order, traced, and the connection's deadlines
(keep-alive, read timeout) still hold. Raw sockets, so that what goes over the wire is exact."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlencode, urlsplit

import httpx
import pytest

from ancha.server.connections import ConnectionLimits
from ancha.server.embedded import EmbeddedServer
from ancha.world.environment import Environment

SCENE = {"name": "direct-calls", "world": {"slack": {
    "users": [{"ref": "laura", "name": "laura"}],
    "channels": [{"ref": "general", "name": "general", "members": ["laura", "slack_bot"]}]}}}


@pytest.fixture(scope="module")
def server() -> Iterator[EmbeddedServer]:
    with EmbeddedServer(limits=ConnectionLimits(keep_alive=0.5, read_timeout=1.0)) as running:
        yield running


@pytest.fixture
def slack(server: EmbeddedServer) -> Iterator[dict[str, Any]]:
    """A fresh environment: its id, the Slack tool's path and token, and #general's id."""
    context = httpx.post(f"{server.url}/envs", json={"scene": SCENE, "trial": 1}, timeout=30).json()
    tool = context["tools"]["slack"]
    channels = httpx.post(f"{tool['url']}/api/conversations.list", headers=_auth(tool["token"]), timeout=10).json()
    yield {"env": context["env_id"], "path": urlsplit(tool["url"]).path, "token": tool["token"],
           "channel": channels["channels"][0]["id"]}
    httpx.delete(f"{server.url}/envs/{context['env_id']}", timeout=10)


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _connect(server: EmbeddedServer) -> socket.socket:
    sock = socket.create_connection((server.host, server.port), timeout=10)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def _request(slack: dict[str, Any], method: str, args: dict[str, str], *, chunked: bool = False,
             extra: str = "", verb: str = "POST") -> bytes:
    body = urlencode(args).encode()
    head = (f"{verb} {slack['path']}/api/{method} HTTP/1.1\r\nHost: localhost\r\n"
            f"Authorization: Bearer {slack['token']}\r\nContent-Type: application/x-www-form-urlencoded\r\n{extra}")
    if chunked:  # a body without a declared length takes the ASGI path
        chunk = b"%x\r\n" % len(body) + body + b"\r\n" if body else b""
        return (head + "Transfer-Encoding: chunked\r\n\r\n").encode() + chunk + b"0\r\n\r\n"
    return (head + f"Content-Length: {len(body)}\r\n\r\n").encode() + body


class Reader:
    """HTTP/1.1 responses off a socket, one at a time (Content-Length bodies)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buffer = b""

    def response(self, head_only: bool = False) -> tuple[int, dict[str, str], bytes]:
        while b"\r\n\r\n" not in self.buffer:
            self._more()
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        headers = dict(line.split(": ", 1) for line in lines[1:])
        length = 0 if head_only else int(headers.get("content-length", "0"))
        while len(self.buffer) < length:
            self._more()
        body, self.buffer = self.buffer[:length], self.buffer[length:]
        return int(lines[0].split()[1]), headers, body

    def closed(self) -> bool:
        """True once the server has closed the connection (within the socket's timeout)."""
        try:
            return self.sock.recv(1) == b""
        except ConnectionResetError:
            return True

    def _more(self) -> None:
        data = self.sock.recv(65536)
        if not data:
            raise ConnectionError("the server closed the connection")
        self.buffer += data


def _env(server: EmbeddedServer, slack: dict[str, Any]) -> Environment:
    return server.app.registry.envs[slack["env"]]


def _wait_until(condition: Callable[[], bool], seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "the condition did not hold in time"
        time.sleep(0.01)


def _calls(server: EmbeddedServer, slack: dict[str, Any]) -> list[dict[str, Any]]:
    lines = httpx.get(f"{server.url}/envs/{slack['env']}/trace", timeout=10).text.splitlines()
    return [entry for entry in map(json.loads, lines) if entry.get("kind", "call") == "call" and "tool" in entry]


@pytest.mark.parametrize("method,args", [
    ("auth.test", {}),
    ("chat.postMessage", {"channel": "C_MISSING", "text": "hi"}),
    ("conversations.info", {"channel": "$channel"}),
    ("no.such.method", {}),
])
def test_direct_and_asgi_paths__answer_a_call_alike(server: EmbeddedServer, slack: dict[str, Any], method: str,
                                                    args: dict[str, str]) -> None:
    args = {k: slack["channel"] if v == "$channel" else v for k, v in args.items()}
    with _connect(server) as sock:
        reader = Reader(sock)
        sock.sendall(_request(slack, method, args))
        direct = reader.response()
        sock.sendall(_request(slack, method, args, chunked=True))
        through_asgi = reader.response()
    assert direct[0] == through_asgi[0]
    assert direct[2] == through_asgi[2]
    assert {k: v for k, v in direct[1].items() if k != "date"} == {k: v for k, v in through_asgi[1].items()
                                                                    if k != "date"}
    assert "date" in direct[1] and direct[1]["content-type"].startswith("application/json")


def test_pipelined_calls__are_answered_in_order_and_each_is_traced(server: EmbeddedServer,
                                                                   slack: dict[str, Any]) -> None:
    texts = ["one", "two", "three", "four"]
    requests = [_request(slack, "chat.postMessage", {"channel": slack["channel"], "text": t}) for t in texts]
    requests.insert(2, _request(slack, "chat.postMessage", {"channel": slack["channel"], "text": "chunked"},
                                chunked=True))  # an ASGI one among them: the order still holds
    with _connect(server) as sock:
        reader = Reader(sock)
        sock.sendall(b"".join(requests))
        answers = [json.loads(reader.response()[2]) for _ in requests]
    assert [a["message"]["text"] for a in answers] == ["one", "two", "chunked", "three", "four"]
    history = httpx.post(f"{server.url}{slack['path']}/api/conversations.history", data={"channel": slack["channel"]},
                         headers=_auth(slack["token"]), timeout=10).json()
    assert [m["text"] for m in reversed(history["messages"])] == ["one", "two", "chunked", "three", "four"]
    posts = [c for c in _calls(server, slack) if c["path"] == "/api/chat.postMessage"]
    assert len(posts) == 5


def test_a_call_is_traced_before_the_next_request_is_read(server: EmbeddedServer, slack: dict[str, Any]) -> None:
    with _connect(server) as sock:
        reader = Reader(sock)
        sock.sendall(_request(slack, "chat.postMessage", {"channel": slack["channel"], "text": "traced?"}))
        assert reader.response()[0] == 200
    # The answer went out before the bookkeeping; a request right after it still finds the call.
    assert any(c["path"] == "/api/chat.postMessage" for c in _calls(server, slack))


def test_a_body_still_arriving__counts_as_a_request_in_flight(server: EmbeddedServer, slack: dict[str, Any]) -> None:
    env = _env(server, slack)
    request = _request(slack, "chat.postMessage", {"channel": slack["channel"], "text": "slow body"})
    head, body = request.split(b"\r\n\r\n", 1)
    with _connect(server) as sock:
        reader = Reader(sock)
        sock.sendall(head + b"\r\n\r\n" + body[:5])
        _wait_until(lambda: env.in_flight == 1)  # the clock must not jump while the agent is mid-call
        sock.sendall(body[5:])
        status, _, answer = reader.response()
    assert status == 200 and json.loads(answer)["message"]["text"] == "slow body"
    _wait_until(lambda: env.in_flight == 0)


def test_a_client_gone_mid_body__leaves_no_call_and_nothing_in_flight(server: EmbeddedServer,
                                                                      slack: dict[str, Any]) -> None:
    env = _env(server, slack)
    request = _request(slack, "chat.postMessage", {"channel": slack["channel"], "text": "never finished"})
    with _connect(server) as sock:
        sock.sendall(request[:-4])
        _wait_until(lambda: env.in_flight == 1)
    _wait_until(lambda: env.in_flight == 0)
    assert not [c for c in _calls(server, slack) if c["path"] == "/api/chat.postMessage"]


def test_connection_close__closes_after_the_answer(server: EmbeddedServer, slack: dict[str, Any]) -> None:
    with _connect(server) as sock:
        reader = Reader(sock)
        sock.sendall(_request(slack, "auth.test", {}, extra="Connection: close\r\n"))
        status, headers, _ = reader.response()
        assert status == 200 and headers["connection"] == "close"
        assert reader.closed()


def test_head__answers_the_headers_without_the_body(server: EmbeddedServer, slack: dict[str, Any]) -> None:
    with _connect(server) as sock:
        reader = Reader(sock)
        sock.sendall(_request(slack, "auth.test", {}, verb="HEAD"))
        _, headers, _ = reader.response(head_only=True)
        sock.sendall(_request(slack, "auth.test", {}))
        status, after, body = reader.response()  # the next answer starts right after the head
    assert int(headers["content-length"]) > 0 and status == 200 and json.loads(body)["ok"] is True


def test_a_tool_that_fails__is_a_500_that_closes_the_connection(server: EmbeddedServer, slack: dict[str, Any],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    env = _env(server, slack)

    def broken(request: object) -> None:
        raise RuntimeError("a bug in a replica")

    monkeypatch.setattr(env.tools["slack"], "handle", broken)
    with _connect(server) as sock:
        reader = Reader(sock)
        sock.sendall(_request(slack, "auth.test", {}))
        status, headers, body = reader.response()
        assert (status, headers["connection"], body) == (500, "close", b"Internal Server Error")
        assert reader.closed()
    assert env.in_flight == 0


def test_an_idle_connection__is_closed_after_keep_alive(server: EmbeddedServer, slack: dict[str, Any]) -> None:
    with _connect(server) as sock:
        reader = Reader(sock)
        sock.sendall(_request(slack, "auth.test", {}))
        assert reader.response()[0] == 200
        started = time.monotonic()
        assert reader.closed()
        assert 0.3 < time.monotonic() - started < 5


def test_a_busy_connection__outlives_keep_alive_and_read_timeout(server: EmbeddedServer,
                                                                 slack: dict[str, Any]) -> None:
    with _connect(server) as sock:
        reader = Reader(sock)
        until = time.monotonic() + 2.5  # past keep-alive (0.5 s) and read timeout (1 s) several times
        while time.monotonic() < until:
            sock.sendall(_request(slack, "auth.test", {}))
            assert reader.response()[0] == 200
            time.sleep(0.05)


def test_a_request_dripping_in__is_cut_off_at_the_read_timeout(server: EmbeddedServer, slack: dict[str, Any]) -> None:
    request = _request(slack, "auth.test", {})
    with _connect(server) as sock:
        reader = Reader(sock)
        started = time.monotonic()
        with pytest.raises((BrokenPipeError, ConnectionResetError)):
            for byte in request:  # each byte resets keep-alive, never the read deadline
                sock.sendall(bytes([byte]))
                time.sleep(0.1)
        assert time.monotonic() - started < 5
        assert reader.closed()


def test_a_head_over_the_limit__is_a_400_that_closes_the_connection(server: EmbeddedServer,
                                                                    slack: dict[str, Any]) -> None:
    padding = "X-Padding: " + "a" * 1000 + "\r\n"
    with _connect(server) as sock:
        reader = Reader(sock)
        sock.sendall(_request(slack, "auth.test", {}, extra=padding * 60))  # 60 KB of headers: served
        assert reader.response()[0] == 200
        sock.sendall(_request(slack, "auth.test", {}, extra=padding * 70))  # 70 KB: over 64 KiB
        status, headers, _ = reader.response()
        assert (status, headers["connection"]) == (400, "close")
        assert reader.closed()


def test_the_date_header__is_uvicorns_current_one(server: EmbeddedServer, slack: dict[str, Any]) -> None:
    from email.utils import parsedate_to_datetime

    def dates() -> tuple[float, float]:
        """The date of a direct answer and of an ASGI one right after it."""
        with _connect(server) as sock:
            reader = Reader(sock)
            sock.sendall(_request(slack, "auth.test", {}))
            direct = reader.response()[1]
            sock.sendall(_request(slack, "auth.test", {}, chunked=True))
            through_asgi = reader.response()[1]
        assert direct["server"] == through_asgi["server"] == "uvicorn"
        return (parsedate_to_datetime(direct["date"]).timestamp(),
                parsedate_to_datetime(through_asgi["date"]).timestamp())

    first = dates()
    time.sleep(2.5)  # uvicorn renews its date once a second: a direct answer must not keep an old one
    second = dates()
    assert abs(first[0] - first[1]) <= 1 and abs(second[0] - second[1]) <= 1
    assert second[0] - first[0] >= 1
