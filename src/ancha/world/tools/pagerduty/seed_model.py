"""The ``world.pagerduty`` seed, resolved: what a PagerDuty replica is built from.

Refs are bare (``pd_laura``), times absolute UTC datetimes, durations seconds. The
agent's own account (``agent``) always exists; its e-mail is ``{{pagerduty.from_email}}``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Status = Literal["triggered", "acknowledged", "resolved"]
Urgency = Literal["high", "low"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class PagerDutyAgent(_Model):
    ref: str = "pagerduty_agent"
    name: str = "Ancha Agent"
    email: str = "ancha-agent@acme.test"


class PagerDutyUser(_Model):
    ref: str | None = None
    name: str
    email: str
    role: str = "user"
    time_zone: str = "Etc/UTC"
    person: str | None = None


class PagerDutyLayer(_Model):
    users: list[str]
    """User refs, in turn order."""
    rotation: float = 604800.0
    """Seconds each user is on call before the next one takes over."""
    start: datetime | None = None
    """When the rotation starts (the first user's first shift); None: a week before clock.start."""


class PagerDutySchedule(_Model):
    ref: str | None = None
    name: str
    time_zone: str = "Etc/UTC"
    description: str | None = None
    layers: list[PagerDutyLayer] = Field(default_factory=list)
    """Later layers take precedence where they have someone on call (PagerDuty's layer order)."""


class PagerDutyRule(_Model):
    delay: float = 1800.0
    """Seconds before an unacknowledged incident escalates past this rule."""
    targets: list[str]
    """User or schedule refs."""


class PagerDutyPolicy(_Model):
    ref: str | None = None
    name: str
    description: str | None = None
    num_loops: int = Field(default=0, ge=0, le=9)
    rules: list[PagerDutyRule] = Field(default_factory=list)


class PagerDutyService(_Model):
    ref: str | None = None
    name: str
    description: str | None = None
    escalation_policy: str | None = None
    """Escalation policy ref; None: the first policy of the seed."""


class PagerDutyNote(_Model):
    content: str
    from_: str | None = Field(default=None, alias="from")
    """User ref; None: the first assignee, else the agent."""
    at: datetime | None = None


class PagerDutyIncident(_Model):
    ref: str | None = None
    service: str
    title: str
    urgency: Urgency = "high"
    status: Status = "triggered"
    assigned_to: list[str] | None = None
    """User refs; None: whoever the service's policy pages first at ``at``."""
    at: datetime | None = None
    """None: seeded incidents are spaced an hour apart before clock.start, in order."""
    notes: list[PagerDutyNote] = Field(default_factory=list)
    incident_key: str | None = None
    priority: str | None = None
    """A priority name (P1..P5)."""


class PagerDutyWorld(_Model):
    """The whole seed; every list is optional."""

    agent: PagerDutyAgent = Field(default_factory=PagerDutyAgent)
    users: list[PagerDutyUser] = Field(default_factory=list)
    schedules: list[PagerDutySchedule] = Field(default_factory=list)
    escalation_policies: list[PagerDutyPolicy] = Field(default_factory=list)
    services: list[PagerDutyService] = Field(default_factory=list)
    incidents: list[PagerDutyIncident] = Field(default_factory=list)

    @classmethod
    def parse(cls, seed: PagerDutyWorld | dict[str, Any] | None) -> PagerDutyWorld:
        if seed is None:
            return cls()
        if isinstance(seed, PagerDutyWorld):
            return seed
        if isinstance(seed, BaseModel):
            return cls.model_validate(seed.model_dump(mode="json", by_alias=True))
        return cls.model_validate(seed)
