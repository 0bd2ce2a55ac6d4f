"""The ``okta.user`` state check, as scene files write it, and resolved.

``{ okta.user: <$ref or login>, status: DEPROVISIONED }``, or ``status_in: [...]``, or
``exists: false`` beside it (exactly one). Refs come out bare.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from ancha.config.validation import join
from ancha.scene.predicates import Resolver
from ancha.world.tools.okta.pointers import UserPointer, resolve_user
from ancha.world.tools.okta.scene_file import STATUSES, Status

STATUS_HINT = "Okta's statuses: " + ", ".join(STATUSES)
SIBLINGS: dict[str, Any] = {"status": str, "status_in": list[str], "exists": bool}
"""Written beside ``okta.user`` in a check (each validated as okta.user's, whatever other kind
has a field of the same name). ``status`` is a plain string here: ``resolve_user_state``
checks its value, with Okta's statuses in the hint."""

UserStateFile = UserPointer


class UserState(BaseModel):
    """Resolved: one of ``user`` (a bare ref) or ``login``; one of the three conditions."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    user: str | None = None
    login: str | None = None
    status: Status | None = None
    status_in: list[Status] | None = None
    exists: bool | None = None


def _statuses(resolver: Resolver, values: list[Any], path: str) -> bool:
    wrong = [v for v in values if v not in STATUSES]
    for value in wrong:
        resolver.add(path, f"unknown Okta status {value!r}", STATUS_HINT)
    return not wrong


def resolve_user_state(data: dict[str, Any], path: str, resolver: Resolver) -> UserState | None:
    parent = path.rsplit(".", 2)[0]
    given = [name for name in SIBLINGS if data.get(name) is not None]
    if len(given) != 1:
        resolver.add(parent, "okta.user needs exactly one of status, status_in or exists" if not given else
                     f"okta.user takes one of status, status_in or exists, not {' and '.join(given)}",
                     "for example status: DEPROVISIONED, status_in: [SUSPENDED, DEPROVISIONED] or exists: false")
        return None
    ref, login, ok = resolve_user(resolver, data["value"], path)
    if data.get("status") is not None:
        ok = _statuses(resolver, [data["status"]], join(parent, "status")) and ok
    if data.get("status_in") is not None:
        if not data["status_in"]:
            resolver.add(join(parent, "status_in"), "needs at least one status", STATUS_HINT)
            ok = False
        ok = _statuses(resolver, data["status_in"], join(parent, "status_in")) and ok
    if not ok:
        return None
    return UserState.model_validate({"user": ref, "login": login, "status": data.get("status"),
                                     "status_in": data.get("status_in"), "exists": data.get("exists")})
