"""World-rule actions and the fault effect on PagerDuty, made through the REST API with the
world's own token (traced with actor ``world``), so they write log entries, page people,
publish domain events and send webhooks as anyone's calls would:

- ``pagerduty.trigger``: ``POST /incidents`` on the service (paged through its policy); as a
  fault effect it triggers one incident when the fault starts, tagged with the fault, and
  nothing ends with the fault (the incident stays until someone resolves it);
- ``pagerduty.acknowledge`` / ``pagerduty.resolve``: ``PUT /incidents/{id}`` with the status,
  ``From`` the ``as`` user's e-mail when given.

Each answers what went wrong (``pagerduty.resolve: 400 Incident Already Resolved``) or None.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ancha.world.kernel.tool import ToolRequest
from ancha.world.tools.pagerduty.action_bodies import IncidentAction, Trigger

if TYPE_CHECKING:
    from ancha.world.kernel.port import WorldPort
    from ancha.world.tools.pagerduty.replica import PagerDutyReplica

TOOL = "pagerduty"


def _id(world: WorldPort, ref: str) -> str:
    record = world.refs.get(ref.removeprefix("$").rpartition(".")[2])
    return record.id if record is not None else ref


def call(replica: PagerDutyReplica, world: WorldPort, method: str, path: str, body: Any, as_user: str | None = None,
         token: str | None = None) -> tuple[int, Any]:
    """``method path`` as the world (or with ``token``), ``From`` the user ``as_user`` names."""
    headers = {"authorization": f"Token token={token or replica.world_token}",
               "accept": "application/vnd.pagerduty+json;version=2",
               "content-type": "application/json"}
    if as_user is not None:
        user = replica.state.users.get(as_user)
        if user is not None:
            headers["from"] = user.email
    answer = world.dispatch(TOOL, ToolRequest(method, path, headers=headers, body=json.dumps(body).encode()))
    try:
        decoded = json.loads(answer.body) if answer.body else None
    except ValueError:
        decoded = None
    return answer.status, decoded


def error_text(status: int, answer: Any) -> str:
    error = answer.get("error") if isinstance(answer, dict) else None
    if not isinstance(error, dict):
        return str(status)
    details = error.get("errors") or []
    message = details[0] if details else error.get("message")
    return f"{status} {message}"


def trigger_incident(replica: PagerDutyReplica, world: WorldPort, spec: Trigger,
                     fault: str | None = None) -> tuple[str | None, str | None]:
    """(the new incident's id, what went wrong)."""
    payload: dict[str, Any] = {"type": "incident", "title": spec.title, "urgency": spec.urgency,
                               "service": {"id": _id(world, spec.service), "type": "service_reference"}}
    if spec.details is not None:
        payload["body"] = {"type": "incident_body", "details": spec.details}
    desk = replica.desk
    desk.fault = fault
    try:
        status, answer = call(replica, world, "POST", "/incidents", {"incident": payload})
    finally:
        desk.fault = None
    if status != 201:
        return None, f"pagerduty.trigger: {error_text(status, answer)}"
    return str(answer["incident"]["id"]), None


def trigger(body: dict[str, Any], replica: PagerDutyReplica, world: WorldPort) -> str | None:
    return trigger_incident(replica, world, Trigger.model_validate(body))[1]


def trigger_effect(body: dict[str, Any], replica: PagerDutyReplica, world: WorldPort, fault: str) -> None:
    """The fault effect: one incident when the fault starts; it outlives the fault."""
    _, problem = trigger_incident(replica, world, Trigger.model_validate(body), fault=fault.removeprefix("$"))
    if problem is not None:
        world.record("engine_error", label=f"fault {fault}", error=problem)


def _target(replica: PagerDutyReplica, world: WorldPort, spec: IncidentAction) -> str | None:
    if spec.incident is not None:
        return _id(world, spec.incident)
    service = _id(world, str(spec.service))
    for incident in reversed(replica.state.created):
        if incident.service.id == service and incident.status != "resolved":
            return incident.id
    return None


def _set_status(body: dict[str, Any], replica: PagerDutyReplica, world: WorldPort, status: str,
                key: str) -> str | None:
    spec = IncidentAction.model_validate(body)
    incident = _target(replica, world, spec)
    if incident is None:
        return f"{key}: ${spec.service} has no open incident"
    result, answer = call(replica, world, "PUT", f"/incidents/{incident}",
                          {"incident": {"type": "incident_reference", "status": status}},
                          as_user=_id(world, spec.as_) if spec.as_ else None)
    return None if result == 200 else f"{key}: {error_text(result, answer)}"


def acknowledge(body: dict[str, Any], replica: PagerDutyReplica, world: WorldPort) -> str | None:
    return _set_status(body, replica, world, "acknowledged", "pagerduty.acknowledge")


def resolve(body: dict[str, Any], replica: PagerDutyReplica, world: WorldPort) -> str | None:
    return _set_status(body, replica, world, "resolved", "pagerduty.resolve")
