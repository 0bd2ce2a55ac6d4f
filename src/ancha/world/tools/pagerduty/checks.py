"""Grading ``pagerduty.incident`` on the replica's state (also its predicate form).

``acknowledged_within`` / ``resolved_within`` count from the incident's creation to the
first acknowledgment / resolution made during the trial, by anyone (seeded statuses
are not "real": a seeded resolved incident has no resolution time).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ancha.durations import format_duration
from ancha.world.kernel.tool import StateOutcome
from ancha.world.tools.pagerduty.check_bodies import IncidentCheck
from ancha.world.tools.pagerduty.events import STATE_EVENTS

if TYPE_CHECKING:
    from ancha.world.kernel.port import WorldPort
    from ancha.world.tools.pagerduty.models import Incident
    from ancha.world.tools.pagerduty.replica import PagerDutyReplica

INCIDENT_EVENTS = STATE_EVENTS


def _expected(spec: IncidentCheck) -> str:
    which = f"incident ${spec.ref}" if spec.ref else f"the first incident of ${spec.service}"
    parts = []
    if spec.status:
        parts.append(f"{spec.status}")
    if spec.assigned_to is not None:
        parts.append("assigned to exactly " + (", ".join(f"${u}" for u in spec.assigned_to) or "nobody"))
    if spec.acknowledged_within is not None:
        parts.append(f"acknowledged within {format_duration(spec.acknowledged_within)}")
    if spec.resolved_within is not None:
        parts.append(f"resolved within {format_duration(spec.resolved_within)}")
    return f"{which} {', '.join(parts)}"


WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def _outcome(passed: bool, expected: str, actual: str, evidence: list[int] | None = None) -> StateOutcome:
    explanation = (f"Passed: expected {expected}, and found {actual}." if passed
                   else f"Failed: expected {expected}; actually {actual}.")
    return StateOutcome(passed, expected, actual, explanation, evidence or [])


def incident_calls(world: WorldPort, incident: Incident) -> list[int]:
    """The calls that made the incident what it is: the one that created it and every one
    that changed it since (acknowledged, reassigned, resolved, merged), by the agent, a
    person or a world rule: REST calls name its id in their path, body or answer; Events
    API calls name its dedup key."""
    needles = [incident.id.encode()]
    if incident.incident_key:
        needles.append(incident.incident_key.encode())
    return [e.seq for e in world.trace
            if e.tool == "pagerduty" and e.worked and e.method in WRITES
            and (incident.id in e.path or any(n in e.request or n in e.response for n in needles))]


def select(replica: PagerDutyReplica | None, world: WorldPort, spec: IncidentCheck) -> Incident | None:
    """The incident a check names (LookupError when its ref names nothing here)."""
    if replica is None:  # the core hands no replica when the world has no PagerDuty
        raise LookupError("the world has no PagerDuty")
    if spec.ref is not None:
        return replica.state.incidents.get(world.ref_id(spec.ref, "incident"))
    service = world.ref_id(str(spec.service), "service")
    return next((i for i in replica.state.created if i.service.id == service), None)


def evaluate(body: dict[str, Any], replica: PagerDutyReplica | None, world: WorldPort) -> StateOutcome:
    spec = IncidentCheck.model_validate(body)
    expected = _expected(spec)
    try:
        incident = select(replica, world, spec)
    except LookupError as exc:
        return _outcome(False, expected, str(exc))
    if incident is None:
        return _outcome(False, expected, f"${spec.service} has no incident" if spec.service
                        else f"${spec.ref} no longer exists")
    label = f"#{incident.number} {incident.title!r}"
    found: list[str] = []
    misses: list[str] = []
    if spec.status is not None:
        (found if incident.status == spec.status else misses).append(f"it is {incident.status}")
    if spec.assigned_to is not None:
        wanted = {world.refs[u].id for u in spec.assigned_to if u in world.refs}
        have = {u.id for u in incident.assignees}
        names = ", ".join(f"${u.ref}" if u.ref else u.name for u in incident.assignees) or "nobody"
        (found if have == wanted and len(wanted) == len(spec.assigned_to) else misses).append(
            f"it is assigned to {names}")
    for name, at, verb in (("acknowledged_within", incident.first_acknowledged_at, "acknowledged"),
                           ("resolved_within", incident.first_resolved_at, "resolved")):
        limit = getattr(spec, name)
        if limit is None:
            continue
        if at is None:
            misses.append(f"it was never {verb} during the trial")
            continue
        took = at - incident.created_at
        (found if took <= limit else misses).append(f"it was {verb} {format_duration(max(took, 0.0))} "
                                                     "after it was created")
    evidence = incident_calls(world, incident)
    if misses:
        return _outcome(False, expected, f"incident {label}: " + "; ".join(misses), evidence)
    return _outcome(True, expected, f"incident {label}: " + "; ".join(found), evidence)
