"""With ``agent.hostnames: real`` the agent reaches Datadog's replica through the hosts the
official client picks for its site (``api.<site>``, and intake hosts for a few operations):
every link in an answer stays on the API host of the site the agent used, never the
replica's Ancha address, and leads back to the replica through ``real_hosts``.

These drive an ``Environment`` in-process, with the headers the server's interceptor sets."""

from __future__ import annotations

import copy
import json
from typing import Any
from urllib.parse import urlsplit

import pytest
from datadog_api_client import ApiClient, Configuration
from datadog_api_client.v2.api.events_api import EventsApi
from datadog_api_client.v2.api.logs_api import LogsApi

from ancha.scene.model import Scene
from ancha.world.environment import Environment
from ancha.world.kernel.hostnames import REAL_BASE, REAL_HOST
from ancha.world.kernel.tool import ToolRequest, ToolResponse
from ancha.world.tools.datadog.replica import DatadogReplica
from ancha.world.tools.datadog.spec import TOOL
from conftest import SEED, START, T0


def _env() -> tuple[Environment, DatadogReplica]:
    scene = Scene.model_validate({"name": "dd", "clock": {"start": START, "limit": 7200},
                                  "world": {"datadog": copy.deepcopy(SEED)}})
    env = Environment("env_real", scene, 1)
    replica = env.tools["datadog"]
    assert isinstance(replica, DatadogReplica)
    return env, replica


def _hosts(replica: DatadogReplica) -> dict[str, Any]:
    assert TOOL.real_hosts is not None
    return dict(TOOL.real_hosts(replica))


def _follow(env: Environment, replica: DatadogReplica, method: str, url: str, body: Any = None) -> ToolResponse:
    """Send ``url`` (on one of Datadog's hosts) to the replica as the interceptor would."""
    parts = urlsplit(url)
    route = _hosts(replica)[parts.hostname or ""]
    headers = {"host": parts.netloc, REAL_BASE: route.base, REAL_HOST: parts.hostname or "",
               "x-forwarded-proto": "https", "dd-api-key": replica.api_key, "dd-application-key": replica.app_key,
               "content-type": "application/json"}
    raw = json.dumps(body).encode() if body is not None else b""
    return env.dispatch("datadog", ToolRequest(method, route.tool_path(parts.path or "/"), parts.query, headers, raw))


def _client_sites() -> list[str]:
    setting = Configuration().get_host_settings()[0]
    return list(dict.fromkeys(setting["variables"]["site"]["enum_values"]))


def test_real_hosts__every_site_and_intake_the_client_can_use():
    _, replica = _env()
    hosts = _hosts(replica)
    client = ApiClient(Configuration())
    intakes = {server["variables"]["subdomain"]["default_value"]
               for endpoint in (LogsApi(client)._submit_log_endpoint, EventsApi(client)._create_event_endpoint)
               for server in endpoint.settings["servers"] if "subdomain" in server.get("variables", {})}
    for site in _client_sites():
        assert hosts[f"api.{site}"].base == f"https://api.{site}"
        for intake in intakes:
            assert hosts[f"{intake}.{site}"].base == f"https://api.{site}", (intake, site)


@pytest.mark.parametrize("site", ["datadoghq.com", "datadoghq.eu", "us5.datadoghq.com", "ddog-gov.com"])
def test_real_hostnames__log_and_event_links_stay_on_the_agents_site_and_lead_back(site):
    env, replica = _env()
    sent = _follow(env, replica, "POST", f"https://http-intake.logs.{site}/api/v2/logs",
                   [{"service": "orders", "message": "sent through the intake", "status": "error"}])
    assert sent.status == 202, sent.body
    logs = _follow(env, replica, "GET", f"https://api.{site}/api/v2/logs/events?page%5Blimit%5D=1"
                   f"&filter%5Bfrom%5D={int(T0 - 3600)}000&filter%5Bto%5D={int(T0)}000")
    assert logs.status == 200, logs.body
    events_v1 = _follow(env, replica, "GET", f"https://api.{site}/api/v1/events?start={int(T0 - 3600)}&end={int(T0)}")
    events_v2 = _follow(env, replica, "GET", f"https://api.{site}/api/v2/events?page%5Blimit%5D=1"
                        f"&filter%5Bfrom%5D={int(T0 - 3600)}&filter%5Bto%5D={int(T0)}")
    links = [json.loads(logs.body)["links"]["next"], json.loads(events_v2.body)["links"]["next"]]
    links += [event["url"] for event in json.loads(events_v1.body)["events"]]
    assert len(links) >= 3, links
    for link in links:
        assert link.startswith(f"https://api.{site}/api/") and "/envs/" not in link, link
        assert _follow(env, replica, "GET", link).status == 200, link


def test_real_hostnames__ancha_address_keeps_links_below_the_replica():
    env, replica = _env()
    headers = {"host": "127.0.0.1:8765", "dd-api-key": replica.api_key, "dd-application-key": replica.app_key}
    query = f"start={int(T0 - 3600)}&end={int(T0)}"
    answer = env.dispatch("datadog", ToolRequest("GET", "/api/v1/events", query, headers))
    urls = [event["url"] for event in json.loads(answer.body)["events"]]
    assert urls and all(url.startswith("http://127.0.0.1:8765/envs/env_real/datadog/api/v1/events/") for url in urls)
