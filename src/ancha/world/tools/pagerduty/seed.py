"""Build an account from a scene's ``world.pagerduty``: ids, rotations, policies, history.

Ids come from the trial's RNG, so the same scene and trial give the same account. The
services' integration keys do not: they are credentials, random per environment, so that
one trial's key opens nothing in another's world.
Seeded incidents without ``at`` are spaced an hour apart before clock.start; their
assignees default to whoever the service's policy pages first at that time. Seeded
incidents open at clock.start go live then (``IncidentDesk.wake``): a triggered one
notifies its assignees and escalates like any other, and the service's timeouts run from
clock.start. Their ``first_acknowledged_at`` / ``first_resolved_at`` stay unset until
someone acts during the trial.
"""

from __future__ import annotations

from ancha.world.kernel.port import WorldPort
from ancha.world.tools.pagerduty.lifecycle import IncidentDesk
from ancha.world.tools.pagerduty.models import (
    COLORS,
    EscalationPolicy,
    Incident,
    Layer,
    LogEntry,
    Note,
    PagerDutyState,
    Priority,
    Rule,
    Schedule,
    Service,
    User,
)
from ancha.world.tools.pagerduty.scene_file import NoteFile, PagerDutyFile

SPACING_S = 3600
PRIORITIES = (("P1", "Critical: whole service down"), ("P2", "High: a major feature is broken"),
              ("P3", "Moderate: degraded"), ("P4", "Low: minor impact"), ("P5", "Informational"))


def seed_state(world: WorldPort, seed: PagerDutyFile, desk: IncidentDesk) -> tuple[PagerDutyState, User]:
    """The account and the agent's own user."""
    state = desk.state
    start = world.clock.start
    owners = world.scene.accounts("pagerduty")
    agent = User(desk.new_id(), seed.agent.name, seed.agent.email, role="admin", ref=seed.agent.ref)
    state.add_user(agent)
    world.register_ref(seed.agent.ref, "user", "pagerduty", agent.id)
    users: dict[str, User] = {seed.agent.ref: agent}
    for i, seeded in enumerate(seed.users):
        user = User(desk.new_id(), seeded.name, seeded.email, role=seeded.role, time_zone=seeded.time_zone,
                    color=COLORS[i % len(COLORS)], ref=seeded.ref, person=owners.get(seeded.ref or "", seeded.person))
        state.add_user(user)
        if seeded.ref:
            users[seeded.ref] = user
        world.register_ref(seeded.ref, "user", "pagerduty", user.id)
    for name, description in PRIORITIES:
        priority = Priority(desk.new_id(), name, description)
        state.priorities[priority.id] = priority
    schedules: dict[str, Schedule] = {}
    for seeded_schedule in seed.schedules:
        layers = [Layer(desk.new_id(), [_get(users, u, "schedule layer user") for u in layer.users],
                        layer.rotation, layer.start.timestamp() if layer.start else start - 7 * 86400)
                  for layer in seeded_schedule.layers]
        schedule = Schedule(desk.new_id(), seeded_schedule.name, layers, seeded_schedule.time_zone,
                            seeded_schedule.description or "", seeded_schedule.ref)
        state.schedules[schedule.id] = schedule
        if seeded_schedule.ref:
            schedules[seeded_schedule.ref] = schedule
        world.register_ref(seeded_schedule.ref, "schedule", "pagerduty", schedule.id)
    policies: dict[str, EscalationPolicy] = {}
    first_policy: EscalationPolicy | None = None
    for seeded_policy in seed.escalation_policies:
        rules = [Rule(desk.new_id(), rule.delay,
                      [users[t] if t in users else _get(schedules, t, "escalation rule target") for t in rule.targets])
                 for rule in seeded_policy.rules]
        policy = EscalationPolicy(desk.new_id(), seeded_policy.name, rules, seeded_policy.num_loops,
                                  seeded_policy.description or "", seeded_policy.ref)
        state.policies[policy.id] = policy
        first_policy = first_policy or policy
        if seeded_policy.ref:
            policies[seeded_policy.ref] = policy
        world.register_ref(seeded_policy.ref, "escalation_policy", "pagerduty", policy.id)
    services: dict[str, Service] = {}
    for seeded_service in seed.services:
        chosen = policies[seeded_service.escalation_policy] if seeded_service.escalation_policy else first_policy
        if chosen is None:  # a seed built by hand: a policy paging the agent
            chosen = first_policy = EscalationPolicy(desk.new_id(), "Default", [Rule(desk.new_id(), 1800, [agent])])
            state.policies[chosen.id] = chosen
        service = Service(desk.new_id(), seeded_service.name, chosen,
                          world.secrets.token_hex(16), desk.new_id(),
                          start - 90 * 86400, seeded_service.description or "", seeded_service.ref,
                          acknowledgement_timeout=seeded_service.acknowledgement_timeout,
                          auto_resolve_timeout=seeded_service.auto_resolve_timeout)
        state.add_service(service)
        if seeded_service.ref:
            services[seeded_service.ref] = service
        world.register_ref(seeded_service.ref, "service", "pagerduty", service.id)
    _seed_incidents(world, seed, desk, state, users, services, agent)
    return state, agent


