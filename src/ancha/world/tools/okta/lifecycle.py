"""Okta's user lifecycle: which operation is allowed in which status, and where it leads.

``apply(replica, user, operation, actor)`` performs one operation or raises Okta's error for
the status the user is in (the wrong-state answers Okta gives: ``E0000016`` activating an
active user, ``E0000001`` suspending a user that is not active, ``E0000032`` unlocking a
user that is not locked out, ``E0000038`` for the rest). ``plan`` answers the next
operation that moves a user toward a target status (world-rule actions walk it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ancha.world.tools.okta import errors

if TYPE_CHECKING:
    from ancha.world.tools.okta.models import User
    from ancha.world.tools.okta.replica import OktaReplica

OPERATIONS = ("activate", "deactivate", "suspend", "unsuspend", "unlock", "reset_password", "expire_password",
              "reactivate")
_ACTIVATABLE = frozenset({"STAGED", "DEPROVISIONED"})
_RESETTABLE = frozenset({"ACTIVE", "PROVISIONED", "RECOVERY", "LOCKED_OUT", "PASSWORD_EXPIRED"})
_EXPIRABLE = frozenset({"ACTIVE", "RECOVERY", "LOCKED_OUT", "PASSWORD_EXPIRED"})
PASSWORD_COMPLETES = frozenset({"PROVISIONED", "RECOVERY", "PASSWORD_EXPIRED"})
"""An admin setting a password (``POST /api/v1/users/{id}`` with ``credentials.password``) makes
these users ``ACTIVE``."""


def check(user: User, operation: str) -> str:
    """The status ``operation`` leads ``user`` to, or Okta's error for the user's status."""
    status = user.status
    if operation == "activate":
        if status not in _ACTIVATABLE:
            raise errors.AlreadyActive()
        return "ACTIVE" if user.has_password else "PROVISIONED"
    if operation == "reactivate":
        if status not in ("PROVISIONED", "RECOVERY"):
            raise errors.WrongStatus()
        return "PROVISIONED" if status == "PROVISIONED" else "RECOVERY"
    if operation == "deactivate":
        if status == "DEPROVISIONED":
            raise errors.WrongStatus()
        return "DEPROVISIONED"
    if operation == "suspend":
        if status != "ACTIVE":
            raise errors.ApiValidation("status", "Cannot suspend a user that is not active")
        return "SUSPENDED"
    if operation == "unsuspend":
        if status != "SUSPENDED":
            raise errors.ApiValidation("status", "Cannot unsuspend a user that is not suspended")
        return "ACTIVE"
    if operation == "unlock":
        if status not in ("LOCKED_OUT", "ACTIVE"):
            raise errors.UnlockNotAllowed()
        return "ACTIVE"
    if operation == "reset_password":
        if status not in _RESETTABLE:
            raise errors.WrongStatus()
        return "RECOVERY"
    if operation == "expire_password":
        if status not in _EXPIRABLE:
            raise errors.WrongStatus()
        return "PASSWORD_EXPIRED"
    raise errors.PathNotFound()


def apply(replica: OktaReplica, user: User, operation: str, actor: str) -> str:
    """Perform ``operation`` on ``user`` (Okta's error if its status does not allow it)."""
    target = check(user, operation)
    replica.set_status(user, target, operation, actor)
    return target


def plan(status: str, target: str, has_password: bool) -> str | None:
    """The next step from ``status`` toward ``target``: a lifecycle operation, ``set_password``
    or ``lock`` (failed sign-ins: no API locks a user); None when ``target`` cannot be reached."""
    if status == target:
        return None
    if target == "DEPROVISIONED":
        return "deactivate"
    if target == "PROVISIONED":
        if status in _ACTIVATABLE and not has_password:
            return "activate"
        return "deactivate" if status != "DEPROVISIONED" and not has_password else None
    if target == "STAGED":
        return None
    if target == "ACTIVE":
        if status in _ACTIVATABLE:
            return "activate"
        if status in PASSWORD_COMPLETES:
            return "set_password"
        return {"SUSPENDED": "unsuspend", "LOCKED_OUT": "unlock"}.get(status)
    step = {"SUSPENDED": "suspend", "PASSWORD_EXPIRED": "expire_password", "RECOVERY": "reset_password",
            "LOCKED_OUT": "lock"}.get(target)
    ready = {"SUSPENDED": {"ACTIVE"}, "PASSWORD_EXPIRED": _EXPIRABLE, "RECOVERY": _RESETTABLE,
             "LOCKED_OUT": {"ACTIVE", "PASSWORD_EXPIRED"}}.get(target, set())
    if step is None:
        return None
    return step if status in ready else plan(status, "ACTIVE", has_password)
