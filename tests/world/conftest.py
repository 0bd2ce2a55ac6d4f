"""Fixtures for the living world's tests: environments on the real server, seen as the agent."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from world_agent import PEOPLE_SCENE, World


@pytest.fixture
def people_scene() -> dict[str, Any]:
    return copy.deepcopy(PEOPLE_SCENE)


@pytest.fixture
def make_world(ancha_server: str) -> Iterator[Callable[..., World]]:
    """Build an environment (scene JSON, trial, agent settings) and return the agent's view of it."""
    made: list[World] = []
    control = httpx.Client(base_url=ancha_server, timeout=30)

    def make(scene: dict[str, Any], trial: int = 1, agent: dict[str, Any] | None = None) -> World:
        body = {"scene": {"name": "world-test", **copy.deepcopy(scene)}, "trial": trial,
                "agent": agent or {"idle": 10.0, "input": "command"}}
        answer = control.post("/envs", json=body)
        assert answer.status_code == 201, answer.text
        world = World(ancha_server, answer.json())
        made.append(world)
        return world

    yield make
    for world in made:
        control.delete(f"/envs/{world.id}")
        world.http.close()
    control.close()
