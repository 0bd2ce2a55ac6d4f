"""Okta's System Log: every change made in the org, as Okta's ``LogEvent`` records.

The replica appends one ``LogEvent`` per change (``OktaReplica.audit``), stamped with the
world clock, in Okta's wire shape: ``uuid``, ``published``, ``eventType``, ``version``,
``severity``, ``displayMessage``, ``actor``, ``client``, ``outcome``, ``target[]``,
``transaction``, ``debugContext``, ``authenticationContext``, ``securityContext``,
``request`` and ``legacyEventType``. ``GET /api/v1/logs`` reads it (``routes/logs.py``);
the event hooks deliver it (``delivery.py``). A seeded org starts with an empty log.

Who did it: the agent's token acts as an admin user (the agent's Okta account when the
scene names one, else a stand-in admin that is not in the user list); the world (its
rules, people's moves) acts as Okta's ``SystemPrincipal``.
"""

from __future__ import annotations

import hashlib
import random
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ancha.world.tools.okta.models import okta_time

Listener = Callable[["LogEntry"], None]

SYSTEM_ACTOR = {
    "id": "0oa1systemprincipal0",
    "type": "SystemPrincipal",
    "alternateId": "system@okta.com",
    "displayName": "Okta System",
    "detailEntry": None,
}
"""The actor of what the world does (Okta's own jobs are logged as its system principal)."""
AGENT_NAME = "Ancha Agent"
AGENT_LOGIN = "agent@ancha.invalid"


@dataclass(frozen=True, slots=True)
class Target:
    """One ``target[]`` entry: what the event acted on."""

    id: str
    type: str
    alternate_id: str
    display_name: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": self.type,
            "alternateId": self.alternate_id,
            "displayName": self.display_name,
            "detailEntry": None,
        }


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a change came from: the API call behind it (None for the world's own jobs)."""

    path: str = ""
    query: str = ""
    user_agent: str = ""
    request_id: str = ""


@dataclass(slots=True)
class LogEntry:
    """One ``LogEvent`` as stored (its wire form is ``body``, built once)."""

    uuid: str
    at: float
    event_type: str
    body: dict[str, Any] = field(default_factory=dict)
    by: str = "agent"
    """The trace actor behind it (``agent``, ``world``, ``person:NAME``)."""


class SystemLog:
    """The org's events in the order they happened (which is ``published`` order)."""

    def __init__(self, seed: str) -> None:
        self.entries: list[LogEntry] = []
        self.index: dict[str, int] = {}
        self._rng = random.Random(hashlib.sha256(seed.encode()).digest())
        self._listeners: list[Listener] = []

    def subscribe(self, listener: Listener) -> None:
        """Hear every entry once it is appended (the event hooks' delivery)."""
        self._listeners.append(listener)

    def new_uuid(self) -> str:
        """A version-1-shaped UUID as Okta's (deterministic for a scene and trial)."""
        return str(uuid.UUID(int=self._rng.getrandbits(128), version=1))

    def request_id(self) -> str:
        return "".join(self._rng.choice("0123456789abcdef") for _ in range(32))

    def append(
        self,
        at: float,
        event_type: str,
        message: str,
        legacy: str | None,
        actor: dict[str, Any],
        targets: list[Target],
        origin: Origin | None,
        *,
        by: str = "agent",
        severity: str = "INFO",
    ) -> LogEntry:
        entry_uuid = self.new_uuid()
        request_id = origin.request_id if origin is not None and origin.request_id else self.request_id()
        url = ""
        if origin is not None and origin.path:
            url = origin.path + (f"?{origin.query}" if origin.query else "")
        body: dict[str, Any] = {
            "actor": dict(actor),
            "client": _client(origin),
            "device": None,
            "authenticationContext": {
                "authenticationProvider": None,
                "credentialProvider": None,
                "credentialType": None,
                "issuer": None,
                "interface": None,
                "authenticationStep": 0,
                "rootSessionId": None,
                "externalSessionId": "unknown",
            },
            "displayMessage": message,
            "eventType": event_type,
            "outcome": {"result": "SUCCESS", "reason": None},
            "published": okta_time(at),
            "securityContext": {
                "asNumber": None,
                "asOrg": None,
                "isp": None,
                "domain": None,
                "isProxy": None,
            },
            "severity": severity,
            "debugContext": {
                "debugData": {
                    "requestId": request_id,
                    **({"requestUri": origin.path, "url": url} if origin is not None and origin.path else {}),
                }
            },
            "legacyEventType": legacy,
            "transaction": {"type": "WEB" if origin is not None else "JOB", "id": request_id, "detail": {}},
            "uuid": entry_uuid,
            "version": "0",
            "request": {
                "ipChain": [{"ip": "127.0.0.1", "geographicalContext": None, "version": "V4", "source": None}]
                if origin is not None
                else []
            },
            "target": [t.to_dict() for t in targets],
        }
        entry = LogEntry(entry_uuid, at, event_type, body, by)
        self.index[entry_uuid] = len(self.entries)
        self.entries.append(entry)
        for listener in self._listeners:
            listener(entry)
        return entry


def _client(origin: Origin | None) -> dict[str, Any]:
    if origin is None:
        return {
            "userAgent": None,
            "zone": None,
            "device": None,
            "id": None,
            "ipAddress": None,
            "geographicalContext": None,
        }
    return {
        "userAgent": {"rawUserAgent": origin.user_agent or "UNKNOWN", "os": "Unknown", "browser": "UNKNOWN"},
        "zone": "null",
        "device": "Unknown",
        "id": None,
        "ipAddress": "127.0.0.1",
        "geographicalContext": None,
    }


def agent_actor(user: dict[str, Any] | None, org_seed: str) -> dict[str, Any]:
    """The admin the agent's API token acts as: its own Okta user when the scene names one."""
    if user is not None:
        profile = user.get("profile") or {}
        name = " ".join(str(p) for p in (profile.get("firstName"), profile.get("lastName")) if p)
        return {
            "id": user["id"],
            "type": "User",
            "alternateId": profile.get("login"),
            "displayName": name or profile.get("login"),
            "detailEntry": None,
        }
    digest = hashlib.sha256(f"{org_seed}:admin".encode()).hexdigest()
    return {
        "id": "00u" + digest[:17],
        "type": "User",
        "alternateId": AGENT_LOGIN,
        "displayName": AGENT_NAME,
        "detailEntry": None,
    }
