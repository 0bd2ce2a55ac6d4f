"""Ancha's vendor hostnames for Python agents (``agent.hostnames: real``).

Ancha puts this folder first on the agent's ``PYTHONPATH``. Clients that honour
``HTTPS_PROXY`` reach Ancha through its proxy anyway; this reaches the ones that do not
(``datadog_api_client``, the ``okta`` SDK's aiohttp session): a lookup of a vendor's
hostname (``ANCHA_HOSTNAMES``) on port 443 answers with the address of Ancha's TLS port
(``ANCHA_HOSTNAMES_TLS``), where the same interception happens by the name the client asks
for. Every other lookup is untouched. Then the next ``sitecustomize`` on the path, if any,
runs as it would have.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import sys
from typing import Any


def _install() -> None:
    names = frozenset(h for h in os.environ.get("ANCHA_HOSTNAMES", "").lower().split(",") if h)
    target = os.environ.get("ANCHA_HOSTNAMES_TLS", "")
    host, _, port = target.rpartition(":")
    if not names or not host or not port.isdigit():
        return
    address = (host.strip("[]"), int(port))
    original = socket.getaddrinfo

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        name = host.decode("idna") if isinstance(host, bytes) else host
        if isinstance(name, str) and name.lower().rstrip(".") in names and str(port) in ("443", "https"):
            return original(address[0], address[1], *args, **kwargs)
        return original(host, port, *args, **kwargs)

    socket.getaddrinfo = getaddrinfo


def _next_sitecustomize() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    for entry in sys.path:
        folder = os.path.abspath(entry or os.curdir)
        candidate = os.path.join(folder, "sitecustomize.py")
        if folder == here or not os.path.isfile(candidate):
            continue
        spec = importlib.util.spec_from_file_location("_ancha_next_sitecustomize", candidate)
        if spec is not None and spec.loader is not None:
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        return


_install()
_next_sitecustomize()
