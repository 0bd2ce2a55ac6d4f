"""Shared fixtures: a real Ancha server on a loopback port, and environments on it."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from ancha.runner.agents.environment import trust_variables
from ancha.server.embedded import EmbeddedServer
from ancha.server.tls import local_tls


@pytest.fixture(scope="session", autouse=True)
def trusts_the_servers_ca(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Clients in the tests trust the embedded servers' TLS listener as agents do: through
    SSL_CERT_FILE naming the usual roots plus this process's CA (every server shares it)."""
    bundle = tmp_path_factory.mktemp("tls") / "ca-bundle.pem"
    variables = trust_variables({"tls": {"ca_pem": local_tls().ca_pem}}, bundle, os.environ)
    saved = {name: os.environ.get(name) for name in variables}
    os.environ.update(variables)
    yield
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture(scope="session")
def ancha_server() -> Iterator[str]:
    """The base URL of an Ancha server running in this test process."""
    with EmbeddedServer() as server:
        yield server.url


@pytest.fixture
def make_env(ancha_server: str) -> Iterator[Callable[..., dict[str, Any]]]:
    """Build an environment from a scene (the validated model's JSON form) and return
    its context: env_id, tools (url, token, ...), events, done_url, trial_token."""
    created: list[str] = []
    client = httpx.Client(base_url=ancha_server, timeout=30)

    def make(scene: dict[str, Any], trial: int = 1) -> dict[str, Any]:
        body = {"scene": {"name": "test-scene", **scene}, "trial": trial}
        answer = client.post("/envs", json=body)
        assert answer.status_code == 201, answer.text
        context: dict[str, Any] = answer.json()
        created.append(context["env_id"])
        return context

    yield make
    for env_id in created:
        client.delete(f"/envs/{env_id}")
    client.close()
