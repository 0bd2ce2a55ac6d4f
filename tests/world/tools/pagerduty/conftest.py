"""Fixtures for the PagerDuty replica's tests: a seeded account on the real server with the
official clients pointed at it, and in-process environments on the simulated clock."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from pagerduty_support import PD, SEED, START, build_env, rest_client

from ancha.server.embedded import EmbeddedServer
from ancha.world.environment import Environment


@pytest.fixture(scope="session")
def embedded_server() -> Iterator[EmbeddedServer]:
    with EmbeddedServer() as server:
        yield server


@pytest.fixture(scope="session")
def ancha_server(embedded_server: EmbeddedServer) -> str:
    return embedded_server.url


@pytest.fixture
def make_pd(make_env: Callable[..., dict[str, Any]], embedded_server: EmbeddedServer) -> Callable[..., PD]:
    def make(seed: dict[str, Any] | None = None, scene: dict[str, Any] | None = None, trial: int = 1) -> PD:
        context = make_env({"clock": {"start": START}, **(scene or {}),
                            "world": {"pagerduty": copy.deepcopy(SEED if seed is None else seed)}}, trial)
        tool = context["tools"]["pagerduty"]
        env = embedded_server.app.registry.get(context["env_id"])
        assert env is not None
        return PD(context, tool["url"], tool["token"], tool["from_email"],
                  rest_client(tool["url"], tool["token"], tool["from_email"]), env)

    return make


@pytest.fixture
def pd(make_pd: Callable[..., PD]) -> PD:
    return make_pd()


@pytest.fixture
def env() -> Environment:
    return build_env()


