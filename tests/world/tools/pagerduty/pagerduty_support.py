"""Helpers for the PagerDuty replica's tests: the seed, the official ``pagerduty`` clients
pointed at a replica, in-process environments driven on the simulated clock, and the
vendor's OpenAPI response schemas."""

from __future__ import annotations

import copy
import json
import urllib.parse
from dataclasses import dataclass
from functools import cache
from typing import Any

import httpx
import httpx2
import jsonschema
import pagerduty
import pdpyras
import requests

from ancha.scene.model import Scene
from ancha.world.environment import Environment
from ancha.world.kernel import vendor_data
from ancha.world.kernel.tool import ToolRequest, ToolResponse

START = "2026-03-02T09:00:00Z"

SEED: dict[str, Any] = {
    "agent": {"ref": "pagerduty_agent", "name": "Ancha Agent", "email": "ancha-agent@acme.test"},
    "users": [
        {"ref": "pd_laura", "name": "Laura Diaz", "email": "laura@acme.test"},
        {"ref": "pd_ben", "name": "Ben Okafor", "email": "ben@acme.test"},
        {"ref": "pd_mike", "name": "Mike Chen", "email": "mike@acme.test"},
    ],
    "schedules": [
        {"ref": "pd_primary", "name": "Orders primary",
         "layers": [{"users": ["pd_laura", "pd_ben"], "rotation": 604800.0, "start": "2026-02-23T09:00:00Z"}]},
    ],
    "escalation_policies": [
        {"ref": "pd_orders_policy", "name": "Orders", "rules": [
            {"delay": 600.0, "targets": ["pd_primary"]},
            {"delay": 900.0, "targets": ["pd_mike"]},
        ]},
    ],
    "services": [
        {"ref": "pagerduty_orders", "name": "Orders API", "escalation_policy": "pd_orders_policy"},
        {"ref": "pagerduty_billing", "name": "Billing", "escalation_policy": "pd_orders_policy"},
    ],
    "incidents": [
        {"ref": "pd_old", "service": "pagerduty_orders", "title": "Disk full on db-1", "status": "resolved",
         "at": "2026-03-01T09:00:00Z", "notes": [{"content": "Cleaned up old WAL files", "from": "pd_ben"}]},
        {"ref": "pd_open", "service": "pagerduty_billing", "title": "Invoices delayed", "urgency": "low",
         "at": "2026-03-02T08:00:00Z", "assigned_to": ["pd_ben"]},
    ],
}


@dataclass
class PD:
    context: dict[str, Any]
    url: str
    token: str
    from_email: str
    client: pagerduty.RestApiV2Client
    env: Environment

    @property
    def replica(self) -> Any:
        return self.env.tools["pagerduty"]

    def raw(self, method: str, path: str, token: str | None = "", **kwargs: Any) -> httpx.Response:
        headers = dict(kwargs.pop("headers", {}))
        if token is not None:
            headers.setdefault("Authorization", f"Token token={token or self.token}")
        return httpx.request(method, f"{self.url}{path}", headers=headers, timeout=10, **kwargs)

    def events(self, service_ref: str = "pagerduty_orders") -> pagerduty.EventsApiV2Client:
        """The Events API client of a service, by its scene ref."""
        return pagerduty.EventsApiV2Client(routing_key(self.env, service_ref), base_url=self.url)

    def ref(self, name: str) -> str:
        return self.env.refs[name].id


def routing_key(env: Environment, service_ref: str = "pagerduty_orders") -> str:
    """A service's integration key in this environment (made per environment, never in the scene)."""
    return str(env.tools["pagerduty"].state.services[env.refs[service_ref].id].integration_key)  # type: ignore[attr-defined]


def rest_client(url: str, token: str, from_email: str | None) -> pagerduty.RestApiV2Client:
    return pagerduty.RestApiV2Client(token, default_from=from_email, base_url=url)


# --- in-process environments on the simulated clock ------------------------------------------


def build_env(seed: dict[str, Any] | None = None, people: dict[str, Any] | None = None, trial: int = 1,
              **scene: Any) -> Environment:
    model = Scene.model_validate({"name": "pagerduty-test", "clock": {"start": START, "limit": 86400},
                                  "world": {"pagerduty": copy.deepcopy(SEED if seed is None else seed)},
                                  "people": people or {}, **scene})
    return Environment("env-pd", model, trial)


def call(env: Environment, method: str, path: str, body: Any = None, query: str = "", token: str | None = None,
         from_email: str | None = "ancha-agent@acme.test") -> ToolResponse:
    replica: Any = env.tools["pagerduty"]
    headers = {"authorization": f"Token token={token or replica.token}", "content-type": "application/json"}
    if from_email:
        headers["from"] = from_email
    raw = json.dumps(body).encode() if body is not None else b""
    return env.dispatch("pagerduty", ToolRequest(method, path, query, headers, raw))


