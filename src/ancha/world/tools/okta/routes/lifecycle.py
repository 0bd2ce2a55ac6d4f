"""User lifecycle operations: ``/api/v1/users/{id}/lifecycle/<operation>``."""

from __future__ import annotations

from typing import Any

from ancha.world.tools.okta import lifecycle
from ancha.world.tools.okta.call import Answer, Call
from ancha.world.tools.okta.router import route


def _run(call: Call, operation: str) -> tuple[Any, str]:
    user = call.replica.user_or_404(call.params["id"])
    lifecycle.apply(call.replica, user, operation, call.actor)
    return user, user.id


def _secret(call: Call) -> str:
    """An activation or reset token: a credential, so from the world's secrets (never from the
    trial's RNG, which two environments of one scene and trial share; the same in a replay)."""
    return call.replica.world.secrets.token_hex(10)


def _token(call: Call, user_id: str) -> dict[str, str]:
    token = _secret(call)
    return {"activationUrl": f"{call.replica.base_url}/welcome/{token}", "activationToken": token}


@route("POST", "/api/v1/users/{id}/lifecycle/activate", partial="no activation email is sent")
def activate_user(call: Call) -> Answer:
    send_email = call.flag("sendEmail", True)
    _, user_id = _run(call, "activate")
    return Answer(200, {} if send_email else _token(call, user_id))


@route("POST", "/api/v1/users/{id}/lifecycle/reactivate", partial="no activation email is sent")
def reactivate_user(call: Call) -> Answer:
    send_email = call.flag("sendEmail", False)
    _, user_id = _run(call, "reactivate")
    return Answer(200, {} if send_email else _token(call, user_id))


@route("POST", "/api/v1/users/{id}/lifecycle/deactivate", partial="Prefer: respond-async is answered synchronously")
def deactivate_user(call: Call) -> Answer:
    call.flag("sendEmail", False)
    _run(call, "deactivate")
    return Answer(200, {})


@route("POST", "/api/v1/users/{id}/lifecycle/suspend")
def suspend_user(call: Call) -> Answer:
    _run(call, "suspend")
    return Answer(200, {})


@route("POST", "/api/v1/users/{id}/lifecycle/unsuspend")
def unsuspend_user(call: Call) -> Answer:
    _run(call, "unsuspend")
    return Answer(200, {})


@route("POST", "/api/v1/users/{id}/lifecycle/unlock")
def unlock_user(call: Call) -> Answer:
    _run(call, "unlock")
    return Answer(200, {})


@route("POST", "/api/v1/users/{id}/lifecycle/reset_password", partial="no email is sent; revokeSessions is ignored")
def reset_password(call: Call) -> Answer:
    send_email = call.flag("sendEmail", True)
    call.flag("revokeSessions", False)
    _run(call, "reset_password")
    token = _secret(call)
    return Answer(200, {} if send_email else {"resetPasswordUrl": f"{call.replica.base_url}/reset_password/{token}"})


@route("POST", "/api/v1/users/{id}/lifecycle/expire_password")
def expire_password(call: Call) -> Answer:
    user, _ = _run(call, "expire_password")
    return Answer(200, call.replica.user_json(user))
