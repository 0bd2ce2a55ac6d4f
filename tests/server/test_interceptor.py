"""agent.hostnames: real on the server: each environment's proxy and TLS port answer the vendors'
hostnames with certificates minted for them, lead each request to its tool, and tunnel or
refuse every other host. Nothing here reaches the internet: a made-up hostname is mapped to a
local server in the proxy's configuration."""

from __future__ import annotations

import http.server
import json
import socket
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from ancha.scene.loading import load_scene
from ancha.server.embedded import EmbeddedServer
from ancha.world.registry import catalog

SCENE = """\
name: hostnames
task: read the repository
world:
  github:
    orgs: [{ login: acme }]
    repos:
      - { name: acme/orders, files: { README.md: "orders\\n" }, issues: [{ title: Latency, body: p99 is up }] }
"""
MADE_UP = "intranet.example.test"


class _Hello(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:  # noqa: N802  (http.server's name)
        self.rfile.read(int(self.headers.get("content-length") or 0))  # a real server reads what it was sent
        body = json.dumps({"path": self.path, "host": self.headers.get("host"),
                           "length": self.headers.get("content-length")}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_POST = do_GET  # noqa: N815

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def intranet() -> Iterator[int]:
    """A local server the proxy's configuration calls intranet.example.test."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()


@pytest.fixture(scope="module")
def server(intranet: int) -> Iterator[EmbeddedServer]:
    with EmbeddedServer(tunnel_addresses={MADE_UP: ("127.0.0.1", intranet)}) as running:
        yield running


@pytest.fixture(scope="module")
def scene_json(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("scene")
    (folder / "scene.yaml").write_text(SCENE)
    return load_scene(folder / "scene.yaml", catalog()).model_dump(mode="json", by_alias=True)


def _env(server: EmbeddedServer, scene: dict[str, Any], hostnames: Any = "real") -> dict[str, Any]:
    answer = httpx.post(f"{server.url}/envs", json={"scene": scene, "agent": {"hostnames": hostnames}})
    assert answer.status_code == 201, answer.text
    context: dict[str, Any] = answer.json()
    return context


def _trust(context: dict[str, Any], tmp_path: Path) -> ssl.SSLContext:
    trusted = ssl.create_default_context()
    trusted.load_verify_locations(cadata=context["hostnames"]["ca_pem"])
    return trusted


def _github(context: dict[str, Any]) -> dict[str, str]:
    return {"authorization": f"token {context['tools']['github']['token']}"}


def test_a_connect_to_a_vendor_hostname_reaches_its_tool_with_a_certificate_for_that_name(
        server: EmbeddedServer, scene_json: dict[str, Any], tmp_path: Path) -> None:
    context = _env(server, scene_json)
    hostnames = context["hostnames"]
    assert {"api.github.com", "github.com", "uploads.github.com"} <= set(hostnames["hosts"])
    with httpx.Client(proxy=f"http://{hostnames['proxy']}", verify=_trust(context, tmp_path)) as client:
        repo = client.get("https://api.github.com/repos/acme/orders", headers=_github(context))
        issue = client.get("https://api.github.com/repos/acme/orders/issues/1", headers=_github(context))
    assert repo.status_code == 200, repo.text
    assert repo.json()["url"] == "https://api.github.com/repos/acme/orders"
    assert repo.json()["html_url"] == "https://github.com/acme/orders"
    assert issue.json()["title"] == "Latency"
    assert "/envs/" not in repo.text
    trace = httpx.get(f"{server.url}/envs/{context['env_id']}/trace").text.splitlines()
    calls = [json.loads(line) for line in trace]
    assert [(c["path"], c.get("host")) for c in calls] == [
        ("/repos/acme/orders", "api.github.com"), ("/repos/acme/orders/issues/1", "api.github.com")]


def test_the_tls_port_intercepts_by_the_name_the_client_asks_for(
        server: EmbeddedServer, scene_json: dict[str, Any], tmp_path: Path) -> None:
    """A container's :443 leads here: no proxy, the SNI names the host."""
    context = _env(server, scene_json)
    host, _, port = context["hostnames"]["tls"].rpartition(":")
    trusted = _trust(context, tmp_path)
    with socket.create_connection((host, int(port))) as raw, \
            trusted.wrap_socket(raw, server_hostname="api.github.com") as tls:
        assert dict(x[0] for x in tls.getpeercert()["subject"])["commonName"] == "api.github.com"
        token = context["tools"]["github"]["token"]
        tls.sendall(f"GET /repos/acme/orders HTTP/1.1\r\nhost: api.github.com\r\nauthorization: token {token}\r\n"
                    "connection: close\r\n\r\n".encode())
        answer = b""
        while chunk := tls.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200"), head
    assert json.loads(body)["full_name"] == "acme/orders"


def test_a_request_naming_a_host_that_is_no_vendors_is_misdirected(
        server: EmbeddedServer, scene_json: dict[str, Any], tmp_path: Path) -> None:
    context = _env(server, scene_json)
    tls_host, _, port = context["hostnames"]["tls"].rpartition(":")
    with httpx.Client(verify=_trust(context, tmp_path)) as client:
        transport_url = f"https://{tls_host}:{port}/repos/acme/orders"
        answer = client.get(transport_url, headers={"host": "example.com"}, extensions={"sni_hostname": "example.com"})
    assert answer.status_code == 421
    assert "api.github.com" in answer.text and "example.com" in answer.text


def test_other_hosts_are_tunnelled_untouched_for_a_host_agent(
        server: EmbeddedServer, scene_json: dict[str, Any]) -> None:
    context = _env(server, scene_json)
    proxy_host, _, port = context["hostnames"]["proxy"].rpartition(":")
    with socket.create_connection((proxy_host, int(port))) as sock:
        sock.sendall(f"CONNECT {MADE_UP}:80 HTTP/1.1\r\nhost: {MADE_UP}:80\r\n\r\n".encode())
        assert sock.recv(4096).startswith(b"HTTP/1.1 200")
        sock.sendall(f"GET /wiki HTTP/1.1\r\nhost: {MADE_UP}\r\nconnection: close\r\n\r\n".encode())
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    assert json.loads(answer.partition(b"\r\n\r\n")[2]) == {"path": "/wiki", "host": MADE_UP, "length": None}


def test_a_container_agents_proxy_refuses_other_hosts_with_the_reason(
        server: EmbeddedServer, scene_json: dict[str, Any]) -> None:
    context = _env(server, scene_json, {"mode": "real", "others": "refuse"})
    with httpx.Client(proxy=f"http://{context['hostnames']['proxy']}") as client, \
            pytest.raises(httpx.ProxyError) as refused:
        client.get(f"https://{MADE_UP}/wiki")
    assert "403" in str(refused.value)
    proxy_host, _, port = context["hostnames"]["proxy"].rpartition(":")
    with socket.create_connection((proxy_host, int(port))) as sock:
        sock.sendall(f"CONNECT {MADE_UP}:443 HTTP/1.1\r\n\r\n".encode())
        answer = sock.recv(4096).decode()
    assert answer.startswith("HTTP/1.1 403")
    assert f"{MADE_UP} is not one of them" in answer and "api.github.com" in answer


def test_plain_http_to_a_vendor_hostname_is_sent_to_https(server: EmbeddedServer, scene_json: dict[str, Any]) -> None:
    context = _env(server, scene_json)
    with httpx.Client(proxy=f"http://{context['hostnames']['proxy']}") as client:
        answer = client.get("http://api.github.com/repos/acme/orders")
    assert answer.status_code == 301
    assert answer.headers["location"] == "https://api.github.com/repos/acme/orders"


def test_a_call_on_the_base_url_cannot_claim_a_vendor_hostname(
        server: EmbeddedServer, scene_json: dict[str, Any]) -> None:
    context = _env(server, scene_json)
    headers = {**_github(context), "x-ancha-real-base": "https://evil.example", "x-ancha-real-host": "api.github.com"}
    answer = httpx.get(f"{context['tools']['github']['url']}/repos/acme/orders", headers=headers)
    assert answer.json()["url"].startswith(server.url)
    trace = [json.loads(line) for line in
             httpx.get(f"{server.url}/envs/{context['env_id']}/trace").text.splitlines()]
    assert "host" not in trace[-1]


def test_an_environment_without_real_hostnames_gets_no_ports(server: EmbeddedServer, scene_json: dict[str, Any]) -> None:
    answer = httpx.post(f"{server.url}/envs", json={"scene": scene_json, "agent": {"hostnames": "ancha"}})
    assert answer.status_code == 201
    assert "hostnames" not in answer.json()


@pytest.mark.parametrize(("hostnames", "says"), [
    ("yes", "agent.hostnames must be 'ancha', 'real'"),
    ({"mode": "real", "others": "open"}, "agent.hostnames.others must be 'tunnel' or 'refuse'"),
    ({"mode": "real", "model": {"hosts": ["api.openai.com"]}}, "agent.hostnames.model must be"),
])
def test_bad_hostname_settings_are_refused_with_what_to_send(
        server: EmbeddedServer, scene_json: dict[str, Any], hostnames: Any, says: str) -> None:
    answer = httpx.post(f"{server.url}/envs", json={"scene": scene_json, "agent": {"hostnames": hostnames}})
    assert answer.status_code == 400
    assert says in answer.json()["error"]


def test_tearing_the_environment_down_closes_its_ports(server: EmbeddedServer, scene_json: dict[str, Any]) -> None:
    context = _env(server, scene_json)
    ports = [int(context["hostnames"][k].rpartition(":")[2]) for k in ("proxy", "tls")]
    assert httpx.delete(f"{server.url}/envs/{context['env_id']}").status_code == 204
    for port in ports:
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", port), timeout=5).close()


def test_a_model_providers_hostname_goes_to_the_model_gateway_never_out(
        server: EmbeddedServer, scene_json: dict[str, Any], intranet: int, tmp_path: Path) -> None:
    """The local server stands in for the run's model gateway: the call arrives on the trial's prefix."""
    gateway = f"http://127.0.0.1:{intranet}/t/key1"
    context = _env(server, scene_json, {"mode": "real", "others": "refuse",
                                        "model": {"hosts": ["api.openai.com"], "url": gateway}})
    assert "api.openai.com" in context["hostnames"]["hosts"]
    with httpx.Client(proxy=f"http://{context['hostnames']['proxy']}", verify=_trust(context, tmp_path)) as client:
        answer = client.post("https://api.openai.com/v1/chat/completions?x=1", json={"model": "m"})
    assert answer.status_code == 200, answer.text
    assert answer.json()["path"] == "/t/key1/api.openai.com/v1/chat/completions?x=1"
    assert answer.json()["length"] == str(len(answer.request.content)), "the body goes on with its own length"
