"""PagerDuty's world-rule actions and fault effect in scene files: as written, as resolved.

``pagerduty.trigger: {service: $service, title, urgency?: high|low, details?}`` (an action,
and a fault effect); ``pagerduty.acknowledge`` / ``pagerduty.resolve: {incident: $incident}``
or ``{service: $service}`` (its latest open incident), with ``as: $user`` to act as that
user (default: the integration).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ancha.config.validation import FileModel, join
from ancha.scene.file_model import Ref
from ancha.scene.predicates import Resolver

TOOL = "pagerduty"


class _File(FileModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class TriggerFile(_File):
    service: Ref
    title: str
    urgency: Literal["high", "low"] | None = None
    details: dict[str, Any] | str | None = None


class IncidentActionFile(_File):
    incident: Ref | None = None
    service: Ref | None = None
    as_: Ref | None = Field(default=None, alias="as")


class Trigger(_Model):
    service: str
    title: str
    urgency: Literal["high", "low"] = "high"
    details: dict[str, Any] | str | None = None


class IncidentAction(_Model):
    incident: str | None = None
    service: str | None = None
    as_: str | None = Field(default=None, alias="as")


def _ref(resolver: Resolver, value: Any, kind: str, path: str) -> str | None:
    return resolver.refs.resolve(value, kind, resolver.source.reporter(path), tool=TOOL)


def resolve_trigger(data: dict[str, Any], path: str, resolver: Resolver) -> Trigger | None:
    service = _ref(resolver, data.get("service"), "service", join(path, "service"))
    title = data.get("title")
    if isinstance(title, str) and not title.strip():
        resolver.add(join(path, "title"), "needs text", "for example title: orders p99 above 2s")
        return None
    if service is None or title is None:
        return None
    return Trigger(service=service, title=title, urgency=data.get("urgency") or "high", details=data.get("details"))


def resolve_incident_action(data: dict[str, Any], path: str, resolver: Resolver) -> IncidentAction | None:
    incident, service = data.get("incident"), data.get("service")
    if (incident is None) == (service is None):
        resolver.add(path, "name the incident, or its service (its latest open incident)",
                     "for example { incident: $pd_outage } or { service: $pagerduty_orders }")
        return None
    found: dict[str, Any] = {}
    if incident is not None:
        found["incident"] = _ref(resolver, incident, "incident", join(path, "incident"))
    else:
        found["service"] = _ref(resolver, service, "service", join(path, "service"))
    who = data.get("as_", data.get("as"))
    if who is not None:
        found["as"] = _ref(resolver, who, "user", join(path, "as"))
        if found["as"] is None:
            return None
    if found.get("incident") is None and found.get("service") is None:
        return None
    return IncidentAction.model_validate(found)