def _seed_incidents(world: WorldPort, seed: PagerDutyFile, desk: IncidentDesk, state: PagerDutyState,
                    users: dict[str, User], services: dict[str, Service], agent: User) -> None:
    start = world.clock.start
    undated = sum(1 for i in seed.incidents if i.at is None)
    priorities = {p.name: p for p in state.priorities.values()}
    for n, seeded in enumerate(seed.incidents):
        service = _get(services, seeded.service, "incident service")
        if seeded.at is not None:
            at = seeded.at.timestamp()
        else:
            undated -= 1
            at = start - SPACING_S * (undated + 1)
        incident = Incident(desk.new_id(), n + 1, seeded.title, service, service.policy, at,
                            seeded.incident_key or world.random_hex(32), urgency=seeded.urgency, status=seeded.status,
                            ref=seeded.ref, seeded=True, actor="seed", updated_at=at, last_status_change_at=at,
                            priority=priorities.get(seeded.priority or ""))
        assignees = ([_get(users, u, "incident assignee") for u in seeded.assigned_to]
                     if seeded.assigned_to is not None else service.policy.users_at(1, at))
        incident.assignments = [(u, at) for u in assignees]
        incident.last_status_change_by = service
        entry = LogEntry(desk.new_id("R", 14), "trigger_log_entry", incident, at, service,
                         {"type": "api"}, "Triggered through the API.")
        state.add_log_entry(entry)
        if seeded.status != "triggered":
            who = assignees[0] if assignees else None
            incident.last_status_change_by = who or service
            incident.acknowledgements = [(who, at)] if seeded.status == "acknowledged" else []
            if seeded.status == "resolved":
                incident.resolved_at = at
        for written in seeded.notes:
            note = NoteFile(content=written) if isinstance(written, str) else written
            author = users.get(note.from_ or "") or (assignees[0] if assignees else agent)
            incident.notes.append(Note(desk.new_id("P", 14), note.content, author,
                                       note.at.timestamp() if note.at else at, seeded=True, actor="seed"))
        state.add_incident(incident)
        world.register_ref(seeded.ref, "incident", "pagerduty", incident.id)
    live = [i for i in state.created if i.seeded and i.status != "resolved"]

    def wake() -> None:
        for incident in live:
            if incident.status != "resolved":
                desk.wake(incident)

    if live:
        world.schedule(start, wake, "pagerduty: seeded open incidents go live")


def _get(found: dict[str, Service] | dict[str, User] | dict[str, Schedule], ref: str, where: str):  # type: ignore[no-untyped-def]
    if ref not in found:
        known = ", ".join(sorted(found)) or "none"
        raise ValueError(f"pagerduty {where}: {ref!r} names nothing here (known: {known})")
    return found[ref]
