"""Event hooks: list, create, get, replace, delete, and the lifecycle (activate, deactivate,
verify). The hooks' deliveries are ``delivery.py``'s."""

from __future__ import annotations

from ancha.world.tools.okta import errors
from ancha.world.tools.okta.call import Answer, Call
from ancha.world.tools.okta.router import route


@route("GET", "/api/v1/eventHooks")
def list_event_hooks(call: Call) -> Answer:
    replica = call.replica
    return Answer(200, [replica.hook_json(h) for h in sorted(replica.hooks.values(), key=lambda h: h.id)])


@route("POST", "/api/v1/eventHooks", partial="event hook filters (events.filter) are not applied")
def create_event_hook(call: Call) -> Answer:
    return Answer(200, call.replica.hook_json(call.replica.create_hook(call.json(), call.actor)))


@route("GET", "/api/v1/eventHooks/{eventHookId}")
def get_event_hook(call: Call) -> Answer:
    return Answer(200, call.replica.hook_json(call.replica.hook_or_404(call.params["eventHookId"])))


@route(
    "PUT", "/api/v1/eventHooks/{eventHookId}", partial="event hook filters (events.filter) are not applied"
)
def replace_event_hook(call: Call) -> Answer:
    hook = call.replica.hook_or_404(call.params["eventHookId"])
    call.replica.replace_hook(hook, call.json(), call.actor)
    return Answer(200, call.replica.hook_json(hook))


@route("DELETE", "/api/v1/eventHooks/{eventHookId}")
def delete_event_hook(call: Call) -> Answer:
    hook = call.replica.hook_or_404(call.params["eventHookId"])
    if hook.status != "INACTIVE":  # Okta's safety catch: deactivate first
        raise errors.ApiValidation(
            "status", "status: Only an INACTIVE event hook can be deleted. Deactivate it first."
        )
    call.replica.delete_hook(hook, call.actor)
    return Answer(204)


@route("POST", "/api/v1/eventHooks/{eventHookId}/lifecycle/activate")
def activate_event_hook(call: Call) -> Answer:
    hook = call.replica.hook_or_404(call.params["eventHookId"])
    call.replica.set_hook(hook, call.actor, status="ACTIVE")
    return Answer(200, call.replica.hook_json(hook))


@route("POST", "/api/v1/eventHooks/{eventHookId}/lifecycle/deactivate")
def deactivate_event_hook(call: Call) -> Answer:
    hook = call.replica.hook_or_404(call.params["eventHookId"])
    call.replica.set_hook(hook, call.actor, status="INACTIVE")
    return Answer(200, call.replica.hook_json(hook))


@route(
    "POST",
    "/api/v1/eventHooks/{eventHookId}/lifecycle/verify",
    partial="no verification request is sent to the hook's URI: the hook is verified at once",
)
def verify_event_hook(call: Call) -> Answer:
    hook = call.replica.hook_or_404(call.params["eventHookId"])
    call.replica.set_hook(hook, call.actor, verified=True)
    return Answer(200, call.replica.hook_json(hook))
