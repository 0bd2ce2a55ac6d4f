"""Grading ``okta.user`` on the replica's state (the seed included): the user's status, one
of several statuses, or whether the user (still) exists. A predicate on it is re-graded
when a user is created, changes status or is deleted."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote

from ancha.world.kernel.tool import StateOutcome
from ancha.world.tools.okta.check_bodies import UserState
from ancha.world.tools.okta.events import USER_EVENTS

if TYPE_CHECKING:
    from ancha.world.kernel.port import WorldPort
    from ancha.world.tools.okta.models import User
    from ancha.world.tools.okta.replica import OktaReplica

EVENTS = USER_EVENTS


def _expected(spec: UserState, who: str) -> str:
    if spec.status is not None:
        return f"{who} with status {spec.status}"
    if spec.status_in is not None:
        return f"{who} with a status in {', '.join(spec.status_in)}"
    return f"{who} to exist" if spec.exists else f"{who} to no longer exist"


def _find(spec: UserState, replica: OktaReplica,
          world: WorldPort) -> tuple[User | None, str, str | None, str | None]:
    """The user (None when gone), how it reads, and its id and login when known."""
    if spec.user is not None:
        try:
            user_id = world.ref_id(spec.user, "user")
        except LookupError:
            return None, f"${spec.user}", None, None
        user = replica.state.users.get(user_id)
        gone = replica.state.deleted.get(user_id)
        login = user.login if user is not None else gone.login if gone is not None else None
        return user, f"${spec.user} ({login or user_id})", user_id, login
    user = replica.state.user(spec.login or "")
    if user is None:  # deleted: its id is still known
        gone = next((g for g in replica.state.deleted.values() if g.login.lower() == (spec.login or "").lower()), None)
        return None, f"Okta user {spec.login}", gone.id if gone is not None else None, spec.login
    return user, f"Okta user {spec.login}", user.id, user.login


def _evidence(world: WorldPort, user_id: str | None, login: str | None) -> list[int]:
    """The calls that made the user what it is: its creation (the answer holds its id) and
    every lifecycle change, update or deletion since (the path names its id or its login),
    by the agent, a person or a world rule."""
    if not user_id and not login:
        return []
    names = [n for n in (user_id, login, quote(login or "", safe="")) if n]
    found = []
    for e in world.trace:
        if e.tool != "okta" or not e.worked or e.method == "GET":
            continue
        path = unquote(e.path)
        if any(f"/users/{n}" in path for n in names) or (
                user_id and e.method == "POST" and path.rstrip("/").endswith("/users")
                and user_id.encode() in e.response):
            found.append(e.seq)
    return found


def evaluate(body: dict[str, Any], replica: OktaReplica, world: WorldPort) -> StateOutcome:
    spec = UserState.model_validate(body)
    user, who, user_id, login = _find(spec, replica, world)
    expected = _expected(spec, who)
    actual = "no such user (it does not exist, or was deleted)" if user is None else f"status {user.status}"
    if spec.status is not None:
        passed = user is not None and user.status == spec.status
    elif spec.status_in is not None:
        passed = user is not None and user.status in spec.status_in
    else:
        passed = (user is not None) == bool(spec.exists)
    explanation = (f"Passed: expected {expected}, and found {actual}." if passed
                   else f"Failed: expected {expected}; actually {actual}.")
    if not passed and user is None and spec.status == "DEPROVISIONED":
        explanation += " Deleting a user is not deactivating it: a deleted user has no status."
    return StateOutcome(passed, expected, actual, explanation, _evidence(world, user_id, login))
