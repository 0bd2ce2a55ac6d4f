"""Event hooks through the official okta SDK: create (ACTIVE, UNVERIFIED, the auth value
never shown), verify, list, replace (a new channel must be verified again), deactivate and
delete (only an inactive hook), Okta's errors; then the calls an active, verified hook gets,
in Okta's ``com.okta.event_hook`` shape with the hook's own headers."""

from __future__ import annotations

import copy
import json
from typing import Any

from okta.models import EventHook

from ancha.world.kernel.tool import ToolRequest
from ancha.world.kernel.webhook import Attempt
from ancha.world.tools.okta.delivery import WEBHOOK
from conftest import Org, build_env, world_call

HOOK: dict[str, Any] = {
    "name": "Offboarding feed",
    "events": {"type": "EVENT_TYPE", "items": ["user.lifecycle.deactivate", "group.user_membership.add"]},
    "channel": {"type": "HTTP", "version": "1.0.0", "config": {
        "uri": "https://hooks.acme.test/okta",
        "headers": [{"key": "X-Other-Header", "value": "my-header-value"}],
        "authScheme": {"type": "HEADER", "key": "Authorization", "value": "my-shared-secret"}}},
}


def _hook(**changes: Any) -> dict[str, Any]:
    body = copy.deepcopy(HOOK)
    body.update(changes)
    return body


def test_create_verify_list_replace_deactivate_delete(org: Org) -> None:
    hook, _, err = org.sdk("create_event_hook", EventHook.from_dict(HOOK))
    assert err is None and hook.id.startswith("who")
    assert hook.status == "ACTIVE" and hook.verification_status.value == "UNVERIFIED"
    raw = org.raw("GET", f"/api/v1/eventHooks/{hook.id}").json()
    assert raw["channel"]["config"] == {"uri": "https://hooks.acme.test/okta", "method": "POST",
                                        "headers": [{"key": "X-Other-Header", "value": "my-header-value"}],
                                        "authScheme": {"type": "HEADER", "key": "Authorization"}}
    assert raw["events"] == {"type": "EVENT_TYPE", "filter": None,
                             "items": ["user.lifecycle.deactivate", "group.user_membership.add"]}
    assert raw["_links"]["self"]["href"] == f"{org.url}/api/v1/eventHooks/{hook.id}"
    assert raw["_links"]["verify"] == {"href": f"{org.url}/api/v1/eventHooks/{hook.id}/lifecycle/verify",
                                       "hints": {"allow": ["POST"]}}

    verified, _, err = org.sdk("verify_event_hook", hook.id)
    assert err is None and verified.verification_status.value == "VERIFIED"
    hooks, _, err = org.sdk("list_event_hooks")
    assert err is None and [h.id for h in hooks] == [hook.id]

    moved = _hook(name="Moved")
    moved["channel"]["config"]["uri"] = "https://hooks.acme.test/v2"
    replaced, _, err = org.sdk("replace_event_hook", hook.id, EventHook.from_dict(moved))
    assert err is None and replaced.name == "Moved" and replaced.verification_status.value == "UNVERIFIED"

    refused = org.raw("DELETE", f"/api/v1/eventHooks/{hook.id}")
    assert refused.status_code == 400 and refused.json()["errorCode"] == "E0000001"
    inactive, _, err = org.sdk("deactivate_event_hook", hook.id)
    assert err is None and inactive.status == "INACTIVE"
    _, resp, err = org.sdk("delete_event_hook", hook.id)
    assert err is None and resp.status_code == 204
    gone = org.raw("GET", f"/api/v1/eventHooks/{hook.id}")
    assert gone.status_code == 404 and gone.json()["errorSummary"] == \
        f"Not found: Resource not found: {hook.id} (EventHook)"
    logged = [e["eventType"] for e in org.raw("GET", "/api/v1/logs").json()]
    assert logged == ["event_hook.created", "event_hook.verified", "event_hook.updated", "event_hook.deactivated",
                      "event_hook.deleted"]


def test_bad_hooks__okta_validation_errors(org: Org) -> None:
    plain = _hook()
    plain["channel"]["config"]["uri"] = "http://hooks.acme.test/okta"
    broken = _hook()
    broken["channel"]["config"]["uri"] = "https://[::1"
    cases = [
        (plain, "Api validation failed: channel.config.uri"),
        (broken, "Api validation failed: channel.config.uri"),
        (_hook(events={"type": "EVENT_TYPE", "items": []}), "Api validation failed: events.items"),
        (_hook(name=""), "Api validation failed: name"),
        ({k: v for k, v in HOOK.items() if k != "channel"}, "Api validation failed: channel"),
    ]
    for body, summary in cases:
        answer = org.raw("POST", "/api/v1/eventHooks", json=body)
        assert answer.status_code == 400 and answer.json()["errorCode"] == "E0000001", body
        assert answer.json()["errorSummary"] == summary
    assert org.raw("GET", "/api/v1/eventHooks").json() == []


def _as_world(env: Any, method: str, path: str) -> None:
    replica = env.tools["okta"]
    answer = env.dispatch("okta", ToolRequest(method, path, "", {"authorization": f"SSWS {replica.world_token}"},
                                              b""))
    assert answer.status < 300, answer.body


def _okta_events(env: Any) -> list[dict[str, Any]]:
    return [e for e in env.feed.events if e["service"] == "okta"]


