"""What an agent with real hostnames (``agent.hostnames: real``) is given, so that it reaches its
tools at ``api.github.com`` and the rest with no base URL set.

The environment's context names its interceptor (``hostnames``: the proxy, the TLS port, the
hostnames and the CA that signs their certificates; ``ancha.server.interceptor``). A host
agent (and an endpoint agent's managed server) gets:

- the proxy in ``HTTPS_PROXY``, ``HTTP_PROXY`` and ``ALL_PROXY`` (and their lower-case
  spellings), with ``NO_PROXY`` for loopback, where Ancha's own URLs are;
- a CA bundle of the roots it trusts anyway plus Ancha's CAs, in ``SSL_CERT_FILE``,
  ``REQUESTS_CA_BUNDLE``, ``CURL_CA_BUNDLE`` and ``GIT_SSL_CAINFO``; Ancha's CAs alone in
  ``NODE_EXTRA_CA_CERTS`` (Node adds them to its own roots);
- ``NODE_USE_ENV_PROXY=1`` (Node 24 and later use the proxy themselves) and, for Node before
  24, ``--require`` of a preload in ``NODE_OPTIONS`` (``preload/node_hostnames.cjs``);
- for Python clients that ignore proxy variables, a ``sitecustomize`` first on
  ``PYTHONPATH`` (``preload/sitecustomize.py``); both preloads send a vendor hostname's
  connections to the TLS port (``ANCHA_HOSTNAMES_TLS``, ``ANCHA_HOSTNAMES``).

A container agent gets the proxy and the CAs only: its namespace's ``:443`` leads to the TLS
port and the vendors' names resolve to loopback there (``container.py``), so every client is
intercepted without help.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

PRELOAD = Path(__file__).with_name("preload")
NODE_PRELOAD = PRELOAD / "node_hostnames.cjs"
LOOPBACK = ("localhost", "127.0.0.1", "::1")
PROXY_NAMES = ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY")
BUNDLE_NAMES = ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "GIT_SSL_CAINFO")


def hostnames_of(context: Mapping[str, Any]) -> dict[str, Any] | None:
    """The context's ``hostnames`` (real hostnames are on), or None (base URLs)."""
    value = context.get("hostnames")
    return value if isinstance(value, dict) and value.get("mode") == "real" else None


def proxy_variables(proxy_url: str, shell: Mapping[str, str]) -> dict[str, str]:
    """The proxy variables, both spellings, with loopback (and whatever the shell had) in ``NO_PROXY``."""
    env: dict[str, str] = {}
    for name in PROXY_NAMES:
        env[name] = env[name.lower()] = proxy_url
    kept = [h for h in (shell.get("NO_PROXY") or shell.get("no_proxy") or "").split(",") if h.strip()]
    env["NO_PROXY"] = env["no_proxy"] = ",".join(dict.fromkeys([*LOOPBACK, *kept]))
    return env


def ca_pems(context: Mapping[str, Any]) -> list[str]:
    """Every CA an agent of this context must trust: the server's TLS listener's and the vendor hostnames'."""
    pems = [(context.get("tls") or {}).get("ca_pem"), (hostnames_of(context) or {}).get("ca_pem")]
    return list(dict.fromkeys(p for p in pems if p))


def host_variables(context: Mapping[str, Any], bundle: Path, shell: Mapping[str, str]) -> dict[str, str]:
    """A host agent's variables for real hostnames (see the module). ``bundle``: the CA bundle
    of its trusted roots and Ancha's CAs, written by ``environment.trust_variables``; ``shell``:
    the variables it has so far (its ``NODE_OPTIONS``, ``PYTHONPATH`` and ``NO_PROXY`` are kept)."""
    hostnames = hostnames_of(context)
    if hostnames is None:
        return {}
    env = proxy_variables(f"http://{hostnames['proxy']}", shell)
    cas_only = bundle.with_name("ancha-ca.pem")
    env.update({name: str(bundle) for name in BUNDLE_NAMES})
    env["NODE_EXTRA_CA_CERTS"] = str(cas_only)
    env["NODE_USE_ENV_PROXY"] = "1"
    env["NODE_OPTIONS"] = " ".join(p for p in (shell.get("NODE_OPTIONS", ""), f"--require {_quoted(NODE_PRELOAD)}") if p)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(PRELOAD), shell.get("PYTHONPATH", "")) if p)
    env["ANCHA_HOSTNAMES"] = ",".join(hostnames["hosts"])
    env["ANCHA_HOSTNAMES_TLS"] = str(hostnames["tls"])
    return env


def _quoted(path: Path) -> str:
    text = str(path)
    return f'"{text}"' if " " in text else text


def bundle_key(pems: list[str]) -> str:
    """A short name for a set of CAs (one bundle file per set)."""
    return hashlib.sha256("".join(pems).encode()).hexdigest()[:16]
