"""What happens to incidents: triggering, paging through the escalation policy on the
simulated clock, acknowledging, resolving, reassigning, notes, merges and snoozes.

Every route, the Events API, world rules and people change incidents through
``IncidentDesk``, so each change writes PagerDuty's log entries and publishes the same
domain event (``events.py``) whoever made it.

Escalation: a triggered incident is assigned to the users its policy's current rule
pages (schedules resolve to whoever is on call at that moment), each of them notified
(``notify_log_entry``, ``notification_sent``). If nobody acknowledges or resolves it
within the rule's delay, it escalates to the next rule (``escalate_log_entry``,
``incident_escalated``); after the last rule it starts over ``num_loops`` times, then
stays with the last rule's users. Acknowledging or resolving cancels the pending step;
reassigning, escalating by hand or a snooze ending starts it afresh.

Timeouts, as the service sets them: an incident still acknowledged ``acknowledgement_timeout``
after its latest acknowledgement is triggered again (``unacknowledge_log_entry``, channel
``timeout``) and pages its current level afresh; an incident still open
``auto_resolve_timeout`` after it was triggered is resolved (``resolve_log_entry``, channel
``timeout``). A service in an ongoing maintenance window pages nobody: its incidents are
assigned but nobody is notified and nothing escalates.

A seeded incident that is open at clock.start goes live then (``wake``): a triggered one
notifies its assignees and escalates from there, and both kinds get their timeouts,
counted from clock.start.
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any

from ancha.world.kernel.bus import DomainEvent
from ancha.world.tools.pagerduty.models import (
    Alert,
    EscalationPolicy,
    Incident,
    LogEntry,
    Note,
    Service,
    User,
)

if TYPE_CHECKING:
    from ancha.world.kernel.port import WorldPort
    from ancha.world.tools.pagerduty.models import PagerDutyState

TOOL = "pagerduty"


class IncidentDesk:
    def __init__(self, world: WorldPort, state: PagerDutyState, base: Any) -> None:
        self.world = world
        self.state = state
        self._base = base
        self.fault: str | None = None
        """The fault whose effect is triggering an incident right now (``actions.trigger_effect``)."""
        """Callable answering the replica's current base URL (for log-entry agent references)."""

    # --- ids and time -------------------------------------------------------------------

    def new_id(self, prefix: str = "P", length: int = 7) -> str:
        """A PagerDuty-style id (``PXPGF42``) from the trial's RNG: upper-case letters and digits."""
        size = length - len(prefix)
        raw = self.world.rng.getrandbits(5 * size + 8).to_bytes((5 * size + 15) // 8, "big")
        return prefix + base64.b32encode(raw).decode()[:size]

    def now(self) -> float:
        return self.world.clock.now()

    @property
    def base(self) -> str:
        return str(self._base())

    @staticmethod
    def agent_ref(by: User | None, incident: Incident) -> User | Service:
        """Who a change is by, on the wire: the user, or the incident's service (its integration)."""
        return by if by is not None else incident.service

    # --- log entries and events ---------------------------------------------------------

    def log(self, incident: Incident, kind: str, summary: str, by: User | None, channel: str = "api",
            at: float | None = None, **extra: Any) -> LogEntry:
        entry = LogEntry(self.new_id("R", 14), kind, incident, self.now() if at is None else at,
                         self.agent_ref(by, incident), {"type": channel}, summary, extra)
        self.state.add_log_entry(entry)
        return entry

    def publish(self, type: str, incident: Incident, actor: str, by: User | None, **data: Any) -> None:
        incident.updated_at = self.now()
        self.state.changed()
        self.world.bus.publish(DomainEvent(type, TOOL, incident.updated_at, {
            "incident": incident.id, "service": incident.service.id, "actor": actor,
            "user": by.id if by is not None else None, "status": incident.status, **data}))

    # --- triggering ---------------------------------------------------------------------

    def trigger(self, service: Service, title: str, *, by: User | None, actor: str, urgency: str = "high",
                incident_key: str | None = None, details: Any = None, policy: EscalationPolicy | None = None,
                assignees: list[User] | None = None, priority: Any = None, fault: str | None = None,
                alert: dict[str, Any] | None = None, channel: str = "api") -> Incident:
        """A new triggered incident on ``service``, paged through its policy (or assigned to
        ``assignees`` directly)."""
        now = self.now()
        fault = fault or self.fault
        incident = Incident(self.new_id(), self.state.next_number, title, service, policy or service.policy, now,
                            incident_key or self.world.random_hex(32), urgency=urgency, actor=actor, fault=fault,
                            priority=priority, details=details, updated_at=now, last_status_change_at=now,
                            last_status_change_by=by if by is not None else service)
        if alert is not None:
            incident.alerts.append(Alert(self.new_id("Q", 14), incident, now, alert.get("summary") or title,
                                         incident.incident_key, alert.get("severity") or "critical",
                                         details=alert.get("details") or {}, source=alert.get("source")))
        self.state.add_incident(incident)
        how = "through the API" if channel == "api" else "through the website"
        self.log(incident, "trigger_log_entry", f"Triggered {how}.", by, channel, at=now)
        self.publish("incident_triggered", incident, actor, by, fault=fault)
        self._arm_auto_resolve(incident)
        if assignees:
            incident.assigned_via = "direct_assignment"
            self._assign(incident, assignees, by, actor, reassigned=False)
            self._arm(incident)
        else:
            self._page(incident, 1, by, actor, escalated=False)
        return incident

    def _page(self, incident: Incident, level: int, by: User | None, actor: str, escalated: bool) -> None:
        """Assign the incident to rule ``level``'s users, notify them, and arm the next step."""
        incident.escalation_level = level
        incident.assigned_via = "escalation_policy"
        users = incident.policy.users_at(level, self.now())
        if escalated:
            names = ", ".join(u.name for u in users) or "nobody"
            self.log(incident, "escalate_log_entry", f"Escalated to {names} (level {level}).", by, "auto"
                     if by is None else "api", assigned_user=list(users))
        self._assign(incident, users, by, actor, reassigned=False, log=not escalated)
        if escalated:
            self.publish("incident_escalated", incident, actor, by, level=level,
                         assignees=[u.id for u in users])
        self._arm(incident)

    def _assign(self, incident: Incident, users: list[User], by: User | None, actor: str, reassigned: bool,
                log: bool = True) -> None:
        now = self.now()
        incident.assignments = [(u, now) for u in users]
        if log and users:
            self.log(incident, "assign_log_entry", "Assigned to " + ", ".join(u.name for u in users) + ".", by,
                     "api" if by is not None else "auto", assignees=list(users))
        if reassigned:
            self.publish("incident_reassigned", incident, actor, by, assignees=[u.id for u in users])
        self._notify(incident, users, by, actor)

    def _notify(self, incident: Incident, users: list[User], by: User | None, actor: str) -> None:
        """Page ``users`` (nobody while the service is in maintenance)."""
        if self.state.in_maintenance(incident.service, self.now()):
            return
        for user in users:
            self.log(incident, "notify_log_entry", f"Notified {user.name} by email.", None, "auto",
                     user=user,
                     notification={"type": "email_notification", "status": "success", "address": user.email})
            self.publish("notification_sent", incident, actor, by, notified=user.id,
                         level=incident.escalation_level)

    def _arm(self, incident: Incident) -> None:
        """Schedule the next escalation step of a triggered incident (replacing a pending one)."""
        self.disarm(incident)
        rules = incident.policy.rules
        if incident.status != "triggered" or not rules or self.state.in_maintenance(incident.service, self.now()):
            return
        level = incident.escalation_level
        last = level >= len(rules)
        if last and incident.loops >= incident.policy.num_loops:
            return
        delay = rules[(level - 1) % len(rules)].delay
        incident.due = self.world.schedule(self.now() + delay, lambda: self._escalate_due(incident),
                                         f"pagerduty: escalate incident #{incident.number}")

    def disarm(self, incident: Incident) -> None:
        if incident.due is not None:
            self.world.cancel(incident.due)
            incident.due = None

    def _cancel_timeout(self, incident: Incident) -> None:
        if incident.timeout is not None:
            self.world.cancel(incident.timeout)
            incident.timeout = None

    def _arm_timeout(self, incident: Incident) -> None:
        """The acknowledgement timeout of an acknowledged incident (replacing a pending one)."""
        self._cancel_timeout(incident)
        seconds = incident.service.acknowledgement_timeout
        if seconds and incident.status == "acknowledged":
            incident.timeout = self.world.schedule(self.now() + seconds, lambda: self._timed_out(incident),
                                                   f"pagerduty: acknowledgement of incident #{incident.number} "
                                                   "times out")

    def _timed_out(self, incident: Incident) -> None:
        incident.timeout = None
        if incident.status != "acknowledged":
            return
        self.disarm(incident)  # (a snooze's end)
        self._status(incident, "triggered", None, self.now())
        self.log(incident, "unacknowledge_log_entry", "Unacknowledged due to timeout.", None, "timeout")
        self.publish("incident_unacknowledged", incident, "world", None)
        self._page(incident, incident.escalation_level, None, "world", escalated=False)

    def _arm_auto_resolve(self, incident: Incident) -> None:
        seconds = incident.service.auto_resolve_timeout
        if seconds and incident.status != "resolved" and incident.auto_resolve is None:
            incident.auto_resolve = self.world.schedule(self.now() + seconds, lambda: self._auto_resolved(incident),
                                                        f"pagerduty: incident #{incident.number} auto-resolves")

    def _auto_resolved(self, incident: Incident) -> None:
        incident.auto_resolve = None
        if incident.status != "resolved":
            self.resolve(incident, None, "world", channel="timeout", summary="Resolved due to timeout.")

    def wake(self, incident: Incident) -> None:
        """A seeded open incident at clock.start: a triggered one pages its assignees and
        escalates from now; both get their timeouts from now."""
        if incident.status == "triggered":
            self._notify(incident, incident.assignees, None, "world")
            self._arm(incident)
        elif incident.status == "acknowledged":
            self._arm_timeout(incident)
        self._arm_auto_resolve(incident)

    def _escalate_due(self, incident: Incident) -> None:
        incident.due = None
        if incident.status != "triggered":
            return
        level = incident.escalation_level + 1
        if level > len(incident.policy.rules):
            incident.loops += 1
            level = 1
        self._page(incident, level, None, "world", escalated=True)

    # --- changes ------------------------------------------------------------------------

    def acknowledge(self, incident: Incident, by: User | None, actor: str, channel: str = "api") -> None:
        now = self.now()
        self.disarm(incident)
        incident.acknowledgements.append((by, now))
        first = incident.first_acknowledged_at is None and incident.status == "triggered"
        if first:
            incident.first_acknowledged_at = now
        self._status(incident, "acknowledged", by, now)
        self._arm_timeout(incident)
        who = by.name if by is not None else "the API"
        timeout = incident.service.acknowledgement_timeout
        self.log(incident, "acknowledge_log_entry", f"Acknowledged by {who}.", by, channel,
                 acknowledgement_timeout=int(timeout) if timeout else None)
        self.publish("incident_acknowledged", incident, actor, by)

    def resolve(self, incident: Incident, by: User | None, actor: str, channel: str = "api",
                reason: dict[str, Any] | None = None, summary: str | None = None) -> None:
        now = self.now()
        self.disarm(incident)
        self._cancel_timeout(incident)
        if incident.auto_resolve is not None:
            self.world.cancel(incident.auto_resolve)
            incident.auto_resolve = None
        if incident.first_resolved_at is None:
            incident.first_resolved_at = now
        incident.resolved_at = now
        incident.resolve_reason = reason
        for alert in incident.alerts:
            alert.status = "resolved"
        self._status(incident, "resolved", by, now)
        who = by.name if by is not None else "the API"
        self.log(incident, "resolve_log_entry", summary or f"Resolved by {who}.", by, channel)
        self.publish("incident_resolved", incident, actor, by)

    def _status(self, incident: Incident, status: str, by: User | None, at: float) -> None:
        if status != "acknowledged":
            self._cancel_timeout(incident)
        self.state.set_status(incident, status)
        incident.last_status_change_at = at
        incident.last_status_change_by = self.agent_ref(by, incident)

    def reassign(self, incident: Incident, users: list[User], by: User | None, actor: str) -> None:
        """Assign to ``users`` directly: the incident is triggered again and pages them."""
        now = self.now()
        if incident.status == "acknowledged":
            self._status(incident, "triggered", by, now)
        incident.assigned_via = "direct_assignment"
        self._assign(incident, users, by, actor, reassigned=True)
        self._arm(incident)

    def reassign_policy(self, incident: Incident, policy: EscalationPolicy, by: User | None, actor: str) -> None:
        now = self.now()
        if incident.status == "acknowledged":
            self._status(incident, "triggered", by, now)
        incident.policy = policy
        incident.loops = 0
        incident.escalation_level = 1
        users = policy.users_at(1, now)
        self._assign(incident, users, by, actor, reassigned=True)
        incident.assigned_via = "escalation_policy"
        self._arm(incident)

    def escalate(self, incident: Incident, level: int, by: User | None, actor: str) -> None:
        """Escalate by hand to rule ``level`` (1-based)."""
        if incident.status == "acknowledged":
            self._status(incident, "triggered", by, self.now())
        self._page(incident, level, by, actor, escalated=True)

    def annotate(self, incident: Incident, content: str, by: User | None, actor: str) -> Note:
        note = Note(self.new_id("P", 14), content, by, self.now(), actor=actor)
        incident.notes.append(note)
        self.log(incident, "annotate_log_entry", "Note added", by, "note")
        self.publish("incident_annotated", incident, actor, by, note=note.id, content=content)
        return note

    def update(self, incident: Incident, by: User | None, actor: str, **changes: Any) -> None:
        """Title, urgency or priority changed."""
        for name, value in changes.items():
            setattr(incident, name, value)
        self.publish("incident_updated", incident, actor, by, changed=sorted(changes))
        if "priority" in changes:
            self.publish("incident_priority_updated", incident, actor, by)

    def merge(self, target: Incident, sources: list[Incident], by: User | None, actor: str) -> None:
        for source in sources:
            for alert in source.alerts:
                alert.incident = target
                target.alerts.append(alert)
            source.alerts = []
            self.log(target, "merge_log_entry", f"Merged #{source.number} into this incident.", by)
            if source.status != "resolved":
                self.resolve(source, by, actor, reason={"type": "merge_resolve_reason",
                                                        "incident": target})
        self.publish("incident_merged", target, actor, by, sources=[s.id for s in sources])

    def snooze(self, incident: Incident, seconds: float, by: User | None, actor: str) -> None:
        """Acknowledged until ``seconds`` from now, then triggered again (and paged afresh)."""
        if incident.status == "triggered":
            self.acknowledge(incident, by, actor)
        self.disarm(incident)
        self._cancel_timeout(incident)  # the snooze's end takes the acknowledgement timeout's place
        until = self.now() + seconds
        self.log(incident, "snooze_log_entry", f"Snoozed for {int(seconds // 60)} minutes.", by,
                 changed_actions=[{"type": "unacknowledge", "at": until}])
        incident.due = self.world.schedule(until, lambda: self._unsnooze(incident),
                                         f"pagerduty: snooze of incident #{incident.number} ends")
        self.publish("incident_snoozed", incident, actor, by, until=until)

    def _unsnooze(self, incident: Incident) -> None:
        incident.due = None
        if incident.status != "acknowledged":
            return
        self._status(incident, "triggered", None, self.now())
        self.log(incident, "unacknowledge_log_entry", "Unacknowledged after the snooze ended.", None, "timeout")
        self.publish("incident_unacknowledged", incident, "world", None)
        self._page(incident, incident.escalation_level, None, "world", escalated=False)
