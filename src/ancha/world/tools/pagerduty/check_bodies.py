"""The ``pagerduty.incident`` state check as scene files write it, and resolved.

``pagerduty.incident: { ref: $incident }`` or ``{ service: $service, first: true }``
selects one incident; ``status``, ``assigned_to``, ``acknowledged_within`` and
``resolved_within`` are written beside the key; at least one must be given.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict

from ancha.config.validation import Expect, FileModel, join
from ancha.durations import parse_duration
from ancha.scene.file_model import Ref
from ancha.scene.predicates import Resolver

TOOL = "pagerduty"
STATUSES = ("triggered", "acknowledged", "resolved")


class _File(FileModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class IncidentSelectorFile(_File):
    ref: Ref | None = None
    service: Ref | None = None
    first: bool | None = None


SIBLINGS: dict[str, Any] = {
    # Checked against this kind's form even though okta.user has a ``status`` too: a sibling
    # field is validated by the kind it is written beside (``Resolver.body``).
    "status": Annotated[Literal["triggered", "acknowledged", "resolved"], Expect("triggered, acknowledged or resolved")],
    "assigned_to": Annotated[list[str], Expect("a list of user refs such as [$pd_laura]")],
    "acknowledged_within": Annotated[str, Expect("a duration such as 5m")],
    "resolved_within": Annotated[str, Expect("a duration such as 30m")],
}


class IncidentCheck(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ref: str | None = None
    service: str | None = None
    status: Literal["triggered", "acknowledged", "resolved"] | None = None
    assigned_to: list[str] | None = None
    acknowledged_within: float | None = None
    resolved_within: float | None = None


def resolve_incident(data: dict[str, Any], path: str, resolver: Resolver) -> IncidentCheck | None:
    value = data.get("value") or {}
    parent = path.rsplit(".", 2)[0]
    report = resolver.source.reporter
    ref, service, first = value.get("ref"), value.get("service"), value.get("first")
    if (ref is None) == (service is None):
        resolver.add(path, "select one incident: ref, or service with first: true",
                     "for example { ref: $pd_outage } or { service: $pagerduty_orders, first: true }")
        return None
    if service is not None and first is not True:
        resolver.add(join(path, "first"), "with service, write first: true (the service's earliest incident)",
                     "{ service: $pagerduty_orders, first: true }")
        return None
    if ref is not None and first is not None:
        resolver.add(join(path, "first"), "first only applies with service", "remove first")
        return None
    given = [name for name in SIBLINGS if data.get(name) is not None]
    if not given:
        resolver.add(parent, "pagerduty.incident checks at least one property",
                     "add status, assigned_to, acknowledged_within or resolved_within beside it")
        return None
    check: dict[str, Any] = {}
    ok = True
    if ref is not None:
        check["ref"] = resolver.refs.resolve(ref, "incident", report(join(path, "ref")), tool=TOOL)
        ok = check["ref"] is not None
    else:
        check["service"] = resolver.refs.resolve(service, "service", report(join(path, "service")), tool=TOOL)
        ok = check["service"] is not None
    status = data.get("status")
    if status is not None:
        if status not in STATUSES:
            resolver.add(join(parent, "status"), f"expected triggered, acknowledged or resolved, got {status!r}")
            ok = False
        check["status"] = status
    if data.get("assigned_to") is not None:
        users = [resolver.refs.resolve(u, "user", report(join(join(parent, "assigned_to"), i)), tool=TOOL)
                 for i, u in enumerate(data["assigned_to"])]
        ok = ok and all(u is not None for u in users)
        check["assigned_to"] = users
    for name in ("acknowledged_within", "resolved_within"):
        if data.get(name) is not None:
            try:
                check[name] = parse_duration(str(data[name]))
            except ValueError as exc:
                resolver.add(join(parent, name), str(exc), "for example 5m")
                ok = False
    return IncidentCheck.model_validate(check) if ok else None
