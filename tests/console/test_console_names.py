"""Every console route that takes a run id, scene, trial, call number or file name answers
404 for anything that is not a real item (too long for a file name, NUL, ``..``, encoded
slashes and backslashes, text that is not UTF-8), never a 500."""

from __future__ import annotations

import socket
from pathlib import Path
from urllib.parse import quote, urlsplit

import pytest
from console_helpers import ConsoleServer
from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from ancha.console.app import console_app

RUN = "20260101T000000Z-aaaaaa"

# Path segments that name no run, scene, trial or file, percent-encoded as a client sends them.
NOT_A_NAME = {
    "256_characters": "r" * 256,
    "4096_characters": "r" * 4096,
    "255_multibyte_characters": "%C3%A9" * 255,  # 510 bytes on disk
    "nul": "a%00b",
    "only_nul": "%00",
    "dot_dot": "%2E%2E",
    "dot": "%2E",
    "encoded_slash": "..%2F..%2Fsecret",
    "encoded_backslash": "..%5C..%5Csecret",
    "not_utf8": "%FF%FE",
    "lone_surrogate_as_utf8": "%ED%A0%80",
    "control_characters": "%01%1B%7F",
}

ROUTES = ["/runs/{x}", "/scenes/{x}", "/runs/{x}/s/1", "/runs/" + RUN + "/{x}/1", "/runs/" + RUN + "/s/{x}",
          "/runs/" + RUN + "/s/1/calls/{x}", "/runs/{x}/s/1/calls/1", "/runs/" + RUN + "/{x}/1/state",
          "/runs/" + RUN + "/s/{x}/diff", "/runs/{x}/s/1/agent.log", "/runs/" + RUN + "/{x}/1/agent.log",
          "/runs/" + RUN + "/s/{x}/agent.log", "/runs/" + RUN + "/s/{x}/live", "/static/{x}",
          "/static/{x}/console.css"]


def _runs(tmp_path: Path) -> Path:
    trial = tmp_path / "runs" / RUN / "s" / "1"
    trial.mkdir(parents=True)
    (trial / "agent.log").write_text("hello\n")
    (tmp_path / "secret").mkdir()
    (tmp_path / "secret" / "1").mkdir()
    return tmp_path / "runs"


@pytest.mark.parametrize("name", list(NOT_A_NAME))
def test_console_routes__anything_not_a_real_item_is_404_never_500(tmp_path: Path, name: str) -> None:
    client = TestClient(console_app(_runs(tmp_path)), raise_server_exceptions=False)
    for route in ROUTES:
        if name == "dot" and route == "/static/{x}/console.css":
            continue  # /static/./console.css is console.css
        path = route.format(x=NOT_A_NAME[name])
        answer = client.get(path)
        if route.endswith("/live") and answer.status_code == 200:  # a stream: for no trial, it says so and ends
            assert "event: end" in answer.text, path
            continue
        assert answer.status_code == 404, (path, answer.status_code, answer.text[:200])


# Any segment: text of any code point (surrogates too, sent as their UTF-8-like bytes), raw
# bytes, and the names above; long ones included.
SEGMENTS = st.one_of(
    st.text(max_size=300).map(lambda t: quote(t.encode("utf-8", "surrogatepass"), safe="")),
    st.binary(max_size=300).map(lambda b: quote(b, safe="")),
    st.sampled_from(list(NOT_A_NAME.values())),
    st.integers(min_value=256, max_value=5000).map(lambda n: "x" * n))


@pytest.fixture(scope="module")
def shared_client(tmp_path_factory: pytest.TempPathFactory) -> TestClient:
    """One console for every example of the property: a runs folder per example would spend its budget on mkdir."""
    return TestClient(console_app(_runs(tmp_path_factory.mktemp("names"))), raise_server_exceptions=False)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(route=st.sampled_from(ROUTES), segment=SEGMENTS)
def test_console_routes__any_segment_is_answered_never_with_a_500(shared_client: TestClient, route: str,
                                                                  segment: str) -> None:
    answer = shared_client.get(route.format(x=segment), follow_redirects=False)
    assert answer.status_code in (200, 307, 404), (route, segment[:80], answer.status_code)


def test_console_routes__real_items_still_answer(tmp_path: Path) -> None:
    client = TestClient(console_app(_runs(tmp_path)))
    for path in (f"/runs/{RUN}", f"/runs/{RUN}/s/1", f"/runs/{RUN}/s/1/agent.log", f"/runs/{RUN}/s/1/state",
                 "/static/console.css", "/scenes/s"):
        assert client.get(path).status_code in (200, 404), path
    assert client.get(f"/runs/{RUN}/s/1").status_code == 200
    assert client.get(f"/runs/{RUN}/s/1/agent.log").text == "hello\n"


def _raw_get(console: ConsoleServer, target: bytes) -> int:
    """The status of a GET of ``target`` sent as raw bytes, as no well-behaved client would."""
    where = urlsplit(console.url)
    with socket.create_connection((where.hostname, where.port), timeout=10) as sock:
        sock.sendall(b"GET " + target + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return int(answer.split(b" ", 2)[1])


def test_console_server__raw_bytes_in_the_path_are_404_or_400_never_500(console: ConsoleServer) -> None:
    for target in (b"/ui/runs/" + b"r" * 256, b"/ui/runs/" + b"r" * 256 + b"/s/1/agent.log", b"/ui/runs/a%00b",
                   b"/ui/runs/%FF%FE", b"/ui/runs/\xff\xfe", b"/ui/scenes/\xff", b"/ui/runs/x/..%2F..%2F/1",
                   b"/ui/static/" + b"s" * 5000, b"/ui/static/%00", b"/ui/runs/latest/%FF/1/agent.log"):
        status = _raw_get(console, target)
        assert status in (400, 404), (target[:80], status)
