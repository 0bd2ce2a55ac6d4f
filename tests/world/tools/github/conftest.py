"""Fixtures for the GitHub replica's tests: a seeded world on the real server, official
clients (PyGithub, githubkit) pointed at it, and the vendor's OpenAPI response schemas."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

import httpx
import jsonschema
import pytest
from github import Auth, Github
from githubkit import GitHub
from tests.pygithub_client import UNTHROTTLED

from ancha.server.embedded import EmbeddedServer
from ancha.world.kernel import vendor_data

MANY = 45

SEED: dict[str, Any] = {
    "agent": {"ref": "github_agent", "login": "ancha-agent"},
    "users": [
        {"ref": "gh_laura", "login": "laura", "name": "Laura Diaz", "email": "laura@acme.test", "person": "laura"},
        {"ref": "gh_ben", "login": "ben", "name": "Ben Okafor"},
        {"ref": "gh_carol", "login": "carol"},
    ],
    "orgs": [{"login": "acme", "members": ["gh_ben", "github_agent"], "admins": ["gh_laura"],
              "teams": [{"name": "Backend", "members": ["gh_ben"], "repos": {"orders": "maintain"}},
                        {"name": "Support", "members": ["github_agent"]}]}],
    "repos": [
        {"ref": "orders", "name": "acme/orders", "private": True, "description": "Order service",
         "files": {"README.md": "# orders\n"}, "branches": {"fix-exports": {"from": "main"}},
         "permissions": {"github_agent": "write"},
         "labels": [{"name": "bug", "color": "d73a4a"}, {"name": "p1"}, {"name": "area/ui", "color": "0e8a16"}],
         "milestones": ["v1.0"],
         "issues": [
             {"ref": "export_bug", "title": "CSV exports are gone", "body": "Where did exports go? cc @ben",
              "author": "gh_laura", "labels": ["bug"], "assignees": ["gh_ben"], "milestone": "v1.0",
              "comments": [{"author": "gh_ben", "body": "Looking into it"}]},
             {"ref": "old_crash", "title": "Old crash on login", "author": "gh_ben", "state": "closed"},
         ],
         "pulls": [{"ref": "fix_pull", "title": "Fix exports", "head": "fix-exports", "author": "gh_ben",
                    "body": "Fixes #1"}]},
        {"ref": "vault", "name": "laura/vault", "private": True},
        {"ref": "notes", "name": "laura/notes", "description": "Laura's notes",
         "issues": [{"title": "Read me", "author": "gh_laura"}]},
        {"ref": "many", "name": "acme/many",
         "issues": [{"title": f"Issue {i}", "author": "gh_carol"} for i in range(1, MANY + 1)]},
    ],
}


_CLIENT: list[httpx.Client] = []


def _http() -> httpx.Client:
    """One kept-alive client for the tests' own calls (a new one per call loaded the CA bundle each
    time: 30 ms); it keeps no cookies between calls, as a fresh client would not."""
    if not _CLIENT:
        _CLIENT.append(httpx.Client(timeout=10))
    client = _CLIENT[0]
    client.cookies.clear()
    return client


@dataclass
class GH:
    context: dict[str, Any]
    url: str
    token: str
    client: Github
    kit: GitHub[Any]

    def raw(self, method: str, path: str, token: str | None = "", **kwargs: Any) -> httpx.Response:
        headers = dict(kwargs.pop("headers", {}))
        if token is not None:
            headers.setdefault("Authorization", f"token {token or self.token}")
        return _http().request(method, f"{self.url}{path}", headers=headers, timeout=10, **kwargs)

    def trace(self) -> list[dict[str, Any]]:
        base = self.url.rsplit("/github", 1)[0]
        text = _http().get(f"{base}/trace", timeout=10).text
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    def state(self) -> dict[str, Any]:
        base = self.url.rsplit("/github", 1)[0]
        return dict(_http().get(f"{base}/state", timeout=10).json()["github"])

    replica: Any
    """The environment's GitHubReplica (in this process): for tokens of seeded users."""

    def token_for(self, login: str, actor: str = "world") -> str:
        return str(self.replica.issue_token(login, actor))

    def as_user(self, login: str) -> Github:
        return Github(auth=Auth.Token(self.token_for(login)), base_url=self.url, retry=None, **UNTHROTTLED)


@pytest.fixture(scope="session")
def embedded_server() -> Iterator[EmbeddedServer]:
    with EmbeddedServer() as server:
        yield server


@pytest.fixture(scope="session")
def ancha_server(embedded_server: EmbeddedServer) -> str:
    """The shared server, held here so tests can reach a replica in-process."""
    return embedded_server.url


@pytest.fixture
def github_seed() -> dict[str, Any]:
    return copy.deepcopy(SEED)


@pytest.fixture
def make_github(make_env: Callable[..., dict[str, Any]],
                embedded_server: EmbeddedServer) -> Iterator[Callable[..., GH]]:
    clients: list[Github] = []

    def make(seed: dict[str, Any] | None = None, trial: int = 1, scene: dict[str, Any] | None = None) -> GH:
        context = make_env({"clock": {"start": "2026-03-02T09:00:00Z"}, **(scene or {}),
                            "world": {"github": copy.deepcopy(seed or SEED)}}, trial)
        tool = context["tools"]["github"]
        client = Github(auth=Auth.Token(tool["token"]), base_url=tool["url"], retry=None, **UNTHROTTLED)
        clients.append(client)
        kit: GitHub[Any] = GitHub(tool["token"], base_url=tool["url"])
        env = embedded_server.app.registry.get(context["env_id"])
        assert env is not None
        return GH(context, tool["url"], tool["token"], client, kit, env.tools["github"])

    yield make
    for client in clients:
        client.close()


@pytest.fixture
def gh(make_github: Callable[..., GH]) -> GH:
    return make_github()


# --- the vendor's response schemas -------------------------------------------------------------


def _spec() -> dict[str, Any]:
    """The packaged structure of GitHub's OpenAPI description."""
    spec: dict[str, Any] = vendor_data.read("github", "rest")["openapi"]
    return spec


@pytest.fixture(scope="session")
def openapi() -> dict[str, Any]:
    return _spec()


def _nullable(schema: Any) -> Any:
    """OpenAPI 3.0's ``nullable: true`` as JSON Schema's ``null`` type, recursively."""
    if isinstance(schema, dict):
        out = {k: _nullable(v) for k, v in schema.items() if k != "nullable"}
        if schema.get("nullable"):
            return {"anyOf": [out, {"type": "null"}]}
        return out
    if isinstance(schema, list):
        return [_nullable(v) for v in schema]
    return schema


@cache
def _components() -> dict[str, Any]:
    return {"components": _nullable(_spec()["components"])}


@pytest.fixture
def matches_spec(openapi: dict[str, Any]) -> Callable[[str, str, Any, int], None]:
    """Assert a body fits the vendor's schema for ``METHOD /template`` at a status."""

    def check(method: str, template: str, body: Any, status: int = 200) -> None:
        operation = openapi["paths"][template][method.lower()]
        response = operation["responses"][str(status)]
        if "$ref" in response:
            response = openapi["components"]["responses"][response["$ref"].rsplit("/", 1)[1]]
        schema = _nullable(response["content"]["application/json"]["schema"])
        validator = jsonschema.Draft7Validator({**schema, **_components()})
        errors = sorted(validator.iter_errors(body), key=lambda e: list(e.absolute_path))
        assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message[:300]}" for e in errors[:5])

    return check
