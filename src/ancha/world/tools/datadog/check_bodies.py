"""The Datadog state checks as scene files write them, and resolved (refs bare).

``{ datadog.monitor: $monitor, is: OK | Alert }`` (``is`` written beside the key);
``datadog.downtime: { monitor, remaining_gte, duration_lte, reject_active_unsafe }``
(durations such as ``1m``, resolved to seconds; only ``reject_active_unsafe`` is optional).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ancha.config.validation import DurationText, Expect, FileModel, join
from ancha.durations import parse_duration
from ancha.scene.file_model import Ref
from ancha.scene.predicates import Resolver

TOOL = "datadog"
CheckState = Literal["OK", "Alert"]

MonitorCheckFile = Annotated[str, Expect("a monitor ref such as $datadog_orders")]
MONITOR_SIBLINGS: dict[str, Any] = {"is": CheckState}


class _File(FileModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class DowntimeCheckFile(_File):
    """The reference's ``monitor``, ``remaining_gte``, ``duration_lte`` (all required) and
    optional ``reject_active_unsafe: true``."""

    monitor: Ref
    remaining_gte: Annotated[str, DurationText()]
    duration_lte: Annotated[str, DurationText()]
    reject_active_unsafe: bool = False


class MonitorCheck(_Model):
    monitor: str
    is_: CheckState = Field(alias="is")


class DowntimeCheck(_Model):
    monitor: str
    remaining_gte: float
    """Seconds."""
    duration_lte: float
    """Seconds."""
    reject_active_unsafe: bool = False


def _monitor(resolver: Resolver, value: Any, path: str) -> str | None:
    return resolver.refs.resolve(value, "monitor", resolver.source.reporter(path), tool=TOOL)


def resolve_monitor_check(data: dict[str, Any], path: str, resolver: Resolver) -> MonitorCheck | None:
    monitor = _monitor(resolver, data.get("value"), path)
    state = data.get("is")
    if state is None:
        parent = path.rsplit(".", 2)[0]
        resolver.add(parent, "datadog.monitor needs is: OK or is: Alert beside it",
                     "for example { datadog.monitor: $datadog_orders, is: OK }")
        return None
    return None if monitor is None else MonitorCheck.model_validate({"monitor": monitor, "is": state})


def resolve_downtime_check(data: dict[str, Any], path: str, resolver: Resolver) -> DowntimeCheck | None:
    if data.get("monitor") is None:
        return None  # missing or invalid: already reported
    monitor = _monitor(resolver, data["monitor"], join(path, "monitor"))
    if monitor is None:
        return None
    bounds: dict[str, float] = {}
    for name in ("remaining_gte", "duration_lte"):
        if data.get(name) is None:
            return None  # missing or invalid: already reported
        try:
            bounds[name] = parse_duration(str(data[name]))
        except ValueError as exc:
            resolver.add(join(path, name), str(exc), "for example 10m")
            return None
    return DowntimeCheck(monitor=monitor, reject_active_unsafe=bool(data.get("reject_active_unsafe")), **bounds)
