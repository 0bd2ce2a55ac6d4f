"""``world.pagerduty``: one model, as a scene file writes it and as it resolves.

Refs: ``agent.ref`` and ``users[].ref`` declare users (kind ``user``), ``schedules[].ref``
schedules, ``escalation_policies[].ref`` escalation policies, ``services[].ref``
services and ``incidents[].ref`` incidents. Layer users and incident assignees are user
refs; rule targets are user or schedule refs. Durations (``rotation: 1w``, ``delay:
15m``) take weeks too; seed times are ISO or offsets from clock.start.

``build_world`` resolves the written section in place: refs made bare (``pd_laura``),
times absolute UTC datetimes, durations seconds, defaults filled; the same classes then
validate the resolved data, and the replica is built from them. A field written one way
and kept another (a duration, a time) says so with ``Written`` (``ancha.scene.field_forms``).
The agent's own account (``agent``) always exists; its e-mail is ``{{pagerduty.from_email}}``.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.json_schema import SkipJsonSchema

from ancha.config.validation import Expect, FileModel, join
from ancha.durations import parse_duration
from ancha.scene.field_forms import written
from ancha.scene.file_model import Ref, RefName, Time
from ancha.scene.refs import Declared
from ancha.scene.sections import SectionContext
from ancha.scene.sources import parse_time

TOOL = "pagerduty"
WEEK = 7 * 86400.0


Duration = Annotated[str, Expect("a duration such as 15m, 12h or 1w")]
Seconds = Annotated[float, written(Duration)]
"""Written as a duration (``15m``, ``1w``), kept as seconds."""
TimeOrNone = Annotated[datetime | None, written(Time | None)]
"""Written as an ISO time or an offset from clock.start (``-3d``), kept as a UTC datetime."""
UserRef = Annotated[str, Expect("a user ref such as $pd_laura")]


def parse_span(text: str) -> float:
    """A duration that may start with weeks (``1w``, ``2w3d``), in seconds."""
    match = re.fullmatch(r"\s*(?:(\d+)w)?(.*?)\s*", str(text))
    if match is None or (not match.group(1) and not match.group(2)):
        raise ValueError(f"expected a duration such as 15m, 12h or 1w, got {text!r}")
    weeks = int(match.group(1) or 0) * WEEK
    rest = match.group(2)
    return weeks + (parse_duration(rest) if rest else 0.0)


class _File(FileModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class AgentFile(_File):
    ref: RefName = "pagerduty_agent"
    name: str = "Ancha Agent"
    email: str = "ancha-agent@acme.test"


class UserFile(_File):
    unsupported_fields: ClassVar[dict[str, str]] = {
        "person": "link the user from its person instead: people.<name>.accounts.pagerduty: $ref"}
    ref: RefName | None = None
    name: str
    email: Annotated[str, Expect("an e-mail address such as laura@acme.test")]
    role: Literal["admin", "limited_user", "observer", "owner", "read_only_user", "restricted_access",
                  "read_only_limited_user", "user"] = "user"
    time_zone: str = "Etc/UTC"
    person: SkipJsonSchema[str | None] = Field(default=None, exclude=True)
    """A seed built by hand may link a person here; a file links the user from its person
    (``people.<p>.accounts.pagerduty``), which wins."""


class LayerFile(_File):
    users: list[UserRef]
    """User refs, in turn order."""
    rotation: Seconds = Field(default=WEEK, json_schema_extra={"default": "1w"})
    """How long each user is on call before the next one takes over."""
    start: TimeOrNone = None
    """When the rotation starts (the first user's first shift); None: a week before clock.start."""


class ScheduleFile(_File):
    ref: RefName | None = None
    name: str
    time_zone: str = "Etc/UTC"
    description: str | None = None
    layers: list[LayerFile] = Field(default_factory=list)
    """Later layers take precedence where they have someone on call (PagerDuty's layer order)."""


class RuleFile(_File):
    delay: Seconds = Field(default=1800.0, json_schema_extra={"default": "30m"})
    """How long an unacknowledged incident waits before it escalates past this rule."""
    targets: list[Annotated[str, Expect("a user or schedule ref such as $pd_primary")]]
    """User or schedule refs."""


class PolicyFile(_File):
    ref: RefName | None = None
    name: str
    description: str | None = None
    num_loops: Annotated[int, Field(ge=0, le=9)] = 0
    rules: list[RuleFile] = Field(default_factory=list)


class ServiceFile(_File):
    ref: RefName | None = None
    name: str
    description: str | None = None
    escalation_policy: Ref | None = None
    """Escalation policy ref; None: the first policy of the seed."""
    integration_key: Annotated[str, Expect("nothing: integration keys are made per environment")] | None = None
    """Refused with a hint (keys are per environment); kept so that the problem says why."""
    acknowledgement_timeout: Seconds | None = None
    """How long an acknowledged incident stays acknowledged before it is triggered again (and
    pages afresh); None: never (PagerDuty's service without the setting)."""
    auto_resolve_timeout: Seconds | None = None
    """How long an incident stays open before PagerDuty resolves it; None: never."""


class NoteFile(_File):
    content: str
    from_: UserRef | None = Field(default=None, alias="from")
    """User ref; None: the first assignee, else the agent."""
    at: TimeOrNone = None


class IncidentFile(_File):
    ref: RefName | None = None
    service: Ref
    title: str
    urgency: Literal["high", "low"] = "high"
    status: Literal["triggered", "acknowledged", "resolved"] = "triggered"
    assigned_to: list[UserRef] | None = None
    """User refs; None: whoever the service's policy pages first at ``at``."""
    at: TimeOrNone = None
    """None: seeded incidents are spaced an hour apart before clock.start, in order."""
    notes: list[NoteFile | str] = Field(default_factory=list)
    """A file may write a note as its text alone; resolved, every note is a ``NoteFile``."""
    incident_key: str | None = None
    priority: Literal["P1", "P2", "P3", "P4", "P5"] | None = None


class PagerDutyFile(_File):
    # the whole section; every list is optional (no docstring: it would show in ``ancha schema scene``)
    agent: AgentFile = Field(default_factory=AgentFile)
    users: list[UserFile] = Field(default_factory=list)
    schedules: list[ScheduleFile] = Field(default_factory=list)
    escalation_policies: list[PolicyFile] = Field(default_factory=list)
    services: list[ServiceFile] = Field(default_factory=list)
    incidents: list[IncidentFile] = Field(default_factory=list)

    @classmethod
    def parse(cls, seed: PagerDutyFile | dict[str, Any] | None) -> PagerDutyFile:
        """The resolved seed a replica is built from (none: an empty account)."""
        if seed is None:
            return cls()
        if isinstance(seed, PagerDutyFile):
            return seed
        if isinstance(seed, BaseModel):
            return cls.model_validate(seed.model_dump(mode="json", by_alias=True))
        return cls.model_validate(seed)


# --- resolving -------------------------------------------------------------------------


class _Resolution:
    def __init__(self, ctx: SectionContext) -> None:
        self.ctx = ctx
        self.ok = True

    def problem(self, path: str, message: str, hint: str | None = None) -> None:
        self.ctx.source.add(path, message, hint)
        self.ok = False

    def declare(self, name: object, kind: str, path: str) -> None:
        if isinstance(name, str):
            self.ctx.refs.declare(name, Declared(kind, self.ctx.source.line_of(path), 0, {}, tool=TOOL),
                                  self.ctx.source.reporter(path))

    def ref(self, value: Any, kind: str | tuple[str, ...], path: str) -> str | None:
        name = self.ctx.refs.resolve(value, kind, self.ctx.source.reporter(path), tool=TOOL)
        self.ok = self.ok and name is not None
        return name

    def time(self, value: Any, path: str) -> datetime | None:
        if value is None:
            return None
        try:
            return parse_time(value, self.ctx.start)
        except (ValueError, OverflowError) as exc:
            self.problem(path, str(exc), "write an ISO time, or -3d for three days before clock.start")
            return None

    def span(self, value: Any, path: str, positive: bool = True) -> float:
        try:
            seconds = parse_span(value)
        except ValueError as exc:
            self.problem(path, str(exc), "for example 30m, 12h or 1w")
            return 0.0
        if positive and seconds <= 0:
            self.problem(path, f"must be longer than zero, got {value!r}", "for example 1w")
        return seconds


def _items(clean: dict[str, Any], field: str) -> list[tuple[int, dict[str, Any]]]:
    return [(i, item) for i, item in enumerate(clean.get(field) or []) if isinstance(item, dict)]


def build_world(clean: dict[str, Any], ctx: SectionContext) -> PagerDutyFile | None:
    """``world.pagerduty``: declare every ref, then resolve refs, times and durations in place."""
    run = _Resolution(ctx)
    base = ctx.path
    agent = clean.get("agent") or {}
    run.declare(agent.get("ref", "pagerduty_agent"), "user", f"{base}.agent.ref")
    kinds = (("users", "user"), ("schedules", "schedule"), ("escalation_policies", "escalation_policy"),
             ("services", "service"), ("incidents", "incident"))
    for field, kind in kinds:
        for i, item in _items(clean, field):
            run.declare(item.get("ref"), kind, f"{base}.{field}[{i}].ref")
    emails: dict[str, str] = {str(agent.get("email", "ancha-agent@acme.test")).lower(): f"{base}.agent"}
    users = []
    for i, user in _items(clean, "users"):
        email = str(user.get("email", "")).lower()
        if email in emails:
            run.problem(f"{base}.users[{i}].email", f"{user.get('email')} is already the e-mail of {emails[email]}",
                        "PagerDuty user e-mails are unique")
        emails[email] = f"{base}.users[{i}]"
        users.append(user)
    schedules = []
    for i, schedule in _items(clean, "schedules"):
        path = f"{base}.schedules[{i}]"
        layers = []
        for j, layer in enumerate(schedule.get("layers") or []):
            where = f"{path}.layers[{j}]"
            if not layer.get("users"):
                run.problem(f"{where}.users", "a layer needs at least one user", "for example users: [$pd_laura]")
            layers.append({"users": [run.ref(u, "user", join(f"{where}.users", k))
                                     for k, u in enumerate(layer.get("users") or [])],
                           "rotation": run.span(layer.get("rotation", "1w"), f"{where}.rotation"),
                           "start": run.time(layer.get("start"), f"{where}.start")})
        schedules.append({**schedule, "layers": layers})
    policies = []
    for i, policy in _items(clean, "escalation_policies"):
        path = f"{base}.escalation_policies[{i}]"
        if not policy.get("rules"):
            run.problem(f"{path}.rules", "an escalation policy needs at least one rule",
                        "for example rules: [{delay: 15m, targets: [$pd_primary]}]")
        rules = []
        for j, rule in enumerate(policy.get("rules") or []):
            where = f"{path}.rules[{j}]"
            if not rule.get("targets"):
                run.problem(f"{where}.targets", "a rule needs at least one target", "user or schedule refs")
            rules.append({"delay": run.span(rule.get("delay", "30m"), f"{where}.delay"),
                          "targets": [run.ref(t, ("user", "schedule"), join(f"{where}.targets", k))
                                      for k, t in enumerate(rule.get("targets") or [])]})
        policies.append({**policy, "rules": rules})
    services = []
    for i, service in _items(clean, "services"):
        path = f"{base}.services[{i}]"
        data = dict(service)
        if service.get("escalation_policy") is not None:
            data["escalation_policy"] = run.ref(service["escalation_policy"], "escalation_policy",
                                                f"{path}.escalation_policy")
        elif not policies:
            run.problem(f"{path}.escalation_policy", "a service needs an escalation policy, and the seed has none",
                        "declare one under escalation_policies and name it here")
        for timeout in ("acknowledgement_timeout", "auto_resolve_timeout"):
            if service.get(timeout) is not None:
                data[timeout] = run.span(service[timeout], f"{path}.{timeout}")
        if data.pop("integration_key", None) is not None:
            # A key written in the scene would be the same in every trial: one trial's key
            # would then open incidents in another's world.
            run.problem(f"{path}.integration_key", "integration keys are made per environment, not set by the scene",
                        "leave it out; the agent gets each service's key as {{pagerduty.routing_keys}} "
                        "(the first as {{pagerduty.routing_key}})")
        services.append(data)
    incidents = []
    for i, incident in _items(clean, "incidents"):
        path = f"{base}.incidents[{i}]"
        data = dict(incident)
        data["service"] = run.ref(incident.get("service"), "service", f"{path}.service")
        if incident.get("assigned_to") is not None:
            data["assigned_to"] = [run.ref(u, "user", join(f"{path}.assigned_to", k))
                                   for k, u in enumerate(incident["assigned_to"])]
        data["at"] = run.time(incident.get("at"), f"{path}.at")
        notes = []
        for j, note in enumerate(incident.get("notes") or []):
            note = {"content": note} if isinstance(note, str) else dict(note)
            author = note.pop("from_", note.pop("from", None))
            notes.append({"content": note.get("content", ""), "at": run.time(note.get("at"), f"{path}.notes[{j}].at"),
                          "from": run.ref(author, "user", f"{path}.notes[{j}].from") if author else None})
        data["notes"] = notes
        incidents.append(data)
    if not run.ok:
        return None
    world = {"agent": agent, "users": users, "schedules": schedules, "escalation_policies": policies,
             "services": services, "incidents": incidents}
    try:
        return PagerDutyFile.model_validate(world)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = join(base, ".".join(str(p) for p in error["loc"]))
        ctx.source.add(where, error["msg"].removeprefix("Value error, "), "see the pagerduty seed in scenes.md")
        return None
