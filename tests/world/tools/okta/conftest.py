"""Fixtures for the Okta replica's tests: a seeded world on the real server, the official
``okta`` SDK pointed at it (unchanged, configured as an agent is: orgUrl, token and
``OKTA_TESTING_TESTINGDISABLEHTTPSCHECK``), raw HTTP, and the vendor's response schemas."""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

import httpx
import pytest
from okta.client import Client as OktaClient

from ancha.world.kernel import vendor_data
from ancha.world.registry import registry

SEED: dict[str, Any] = {
    "groups": [
        {"ref": "okta_eng", "name": "Engineering", "description": "Everyone who ships code"},
        {"ref": "okta_sales", "name": "Sales"},
        {"ref": "okta_vpn", "name": "VPN Users"},
    ],
    "users": [
        {"ref": "okta_dana", "login": "dana@acme.com", "first_name": "Dana", "last_name": "Scully",
         "groups": ["okta_eng", "VPN Users"]},
        {"ref": "okta_fox", "login": "fox@acme.com", "first_name": "Fox", "last_name": "Mulder",
         "status": "SUSPENDED", "groups": ["okta_eng"]},
        {"ref": "okta_walter", "login": "walter@acme.com", "first_name": "Walter", "last_name": "Skinner",
         "status": "LOCKED_OUT"},
        {"ref": "okta_new", "login": "new@acme.com", "first_name": "New", "last_name": "Hire", "status": "STAGED"},
        {"ref": "okta_prov", "login": "prov@acme.com", "first_name": "Pro", "last_name": "Visioned",
         "status": "PROVISIONED"},
        {"ref": "okta_gone", "login": "gone@acme.com", "first_name": "Gone", "last_name": "Away",
         "status": "DEPROVISIONED", "groups": ["okta_sales"]},
        {"ref": "okta_exp", "login": "exp@acme.com", "first_name": "Exp", "last_name": "Ired",
         "status": "PASSWORD_EXPIRED"},
    ],
}

T = Any


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run one SDK coroutine to completion (the SDK is asyncio-based)."""
    return asyncio.run(coroutine)


@dataclass
class Org:
    context: dict[str, Any]
    url: str
    token: str

    def client(self) -> OktaClient:
        """A fresh official SDK client (one per event loop: its HTTP session binds to the loop)."""
        return OktaClient({"orgUrl": self.url, "token": self.token})

    def sdk(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """Call one SDK method in its own event loop: answers its (result, response, error) tuple."""

        async def call() -> Any:
            return await getattr(self.client(), name)(*args, **kwargs)
        return run(call())

    def raw(self, method: str, path: str, token: str | None = "", **kwargs: Any) -> httpx.Response:
        headers = dict(kwargs.pop("headers", {}))
        if token is not None:
            headers.setdefault("Authorization", f"SSWS {token or self.token}")
        headers.setdefault("Accept", "application/json")
        return httpx.request(method, path if path.startswith("http") else f"{self.url}{path}", headers=headers,
                             timeout=10, **kwargs)

    @property
    def env_url(self) -> str:
        return self.url.rsplit("/okta", 1)[0]

    def trace(self) -> list[dict[str, Any]]:
        text = httpx.get(f"{self.env_url}/trace", timeout=10).text
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    def state(self) -> dict[str, Any]:
        return dict(httpx.get(f"{self.env_url}/state", timeout=10).json()["okta"])

    def user_id(self, login: str) -> str:
        return str(self.raw("GET", f"/api/v1/users/{login}").json()["id"])

    def group_id(self, name: str) -> str:
        found = self.raw("GET", "/api/v1/groups", params={"q": name}).json()
        return str(next(g["id"] for g in found if g["profile"]["name"] == name))


@pytest.fixture
def make_org(make_env: Callable[..., dict[str, Any]], monkeypatch: pytest.MonkeyPatch) -> Callable[..., Org]:
    """An Okta world from a seed (resolved form), with the SDK's variables as an agent gets them."""
    for name, value in registry().tool("okta").agent_env.items():
        monkeypatch.setenv(name, value)

    def make(seed: dict[str, Any] | None = None, scene: dict[str, Any] | None = None) -> Org:
        context = make_env({"world": {"okta": copy.deepcopy(SEED if seed is None else seed)}, **(scene or {})})
        tool = context["tools"]["okta"]
        return Org(context, tool["url"], tool["token"])
    return make


@pytest.fixture
def org(make_org: Callable[..., Org]) -> Iterator[Org]:
    yield make_org()


@cache
def vendor_spec() -> dict[str, Any]:
    return dict(vendor_data.read("okta", "rest")["openapi"])


def build_env(seed: dict[str, Any] | None = None, **scene: Any) -> Any:
    """An in-process environment with an Okta world (its bus and state are observable)."""
    from ancha.scene.model import Scene
    from ancha.world.environment import Environment

    world = {"okta": copy.deepcopy(SEED if seed is None else seed)}
    return Environment("env_okta", Scene.model_validate({"name": "okta", "world": world, **scene}), 1)


def world_call(env: Any, method: str, path: str, body: Any = None, query: str = "") -> Any:
    """One agent call to the in-process replica."""
    from ancha.world.kernel.tool import ToolRequest

    replica = env.tools["okta"]
    raw = json.dumps(body).encode() if body is not None else b""
    return env.dispatch("okta", ToolRequest(method, path, query, {"authorization": f"SSWS {replica.token}"}, raw))
