"""The server's TLS listener: tools whose official SDK only talks https (PagerDuty) are handed
out there with a certificate from the server's own CA, which agents are told to trust; the
other tools stay on plain http."""

from __future__ import annotations

import ssl
from pathlib import Path
from typing import Any

import httpx

from ancha.runner.agents.environment import trust_variables
from ancha.server.tls import LocalTLS

SCENE = {"world": {"slack": {}, "pagerduty": {"users": [{"ref": "pd_ana", "name": "Ana", "email": "ana@acme.test"}]}}}


def test_context__pagerduty_on_https_slack_on_http_with_the_ca(make_env: Any) -> None:
    context = make_env(SCENE)
    assert context["tools"]["pagerduty"]["url"].startswith("https://127.0.0.1:")
    assert context["tools"]["slack"]["url"].startswith("http://127.0.0.1:")
    assert context["tls"]["ca_pem"].startswith("-----BEGIN CERTIFICATE-----")


def test_tls_listener__trusted_through_the_ca_and_refused_without_it(make_env: Any) -> None:
    context = make_env(SCENE)
    tool = context["tools"]["pagerduty"]
    trusted = ssl.create_default_context(cadata=context["tls"]["ca_pem"])
    headers = {"Authorization": f"Token token={tool['token']}"}
    answer = httpx.get(f"{tool['url']}/users", headers=headers, verify=trusted)
    assert answer.status_code == 200 and answer.json()["users"][0]["email"] in ("ana@acme.test",
                                                                              tool["from_email"])
    untrusting = ssl.create_default_context(cafile=None, cadata=LocalTLS.create().ca_pem)
    try:
        httpx.get(f"{tool['url']}/users", headers=headers, verify=untrusting)
    except httpx.ConnectError as exc:
        assert "CERTIFICATE_VERIFY_FAILED" in str(exc)
    else:
        raise AssertionError("a client that does not trust the server's CA connected")


def test_trust_variables__usual_roots_plus_the_servers_ca(tmp_path: Path) -> None:
    roots = tmp_path / "corporate.pem"
    roots.write_text("-----BEGIN CERTIFICATE-----\ncorporate\n-----END CERTIFICATE-----\n")
    ca = LocalTLS.create().ca_pem
    variables = trust_variables({"tls": {"ca_pem": ca}}, tmp_path / "ca-bundle.pem", {"SSL_CERT_FILE": str(roots)})
    bundle = Path(variables["SSL_CERT_FILE"]).read_text()
    assert bundle.startswith("-----BEGIN CERTIFICATE-----\ncorporate") and bundle.endswith(ca)
    assert variables["REQUESTS_CA_BUNDLE"] == variables["SSL_CERT_FILE"]
    assert Path(variables["NODE_EXTRA_CA_CERTS"]).read_text() == ca  # Node adds it to its own roots


def test_trust_variables__node_keeps_the_shells_extra_cas_beside_the_servers(tmp_path: Path) -> None:
    proxy = tmp_path / "company-proxy.pem"  # a company proxy's CA, which npm and the agent's fetches need
    proxy.write_text("-----BEGIN CERTIFICATE-----\nproxy\n-----END CERTIFICATE-----\n")
    ca = LocalTLS.create().ca_pem
    variables = trust_variables({"tls": {"ca_pem": ca}}, tmp_path / "ca-bundle.pem",
                                {"NODE_EXTRA_CA_CERTS": str(proxy)})
    node = Path(variables["NODE_EXTRA_CA_CERTS"]).read_text()
    assert node.startswith("-----BEGIN CERTIFICATE-----\nproxy") and node.endswith(ca)


def test_trust_variables__nothing_without_a_tls_listener(tmp_path: Path) -> None:
    assert trust_variables({"tools": {}}, tmp_path / "ca-bundle.pem", {}) == {}
    assert not (tmp_path / "ca-bundle.pem").exists()


def test_trust_variables__trials_of_one_server_share_one_bundle_kept_out_of_their_folders(tmp_path: Path) -> None:
    ca = LocalTLS.create().ca_pem
    first = trust_variables({"tls": {"ca_pem": ca}}, None, {})
    second = trust_variables({"tls": {"ca_pem": ca}}, None, {})
    other = trust_variables({"tls": {"ca_pem": LocalTLS.create().ca_pem}}, None, {})
    assert first == second and first["SSL_CERT_FILE"] != other["SSL_CERT_FILE"]  # one per server authority
    assert Path(first["SSL_CERT_FILE"]).read_text().endswith(ca)
    assert Path(first["NODE_EXTRA_CA_CERTS"]).read_text() == ca
    Path(first["SSL_CERT_FILE"]).unlink()  # a bundle someone removed is written again
    assert Path(trust_variables({"tls": {"ca_pem": ca}}, None, {})["SSL_CERT_FILE"]).read_text().endswith(ca)
