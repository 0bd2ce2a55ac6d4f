"""PagerDutyReplica: one environment's PagerDuty behind its REST API v2 and Events API v2.

Requests arrive as ``ToolRequest`` with paths relative to the tool's base URL
(``/incidents``, ``/v2/enqueue``). REST calls authenticate with ``Authorization: Token
token=...`` (PagerDuty's 401 otherwise) and writes name their user in ``From``. A path
PagerDuty has that the replica lacks answers 501 naming it (a coverage gap); anything
else answers PagerDuty's 404.
"""

from __future__ import annotations

import json
import string
from typing import Any

from ancha.world.kernel import hostnames, images
from ancha.world.kernel.port import WorldPort
from ancha.world.kernel.tool import ToolRequest, ToolResponse
from ancha.world.tools.pagerduty import errors
from ancha.world.tools.pagerduty.call import Call, Caller
from ancha.world.tools.pagerduty.coverage_ledger import LEDGER
from ancha.world.tools.pagerduty.lifecycle import IncidentDesk
from ancha.world.tools.pagerduty.models import PagerDutyState, User
from ancha.world.tools.pagerduty.router import Route, Router
from ancha.world.tools.pagerduty.routes import load_all, load_links
from ancha.world.tools.pagerduty.scene_file import PagerDutyFile
from ancha.world.tools.pagerduty.seed import seed_state

JSON = "application/json; charset=utf-8"
EVENTS_PATHS = ("/v2/enqueue", "/v2/change/enqueue")
AVATARS = "/avatars/"
"""Users' ``avatar_url`` (PagerDuty's point at gravatar): the replica serves them itself."""
_TOKEN_CHARS = string.ascii_letters + string.digits + "_-"
_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def _routers() -> tuple[Router[Route], Router[str]]:
    served: Router[Route] = Router()
    for item in load_all() + load_links():
        served.add(item.method, item.template, item)
    vendor: Router[str] = Router()
    for key in LEDGER:
        method, _, template = key.partition(" ")
        vendor.add(method, template, template)
    return served, vendor


SERVED, VENDOR = _routers()


class PagerDutyReplica:
    """The Tool for ``world.pagerduty``; ``state`` and ``desk`` are what the world reads and drives."""

    name = "pagerduty"

    def __init__(self, world: WorldPort, seed: PagerDutyFile | dict[str, Any] | None) -> None:
        self.world = world
        shared = getattr(world.scene, "seed", None)
        if isinstance(seed, dict) and callable(shared):
            seed = shared("pagerduty", PagerDutyFile)  # parsed once per scene, shared by its trials
        self.seed = PagerDutyFile.parse(seed)
        self.base_url = f"http://127.0.0.1/envs/{world.id}/pagerduty"
        self.state = PagerDutyState()
        self.desk = IncidentDesk(world, self.state, lambda: self.base_url)
        self.agent: User
        self.state, self.agent = seed_state(world, self.seed, self.desk)
        self.tokens: dict[str, Caller] = {}
        self.token = self.issue_token(self.agent, "agent")
        self.world_token = self.issue_token(None, "world")
        self.signing_secret = world.secrets.choice(string.ascii_letters + string.digits, 64)

    # --- Tool ---------------------------------------------------------------------------

    def credentials(self) -> dict[str, str]:
        keys = [s.integration_key for s in self.state.services.values()]
        return {"token": self.token, "signing_secret": self.signing_secret, "from_email": self.agent.email,
                "routing_key": keys[0] if keys else "", "routing_keys": ",".join(keys)}

    def place_label(self, place_id: str) -> str | None:
        incident = self.state.incidents.get(place_id)
        return f"PagerDuty incident #{incident.number} ({incident.title})" if incident is not None else None

    def snapshot(self) -> dict[str, Any]:
        from ancha.world.tools.pagerduty.judge import snapshot

        return snapshot(self)

    # --- tokens -------------------------------------------------------------------------

    def issue_token(self, user: User | None, actor: str) -> str:
        """A REST API token acting as ``user``, traced as ``actor`` (random: never valid elsewhere)."""
        token = "u+" + self.world.secrets.choice(_TOKEN_CHARS, 18)
        self.tokens[token] = Caller(user, actor)
        return token

    # --- requests -----------------------------------------------------------------------

    def handle(self, request: ToolRequest) -> ToolResponse:
        self._base(request)
        method = request.method.upper()
        path = "/" + request.path.strip("/")
        if path in EVENTS_PATHS:
            from ancha.world.tools.pagerduty.events_api import enqueue

            return enqueue(self, method, path, request)
        if path.startswith(AVATARS) and method in ("GET", "HEAD"):
            user = path.removeprefix(AVATARS).removesuffix(".png")
            if user not in self.state.users:
                return self._error(errors.NotFound(), None)
            return ToolResponse(200, images.placeholder_png(user), "image/png")
        caller: Caller | None = None
        try:
            caller = self._authenticate(request)
            found = SERVED.match(method, path)
            if not isinstance(found, tuple):
                return self._unrouted(method, path, caller)
            route, params = found
            call = Call(self, params, request.query, request.body, caller, request.headers)
            result = route.handler(call)
            status, body = result if isinstance(result, tuple) else (200, result)
        except errors.PagerDutyError as exc:
            return self._error(exc, caller)
        except Exception:  # a bug, never bad input
            body = {"error": {"message": "Internal Server Error", "code": 5000}}
            return ToolResponse(500, _dumps(body).encode(), JSON, actor=self._actor(caller))
        if body is None:
            return ToolResponse(status, b"", JSON, actor=self._actor(caller))
        return ToolResponse(status, _dumps(body).encode(), JSON, actor=self._actor(caller))

    def _unrouted(self, method: str, path: str, caller: Caller) -> ToolResponse:
        vendor = VENDOR.match(method, path)
        if isinstance(vendor, tuple):
            response = self._error(errors.NotImplementedHere(method, vendor[0]), caller)
            response.coverage_gap = True
            return response
        return self._error(errors.NotFound(), caller)

    def _authenticate(self, request: ToolRequest) -> Caller:
        header = request.headers.get("authorization", "").strip()
        scheme, _, value = header.partition(" ")
        value = value.strip()
        if scheme.lower() == "token" and value.startswith("token="):
            value = value.removeprefix("token=")
        elif scheme.lower() != "bearer":
            raise errors.Unauthorized()
        caller = self.tokens.get(value)
        if caller is None:
            raise errors.Unauthorized()
        return caller

    def _error(self, exc: errors.PagerDutyError, caller: Caller | None) -> ToolResponse:
        return ToolResponse(exc.status, _dumps(exc.body()).encode(), JSON, actor=self._actor(caller))

    def _base(self, request: ToolRequest) -> None:
        # Links point where the caller reached us: api.pagerduty.com, through real hostnames.
        self.base_url = hostnames.base_url(request, self.world.id, self.name) or self.base_url

    def actor_of_token(self, request: ToolRequest) -> str:
        """The trace actor of a request's token, if it carries one (the Events API needs none)."""
        try:
            return self._authenticate(request).actor
        except errors.PagerDutyError:
            return "agent"

    @staticmethod
    def _actor(caller: Caller | None) -> str:
        return caller.actor if caller is not None else "agent"
