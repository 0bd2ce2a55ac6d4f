"""The ``okta.user`` world-rule action, made through the Management API with the world's
own token (traced with actor ``world``), so it publishes the domain events an agent's call
would and is visible through the API:

- ``{user: $ref | login, status: S}``: the lifecycle operations that lead the user to S
  (``lifecycle.plan``: e.g. ACTIVE -> SUSPENDED is ``suspend``; SUSPENDED -> PASSWORD_EXPIRED
  is ``unsuspend`` then ``expire_password``; to ACTIVE from PROVISIONED, RECOVERY or
  PASSWORD_EXPIRED the admin sets a password). LOCKED_OUT has no API (Okta locks a user
  after failed sign-ins): the world locks the user directly, with the same domain event.
- ``{login, email, first_name, last_name, status, groups}``: the same on the user with
  that login, created first (``POST /api/v1/users?activate=false``) when missing; status
  defaults to ACTIVE for a new user.
- ``groups``: the user is added to each (``PUT /api/v1/groups/{g}/users/{u}``).

Answers what went wrong (``okta.user: 403 E0000038 ...``) or None.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from ancha.world.kernel.tool import ToolRequest
from ancha.world.tools.okta import lifecycle
from ancha.world.tools.okta.action_bodies import UserAction

if TYPE_CHECKING:
    from ancha.world.kernel.port import WorldPort
    from ancha.world.tools.okta.replica import OktaReplica

MAX_STEPS = 8


def _call(replica: OktaReplica, world: WorldPort, method: str, path: str, body: Any = None,
          query: str = "") -> tuple[int, Any]:
    headers = {"authorization": f"SSWS {replica.world_token}", "accept": "application/json"}
    raw = b""
    if body is not None:
        headers["content-type"] = "application/json"
        raw = json.dumps(body).encode()
    answer = world.dispatch("okta", ToolRequest(method, path, query, headers, raw))
    try:
        data = json.loads(answer.body) if answer.body else None
    except ValueError:
        data = None
    return answer.status, data


def _failed(status: int, data: Any) -> str:
    if isinstance(data, dict) and data.get("errorCode"):
        causes = "; ".join(str(c.get("errorSummary")) for c in data.get("errorCauses") or [] if isinstance(c, dict))
        return f"okta.user: {status} {data['errorCode']} {data.get('errorSummary')}" + (f" ({causes})" if causes else "")
    return f"okta.user: {status}"


def _create(spec: UserAction, replica: OktaReplica, world: WorldPort) -> tuple[str | None, str | None]:
    login = spec.login or ""
    local = login.split("@", 1)[0]
    body: dict[str, Any] = {"profile": {"login": login, "email": spec.email or login,
                                        "firstName": spec.first_name or local.split(".")[0].title() or "User",
                                        "lastName": spec.last_name or (local.split(".")[1:] or ["Okta"])[0].title()}}
    if spec.status not in ("STAGED", "PROVISIONED"):
        body["credentials"] = {"password": {"value": world.secrets.token_urlsafe(18)}}
    status, data = _call(replica, world, "POST", "/api/v1/users", body, "activate=false")
    if status != 200 or not isinstance(data, dict):
        return None, _failed(status, data)
    return str(data["id"]), None


def perform(body: dict[str, Any], replica: OktaReplica, world: WorldPort) -> str | None:
    spec = UserAction.model_validate(body)
    if spec.user is not None:
        user = replica.state.users.get(world.refs[spec.user].id) if spec.user in world.refs else None
        if user is None:
            return f"okta.user: ${spec.user} no longer exists"
        target = spec.status
    else:
        user = replica.state.user(spec.login or "")
        target = spec.status or ("ACTIVE" if user is None else None)
        if user is None:
            user_id, error = _create(spec, replica, world)
            if user_id is None:
                return error
            user = replica.state.users[user_id]
    for _ in range(MAX_STEPS):
        if target is None or user.status == target:
            break
        step = lifecycle.plan(user.status, target, user.has_password)
        if step is None:
            return f"okta.user: no Okta operation leads {user.login} from {user.status} to {target}"
        if step == "lock":
            replica.set_status(user, "LOCKED_OUT", "lock", "world")
            continue
        if step == "set_password":
            status, data = _call(replica, world, "POST", f"/api/v1/users/{user.id}",
                                 {"credentials": {"password": {"value": world.secrets.token_urlsafe(18)}}})
        else:
            status, data = _call(replica, world, "POST", f"/api/v1/users/{user.id}/lifecycle/{step}",
                                 query="sendEmail=false")
        if status >= 400:
            return _failed(status, data)
    for pointer, is_ref in zip(spec.groups, spec.group_refs or [False] * len(spec.groups), strict=False):
        group_id = world.refs[pointer].id if is_ref and pointer in world.refs else replica.state.by_group_name.get(
            pointer.casefold())
        if group_id is None:
            return f"okta.user: no group {pointer!r}"
        status, data = _call(replica, world, "PUT", f"/api/v1/groups/{quote(group_id)}/users/{user.id}")
        if status >= 400:
            return _failed(status, data)
    return None