def test_active_verified_hook__gets_each_subscribed_event_in_okta_delivery_shape() -> None:
    env = build_env()
    hook = json.loads(world_call(env, "POST", "/api/v1/eventHooks", HOOK).body)
    _as_world(env, "POST", "/api/v1/users/dana@acme.com/lifecycle/deactivate")
    assert _okta_events(env) == []  # not verified yet: Okta sends nothing
    world_call(env, "POST", f"/api/v1/eventHooks/{hook['id']}/lifecycle/verify")
    _as_world(env, "POST", "/api/v1/users/fox@acme.com/lifecycle/deactivate")
    _as_world(env, "POST", "/api/v1/users/walter@acme.com/lifecycle/unlock")  # not subscribed
    [event] = _okta_events(env)
    assert event["type"] == "user.lifecycle.deactivate" and event["hook"] == hook["id"]
    body = event["payload"]
    assert set(body) == {"eventType", "eventTypeVersion", "cloudEventsVersion", "source", "eventId", "data",
                         "eventTime", "contentType"}
    assert body["eventType"] == "com.okta.event_hook" and body["eventTypeVersion"] == "1.0"
    assert body["cloudEventsVersion"] == "0.1" and body["contentType"] == "application/json"
    assert body["source"].endswith(f"/api/v1/eventHooks/{hook['id']}")
    [logged] = body["data"]["events"]
    assert logged["eventType"] == "user.lifecycle.deactivate" and logged["target"][0]["alternateId"] == "fox@acme.com"
    assert logged == json.loads(world_call(env, "GET", "/api/v1/logs",
                                           query='filter=eventType%20eq%20%22user.lifecycle.deactivate%22').body)[-1]
    assert body["eventTime"] == logged["published"]

    headers = WEBHOOK.headers(env.tools["okta"], event, b"{}", Attempt("d1"))
    assert headers["Authorization"] == "my-shared-secret" and headers["X-Other-Header"] == "my-header-value"
    assert headers["Content-Type"] == "application/json"
    assert WEBHOOK.timeout_s == 3.0 and WEBHOOK.retried(500) and not WEBHOOK.retried(400)


def test_agent_own_changes_and_inactive_hooks__not_delivered() -> None:
    env = build_env()
    hook = json.loads(world_call(env, "POST", "/api/v1/eventHooks", HOOK).body)
    world_call(env, "POST", f"/api/v1/eventHooks/{hook['id']}/lifecycle/verify")
    world_call(env, "POST", "/api/v1/users/dana@acme.com/lifecycle/deactivate")
    assert _okta_events(env) == []  # the agent's own change: in the System Log, not sent back
    world_call(env, "POST", f"/api/v1/eventHooks/{hook['id']}/lifecycle/deactivate")
    _as_world(env, "POST", "/api/v1/users/fox@acme.com/lifecycle/deactivate")
    assert _okta_events(env) == []
    world_call(env, "POST", f"/api/v1/eventHooks/{hook['id']}/lifecycle/activate")
    _as_world(env, "POST", "/api/v1/users/walter@acme.com/lifecycle/deactivate")
    assert [e["payload"]["data"]["events"][0]["target"][0]["alternateId"] for e in _okta_events(env)] == [
        "walter@acme.com"]


def test_endpoint_agent__gets_the_hook_call_posted_with_its_auth_header() -> None:
    """An endpoint agent's server receives the call as Okta POSTs it: the same body, JSON, and
    the hook's extra and auth headers; a 500 is retried once."""
    import asyncio
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from ancha.world.endpoint import EndpointDelivery

    received: list[tuple[dict[str, str], dict[str, Any]]] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers["Content-Length"]))
            received.append((dict(self.headers), json.loads(raw)))
            self.send_response(500 if len(received) == 1 else 200)
            self.send_header("Content-Length", "0")
            self.end_headers()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    env = build_env()
    hook = json.loads(world_call(env, "POST", "/api/v1/eventHooks", HOOK).body)
    world_call(env, "POST", f"/api/v1/eventHooks/{hook['id']}/lifecycle/verify")

    async def deliver() -> None:
        endpoint = EndpointDelivery(env, f"http://127.0.0.1:{server.server_address[1]}/{{{{service}}}}")
        await endpoint.start(5.0)
        _as_world(env, "POST", "/api/v1/users/fox@acme.com/lifecycle/deactivate")
        endpoint.wake()
        deadline = asyncio.get_running_loop().time() + 10
        while len(received) < 2 and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.01)
        endpoint.stop()

    try:
        asyncio.run(deliver())
    finally:
        server.shutdown()
    assert len(received) == 2  # the 500, then Okta's one retry
    headers, body = received[1]
    assert headers["Authorization"] == "my-shared-secret" and headers["X-Other-Header"] == "my-header-value"
    assert headers["Content-Type"] == "application/json"
    assert body == _okta_events(env)[0]["payload"] and body["eventType"] == "com.okta.event_hook"


def test_snapshot_and_judge_view__show_hooks_without_their_secret() -> None:
    from ancha.world.tools.okta.judge import judge_view

    env = build_env()
    world_call(env, "POST", "/api/v1/eventHooks", HOOK)
    snapshot = env.tools["okta"].snapshot()
    [hook] = snapshot["event_hooks"]
    assert hook["name"] == "Offboarding feed" and "my-shared-secret" not in json.dumps(snapshot)
    assert ("Okta event hook 'Offboarding feed': ACTIVE, UNVERIFIED; events: user.lifecycle.deactivate, "
            "group.user_membership.add") in judge_view(snapshot)
