"""Events API v2: ``POST /v2/enqueue`` (alert events) and ``POST /v2/change/enqueue``.

An event names its service by ``routing_key`` (the service's integration key). A trigger
whose ``dedup_key`` matches an open incident of the service is de-duplicated into it;
otherwise it opens an incident (its ``incident_key`` is the dedup key) paged through
the service's policy. Acknowledge and resolve act on the open incident with that key,
and are accepted (202) even when none matches, as PagerDuty does. The integration is
the agent of what it does (log entries name the service). Requests carry no user token;
one of the replica's own tokens, when present, only says who to trace (``world``).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ancha.world.kernel import bounded_json
from ancha.world.kernel.tool import ToolRequest, ToolResponse
from ancha.world.tools.pagerduty.errors import InvalidEvent

if TYPE_CHECKING:
    from ancha.world.tools.pagerduty.replica import PagerDutyReplica

JSON = "application/json"
SEVERITIES = ("critical", "error", "warning", "info")
ACTIONS = ("trigger", "acknowledge", "resolve")


def _answer(status: int, body: dict[str, Any], actor: str) -> ToolResponse:
    return ToolResponse(status, json.dumps(body, separators=(",", ":")).encode(), JSON, actor=actor)


def enqueue(replica: PagerDutyReplica, method: str, path: str, request: ToolRequest) -> ToolResponse:
    actor = replica.actor_of_token(request)
    if method != "POST":
        return _answer(404, {"status": "invalid request", "message": "Not Found", "errors": []}, actor)
    try:
        try:
            event = bounded_json.loads(request.body or b"null")
        except (ValueError, UnicodeDecodeError):
            raise InvalidEvent("Event object is not valid JSON") from None
        if not isinstance(event, dict):
            raise InvalidEvent("Event object must be a JSON object")
        if path == "/v2/change/enqueue":
            return _change(replica, event, actor)
        dedup = _alert_event(replica, event, actor)
    except InvalidEvent as exc:
        return _answer(400, exc.body(), actor)
    return _answer(202, {"status": "success", "message": "Event processed", "dedup_key": dedup}, actor)


def _text(payload: dict[str, Any], name: str, limit: int) -> str:
    value = payload.get(name)
    if not isinstance(value, str) or not value.strip():
        raise InvalidEvent(f"'payload.{name}' is missing or blank")
    if len(value) > limit:
        raise InvalidEvent(f"'payload.{name}' is too long (maximum is {limit} characters)")
    return value


def _alert_event(replica: PagerDutyReplica, event: dict[str, Any], actor: str) -> str:
    key = event.get("routing_key")
    if not isinstance(key, str) or not key.strip():
        raise InvalidEvent("'routing_key' is missing or blank")
    action = event.get("event_action")
    if action not in ACTIONS:
        raise InvalidEvent("'event_action' must be one of trigger, acknowledge or resolve")
    dedup = event.get("dedup_key")
    if dedup is not None and (not isinstance(dedup, str) or len(dedup) > 255):
        raise InvalidEvent("'dedup_key' must be a string of at most 255 characters")
    if action != "trigger" and not dedup:
        raise InvalidEvent("'dedup_key' is missing or blank")
    payload = event.get("payload")
    if action == "trigger":
        if not isinstance(payload, dict):
            raise InvalidEvent("'payload' is missing or blank")
        summary = _text(payload, "summary", 1024)
        source = _text(payload, "source", 255)
        severity = payload.get("severity")
        if severity not in SEVERITIES:
            raise InvalidEvent("'payload.severity' must be one of critical, error, warning or info")
        details = payload.get("custom_details")
    service = replica.state.services_by_key.get(key.strip())
    if service is None:
        raise InvalidEvent("Invalid routing key")
    desk = replica.desk
    incident = replica.state.open_by_key.get((service.id, dedup)) if dedup else None
    if action == "trigger":
        if incident is not None:
            desk.log(incident, "trigger_log_entry", "Triggered through the API (de-duplicated).", None)
            desk.state.changed()
            return incident.incident_key
        if replica.state.in_maintenance(service, desk.now()):
            return dedup or replica.world.random_hex(32)  # accepted; a service in maintenance makes no incident
        incident = desk.trigger(service, summary, by=None, actor=actor, incident_key=dedup or None,
                                details=details, alert={"summary": summary, "severity": severity,
                                                        "details": details if isinstance(details, dict) else {},
                                                        "source": source})
        return incident.incident_key
    assert dedup is not None
    if incident is not None:
        if action == "acknowledge" and incident.status == "triggered":
            desk.acknowledge(incident, None, actor)
        elif action == "resolve":
            desk.resolve(incident, None, actor)
    return dedup


def _change(replica: PagerDutyReplica, event: dict[str, Any], actor: str) -> ToolResponse:
    key = event.get("routing_key")
    if not isinstance(key, str) or not key.strip():
        raise InvalidEvent("'routing_key' is missing or blank")
    payload = event.get("payload")
    if not isinstance(payload, dict):
        raise InvalidEvent("'payload' is missing or blank")
    _text(payload, "summary", 1024)
    if replica.state.services_by_key.get(key.strip()) is None:
        raise InvalidEvent("Invalid routing key")
    return _answer(202, {"status": "success", "message": "Change event processed"}, actor)
