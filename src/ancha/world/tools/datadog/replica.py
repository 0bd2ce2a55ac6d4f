"""DatadogReplica: one environment's Datadog behind Datadog's own HTTP API.

Requests arrive as ``ToolRequest`` with paths relative to the tool's base URL
(``/api/v1/monitor``). Authentication is Datadog's: ``DD-API-KEY`` (or ``api_key=``) on
every call, ``DD-APPLICATION-KEY`` (or ``application_key=``) as well on most; a missing or
wrong key gets 403 ``{"errors": ["Forbidden"]}``. A path the replica serves runs its
handler (``routes/``); one Datadog has but the replica lacks answers 501 naming it (a
coverage gap); anything else gets Datadog's 404 ``{"errors": ["Not found"]}``.

Keys look like Datadog's (32 hex digits for API keys, 40 for application keys) and are
random per environment: they work only here. World rules and faults call with a key pair
of their own, traced as actor ``world``. ``/ancha/...`` paths are the world's own
(forcing a monitor's state, holding a metric, log streams): they answer Datadog's 404 to
anyone else.

Refs: monitors register as ``monitor`` (id: the monitor id), dashboards as ``dashboard``,
events as ``event``, seeded logs as ``log`` (their log id).
"""

from __future__ import annotations

import json
from typing import Any

from ancha.world.kernel import hostnames
from ancha.world.kernel.port import WorldPort
from ancha.world.kernel.tool import ToolRequest, ToolResponse
from ancha.world.tools.datadog.call import Call
from ancha.world.tools.datadog.errors import ApiError, forbidden, not_found, not_implemented
from ancha.world.tools.datadog.models import DatadogState
from ancha.world.tools.datadog.router import Route, Table, registered
from ancha.world.tools.datadog.scene_file import DatadogFile

JSON = "application/json"
_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def _tables() -> tuple[Table[Route], Table[str]]:
    from ancha.world.tools.datadog.coverage_ledger import LEDGER
    from ancha.world.tools.datadog.routes import load_all

    load_all()
    served: Table[Route] = Table()
    for r in registered():
        served.add(r.method, r.template, r)
    vendor: Table[str] = Table()
    for key in LEDGER:
        method, _, template = key.partition(" ")
        vendor.add(method, template, template)
    return served, vendor


_TABLES: tuple[Table[Route], Table[str]] | None = None


def tables() -> tuple[Table[Route], Table[str]]:
    global _TABLES
    if _TABLES is None:
        _TABLES = _tables()
    return _TABLES


class DatadogReplica:
    """The Tool for ``world.datadog``; ``state`` is what checks read."""

    name = "datadog"

    def __init__(self, world: WorldPort, seed: DatadogFile | dict[str, Any] | None) -> None:
        self.world = world
        shared = getattr(world.scene, "seed", None)
        if isinstance(seed, dict) and callable(shared):
            # Parsed (and its logs indexed) once per scene, shared by its trials.
            seed = shared("datadog", DatadogFile)
        self.seed = DatadogFile.parse(seed)
        self.state = DatadogState(world, self.seed)
        # The world's secrets, not the trial's RNG: a key must never work in another environment.
        keys = world.secrets
        self.api_key = keys.token_hex(16)
        self.app_key = keys.token_hex(20)
        self.world_api_key = keys.token_hex(16)
        self.world_app_key = keys.token_hex(20)
        self.webhook_token = keys.token_hex(16)
        self.signing_secret = keys.token_hex(16)
        self.base_url = f"http://127.0.0.1/envs/{world.id}/datadog"

    # --- Tool ---------------------------------------------------------------------------

    def credentials(self) -> dict[str, str]:
        return {"token": self.api_key, "api_key": self.api_key, "app_key": self.app_key,
                "webhook_token": self.webhook_token, "signing_secret": self.signing_secret}

    def world_headers(self) -> dict[str, str]:
        """Headers that make a call the world's (actions, faults)."""
        return {"dd-api-key": self.world_api_key, "dd-application-key": self.world_app_key,
                "content-type": "application/json"}

    def place_label(self, place_id: str) -> str | None:
        return None

    def snapshot(self) -> dict[str, Any]:
        self.state.evaluate_all()
        return self.state.snapshot()

    # --- requests -------------------------------------------------------------------------

    def _actor(self, request: ToolRequest, call: Call | None, need_app: bool) -> str | None:
        """``agent`` or ``world`` for good keys, None when Datadog would refuse them."""
        headers = request.headers
        query = call.query if call is not None else {}
        api = headers.get("dd-api-key") or (query.get("api_key") or [""])[-1]
        app = headers.get("dd-application-key") or (query.get("application_key") or [""])[-1]
        if api == self.api_key and (not need_app or app == self.app_key):
            return "agent"
        if api == self.world_api_key and (not need_app or app == self.world_app_key):
            return "world"
        return None

    def handle(self, request: ToolRequest) -> ToolResponse:
        # Links (logs' next page) point where the caller reached us: Datadog's site, through real hostnames.
        self.base_url = hostnames.base_url(request, self.world.id, self.name) or self.base_url
        served, vendor = tables()
        path = request.path.split("?", 1)[0]
        found = served.match(request.method, path)
        actor = "agent"
        try:
            if found is None:
                probe = Call(self, request, {}, "agent")
                who = self._actor(request, probe, need_app=False)
                known = vendor.match(request.method, path)
                if known is not None:
                    if who is None:
                        raise forbidden()
                    actor = who
                    raise not_implemented(request.method, known[0])
                raise not_found()
            route, params = found
            call = Call(self, request, params, "agent")
            who = self._actor(request, call, route.app_key)
            if who is None:
                raise forbidden()
            if route.template.startswith("/ancha/") and who != "world":
                raise not_found()
            actor = call.actor = who
            reply = route.handler(call)
        except ApiError as error:
            return ToolResponse(error.status, _dumps(error.body()).encode(), JSON, actor=actor,
                                coverage_gap=error.status == 501)
        if reply.body is None:
            return ToolResponse(reply.status, b"", JSON, actor=actor)
        return ToolResponse(reply.status, _dumps(reply.body).encode(), JSON, actor=actor)

    def world_call(self, method: str, path: str, body: Any = None, query: str = "") -> tuple[int, Any]:
        """A call as the world (traced through the environment); (status, parsed JSON)."""
        data = b"" if body is None else json.dumps(body).encode()
        response = self.world.dispatch("datadog", ToolRequest(method, path, query, self.world_headers(), data))
        try:
            parsed = json.loads(response.body) if response.body else None
        except ValueError:
            parsed = None
        return response.status, parsed


def error_text(status: int, body: Any) -> str:
    """``404 Monitor not found`` from a Datadog error answer."""
    if isinstance(body, dict) and isinstance(body.get("errors"), list) and body["errors"]:
        return f"{status} {'; '.join(str(e) for e in body['errors'])}"
    return str(status)
