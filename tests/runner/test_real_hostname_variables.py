"""What a host agent with agent.hostnames: real is given: the proxy in both spellings, the CA
bundle where every runtime looks, and two preloads that send a vendor hostname's connections
to Ancha's TLS port for clients that ignore proxy variables (Python's sitecustomize, Node's
--require), chaining to what the agent had before."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from ancha.runner.agents.real_hostnames import NODE_PRELOAD, PRELOAD, host_variables

CONTEXT = {"hostnames": {"mode": "real", "hosts": ["api.github.com", "slack.com"], "ca_pem": "PEM",
                         "proxy": "127.0.0.1:4100", "tls": "127.0.0.1:4200", "others": "tunnel"}}


def test_the_proxy_and_the_bundle_are_named_everywhere_a_client_looks(tmp_path: Path) -> None:
    bundle = tmp_path / "ca-bundle.pem"
    env = host_variables(CONTEXT, bundle, {"NO_PROXY": "intranet.test", "NODE_OPTIONS": "--max-old-space-size=512",
                                           "PYTHONPATH": "/mine"})
    for name in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "https_proxy", "http_proxy", "all_proxy"):
        assert env[name] == "http://127.0.0.1:4100"
    assert env["NO_PROXY"] == env["no_proxy"] == "localhost,127.0.0.1,::1,intranet.test"
    for name in ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "GIT_SSL_CAINFO"):
        assert env[name] == str(bundle)
    assert env["NODE_EXTRA_CA_CERTS"] == str(tmp_path / "ancha-ca.pem")
    assert env["NODE_USE_ENV_PROXY"] == "1"
    assert env["NODE_OPTIONS"] == f"--max-old-space-size=512 --require {NODE_PRELOAD}"
    assert env["PYTHONPATH"] == f"{PRELOAD}{os.pathsep}/mine"
    assert env["ANCHA_HOSTNAMES"] == "api.github.com,slack.com"
    assert env["ANCHA_HOSTNAMES_TLS"] == "127.0.0.1:4200"


def test_base_urls_give_no_variables(tmp_path: Path) -> None:
    assert host_variables({"tools": {}}, tmp_path / "b.pem", {}) == {}


def test_pythons_lookup_of_a_vendor_hostname_answers_with_the_tls_port_and_the_next_sitecustomize_runs(
        tmp_path: Path) -> None:
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "sitecustomize.py").write_text("import os\nos.environ['THEIRS_RAN'] = 'yes'\n")
    program = ("import os, socket\n"
               "print(socket.getaddrinfo('api.github.com', 443, type=socket.SOCK_STREAM)[0][4])\n"
               "print(socket.getaddrinfo('API.GITHUB.COM.', 'https', type=socket.SOCK_STREAM)[0][4])\n"
               "print(socket.getaddrinfo('localhost', 443, socket.AF_INET, socket.SOCK_STREAM)[0][4])\n"
               "print(os.environ.get('THEIRS_RAN'))\n")
    env = {**host_variables(CONTEXT, tmp_path / "b.pem", {"PYTHONPATH": str(theirs)}), "PATH": os.environ["PATH"]}
    ran = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.splitlines() == ["('127.0.0.1', 4200)", "('127.0.0.1', 4200)", "('127.0.0.1', 443)", "yes"]


@pytest.mark.skipif(shutil.which("node") is None and os.environ.get("CI") != "true", reason="needs Node.js")
def test_nodes_tls_connections_to_a_vendor_hostname_go_to_the_tls_port_asking_for_the_vendors_name(
        tmp_path: Path) -> None:
    """Node 20 ignores proxy variables in fetch and https: the preload points tls.connect at Ancha."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    hello: list[bytes] = []

    def accept() -> None:
        connection, _ = listener.accept()
        with connection:
            connection.settimeout(30)
            hello.append(connection.recv(4096))

    waiter = threading.Thread(target=accept, daemon=True)
    waiter.start()
    context = {"hostnames": {**CONTEXT["hostnames"], "tls": f"127.0.0.1:{port}"}}
    env = {**host_variables(context, tmp_path / "b.pem", {}), "PATH": os.environ["PATH"]}
    script = ("const tls = require('node:tls');"
              "const s = tls.connect({host: 'api.github.com', port: 443});"
              "s.on('error', () => process.exit(0)); setTimeout(() => process.exit(0), 2000);")
    subprocess.run(["node", "-e", script], env=env, capture_output=True, text=True, timeout=60)
    waiter.join(timeout=30)
    listener.close()
    assert hello and b"api.github.com" in hello[0]  # the ClientHello's SNI
