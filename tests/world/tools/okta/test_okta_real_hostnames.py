"""With ``agent.hostnames: real`` the agent reaches Okta's replica on the org's own host,
``https://<org>.okta.com``: every ``_links`` href and other URL in an answer is on it, never
the replica's Ancha address, and leads back to the replica through ``real_hosts``. The org
comes from ``world.okta.org``, else from the users' login domain.

These drive an ``Environment`` in-process, with the headers the server's interceptor sets."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from ancha.scene import SceneInvalid, load_scene
from ancha.scene.model import Scene
from ancha.world.environment import Environment
from ancha.world.kernel.hostnames import REAL_BASE, REAL_HOST
from ancha.world.kernel.tool import ToolRequest, ToolResponse
from ancha.world.registry import catalog
from ancha.world.tools.okta.replica import OktaReplica
from ancha.world.tools.okta.spec import TOOL
from conftest import SEED


def _env(**okta: Any) -> tuple[Environment, OktaReplica]:
    scene = Scene.model_validate({"name": "okta", "clock": {"start": "2026-03-02T09:00:00Z"},
                                  "world": {"okta": {**copy.deepcopy(SEED), **okta}}})
    env = Environment("env_real", scene, 1)
    replica = env.tools["okta"]
    assert isinstance(replica, OktaReplica)
    return env, replica


def _follow(env: Environment, replica: OktaReplica, method: str, url: str, body: Any = None) -> ToolResponse:
    """Send ``url`` (on the org's host) to the replica as the interceptor would."""
    parts = urlsplit(url)
    assert TOOL.real_hosts is not None
    route = TOOL.real_hosts(replica)[parts.hostname or ""]
    headers = {"host": parts.netloc, REAL_BASE: route.base, REAL_HOST: parts.hostname or "",
               "x-forwarded-proto": "https", "authorization": f"SSWS {replica.token}",
               "content-type": "application/json", "accept": "application/json"}
    raw = json.dumps(body).encode() if body is not None else b""
    return env.dispatch("okta", ToolRequest(method, route.tool_path(parts.path or "/"), parts.query, headers, raw))


def _urls(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for item in value.values():
            yield from _urls(item)
    elif isinstance(value, list):
        for item in value:
            yield from _urls(item)
    elif isinstance(value, str) and value.startswith(("http://", "https://")):
        yield value


def test_org__named_by_the_scene_or_by_the_logins_domain():
    assert _env(org="initech")[1].org == "initech"
    assert _env()[1].org == "acme"  # dana@acme.com
    assert _env(users=[])[1].org == "acme"
    assert _env(users=[{"login": "dana@Globex.example"}])[1].org == "globex"


def test_org__not_a_dns_label_is_refused_with_what_to_write(tmp_path: Path):
    scene = tmp_path / "scene.yaml"
    scene.write_text("name: s\ntask: t\nworld:\n  okta:\n    org: Acme Corp\n")
    with pytest.raises(SceneInvalid) as info:
        load_scene(scene, catalog())
    problems = {p.path: p.message for p in info.value.problems}
    assert "org subdomain such as acme" in problems["world.okta.org"], problems


def test_real_hostnames__every_link_is_on_the_orgs_host_and_leads_back():
    env, replica = _env(org="initech")
    base = "https://initech.okta.com"
    users = json.loads(_follow(env, replica, "GET", f"{base}/api/v1/users?limit=2").body)
    groups = json.loads(_follow(env, replica, "GET", f"{base}/api/v1/groups").body)
    answer = _follow(env, replica, "GET", f"{base}/api/v1/users?limit=2")
    hook = json.loads(_follow(env, replica, "POST", f"{base}/api/v1/eventHooks", {
        "name": "audit", "events": {"type": "EVENT_TYPE", "items": ["user.lifecycle.deactivate"]},
        "channel": {"type": "HTTP", "version": "1.0.0", "config": {"uri": "https://hooks.example.com/okta"}}}).body)
    urls = {url for value in (users, groups, hook) for url in _urls(value)} - {"https://hooks.example.com/okta"}
    urls |= {part.split(">")[0].lstrip("<") for part in answer.headers.get("link", "").split(", ") if part}
    assert len(urls) > 10
    assert all(url.startswith(f"{base}/") and "/envs/" not in url for url in urls), sorted(urls)
    for url in urls:
        if "/lifecycle/" not in url:  # lifecycle links are POSTs that change the user
            assert _follow(env, replica, "GET", url).status == 200, url


def test_real_hostnames__ancha_address_keeps_links_below_the_replica():
    env, replica = _env(org="initech")
    headers = {"host": "127.0.0.1:8765", "authorization": f"SSWS {replica.token}"}
    answer = env.dispatch("okta", ToolRequest("GET", "/api/v1/groups", "", headers))
    assert json.loads(answer.body)[0]["_links"]["users"]["href"].startswith(
        "http://127.0.0.1:8765/envs/env_real/okta/api/v1/groups/")