def advance(env: Environment, seconds: float) -> None:
    """Move simulated time forward by ``seconds``, running what falls due on the way."""
    target = env.clock.peek() + seconds
    while True:
        upcoming = env.scheduler.next_at()
        if upcoming is None or upcoming > target:
            break
        env.clock.advance_to(upcoming)
        env.timekeeper.run_due()
    env.clock.advance_to(target)
    env.timekeeper.run_due()


# --- the vendor's response schemas ------------------------------------------------------------


@cache
def _spec() -> dict[str, Any]:
    return dict(vendor_data.read("pagerduty", "rest")["openapi"])


def _nullable(schema: Any) -> Any:
    """OpenAPI 3.0's ``nullable`` as JSON Schema's null type; ``oneOf`` read as ``anyOf``: the
    vendor's alternatives (channel kinds, references) differ only in prose, so any real
    answer matches several of them."""
    if isinstance(schema, dict):
        out = {("anyOf" if k == "oneOf" else k): _nullable(v) for k, v in schema.items()
               if k not in ("nullable", "example", "examples", "discriminator")}
        if schema.get("nullable"):
            return {"anyOf": [out, {"type": "null"}]}
        return out
    if isinstance(schema, list):
        return [_nullable(v) for v in schema]
    return schema


def assert_schema(method: str, template: str, status: int, body: Any) -> None:
    """``body`` validates against the vendor's response schema of ``method template``."""
    spec = _spec()
    response = spec["paths"][template][method.lower()]["responses"][str(status)]
    if "$ref" in response:
        response = _resolve(spec, response["$ref"])
    schema = response["content"]["application/json"]["schema"]
    document = {**_nullable(spec), "$ref": "#/x"}
    document["x"] = _nullable(schema)
    jsonschema.validate(_without_nulls(body), document)


def _without_nulls(value: Any) -> Any:
    """PagerDuty answers ``null`` for fields its OpenAPI description types without ``nullable``
    (``resolved_at``, ``priority``; its own examples show them null): those are left out."""
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def _resolve(spec: dict[str, Any], ref: str) -> Any:
    node: Any = spec
    for part in ref.lstrip("#/").split("/"):
        node = node[part.replace("~1", "/")]
    return node


# --- the official clients on an in-process environment ----------------------------------------


INPROCESS = "https://pagerduty.replica.test"
"""The origin the in-process clients reach (over an adapter, never the network)."""


def _dispatch(env: Environment, method: str, url: str, headers: dict[str, str], body: bytes) -> ToolResponse:
    split = urllib.parse.urlsplit(url)
    headers = {k.lower(): v for k, v in headers.items()}
    headers.update({"host": split.netloc, "x-forwarded-proto": split.scheme})
    below = split.path.removeprefix(f"/envs/{env.id}/pagerduty") or "/"
    return env.dispatch("pagerduty", ToolRequest(method.upper(), below, split.query, headers, body))


class InProcessTransport(httpx2.BaseTransport):
    """The ``pagerduty`` client's transport (an httpx2 client) answering from ``env.dispatch``,
    so that the official client drives an in-process environment whose clock the test moves."""

    def __init__(self, env: Environment) -> None:
        self.env = env

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        answer = _dispatch(self.env, request.method, str(request.url), dict(request.headers), request.read())
        return httpx2.Response(answer.status, headers={"content-type": answer.content_type, **answer.headers},
                               stream=httpx2.ByteStream(answer.body), request=request)


class InProcessAdapter(requests.adapters.BaseAdapter):
    """The same for pdpyras (a requests session)."""

    def __init__(self, env: Environment) -> None:
        super().__init__()
        self.env = env

    def send(self, request: requests.PreparedRequest, *args: Any, **kwargs: Any) -> requests.Response:
        raw = request.body
        body = raw if isinstance(raw, bytes) else raw.encode() if isinstance(raw, str) else b""
        headers = {k: v if isinstance(v, str) else v.decode() for k, v in request.headers.items()}
        answer = _dispatch(self.env, str(request.method), str(request.url), headers, body)
        response = requests.Response()
        response.status_code = answer.status
        response._content = answer.body
        response.headers.update({"content-type": answer.content_type, **answer.headers})
        response.url = str(request.url)
        response.request = request
        response.encoding = "utf-8"
        return response

    def close(self) -> None:
        pass


def in_process_clients(env: Environment, from_email: str = "ancha-agent@acme.test",
                       ) -> tuple[pagerduty.RestApiV2Client, pdpyras.APISession]:
    """The ``pagerduty`` client and a pdpyras session on ``env``, as the agent."""
    replica: Any = env.tools["pagerduty"]
    url = f"{INPROCESS}/envs/{env.id}/pagerduty"
    client = rest_client(url, replica.token, from_email)
    session = pdpyras.APISession(replica.token, default_from=from_email)
    session.url = url
    client._transport = InProcessTransport(env)
    session.mount(INPROCESS, InProcessAdapter(env))
    return client, session
