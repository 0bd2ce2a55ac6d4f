"""Shared fixtures: a real Ancha server on a loopback port, and environments on it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from ancha.server.embedded import EmbeddedServer


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
