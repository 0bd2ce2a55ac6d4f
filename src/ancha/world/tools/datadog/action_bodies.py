"""Datadog's world-rule actions and fault effects in scene files: each body as written
(``*File``), as resolved (refs bare), and the function that resolves one into the other.

Actions (``world_rules.events[].do``):
``datadog.monitor: {monitor: $m, state: OK|Warn|Alert|No Data}`` sets the monitor's state;
``datadog.event: {title, text, tags, alert_type}`` posts an event;
``datadog.log: {service, status, message, host, attributes}`` sends one log line.

Fault effects (``world_rules.faults[].effects``), held while the fault is active:
``datadog.monitor: {monitor: $m, state: Alert|Warn|No Data}`` (released: recovers);
``datadog.metric: {name, value, tags}`` (released: back to its baseline);
``datadog.log: {service, status, message, every, host, attributes}`` (released: lines stop).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ancha.config.validation import DurationText, FileModel, join
from ancha.durations import parse_duration
from ancha.scene.file_model import Ref
from ancha.scene.predicates import Resolver
from ancha.world.tools.datadog.scene_file import LOG_STATUSES

TOOL = "datadog"
State = Literal["OK", "Warn", "Alert", "No Data"]
FaultState = Literal["Alert", "Warn", "No Data"]
AlertType = Literal["error", "warning", "info", "success", "user_update", "recommendation", "snapshot"]
LogStatus = Literal[LOG_STATUSES]  # type: ignore[valid-type]


class _File(FileModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


# --- as written --------------------------------------------------------------------------


class MonitorActionFile(_File):
    monitor: Ref
    state: State


class EventActionFile(_File):
    title: str
    text: str = ""
    tags: list[str] = Field(default_factory=list)
    alert_type: AlertType = "info"


class LogActionFile(_File):
    service: str
    status: LogStatus = "info"
    message: str
    host: str | None = None
    attributes: dict[str, Any] = Field(default_factory=dict)


class MonitorEffectFile(_File):
    monitor: Ref
    state: FaultState = "Alert"


class MetricEffectFile(_File):
    name: str = Field(description="the metric, such as orders.latency.p99")
    value: float
    tags: list[str] = Field(default_factory=list)


class LogEffectFile(_File):
    service: str
    status: LogStatus = "error"
    message: str
    every: Annotated[str, DurationText()] = "1m"
    host: str | None = None
    attributes: dict[str, Any] = Field(default_factory=dict)


# --- resolved ------------------------------------------------------------------------------


class MonitorAction(_Model):
    monitor: str
    state: State


class EventAction(_Model):
    title: str
    text: str = ""
    tags: list[str] = Field(default_factory=list)
    alert_type: AlertType = "info"


class LogAction(_Model):
    service: str
    status: str = "info"
    message: str
    host: str | None = None
    attributes: dict[str, Any] = Field(default_factory=dict)


class MonitorEffect(_Model):
    monitor: str
    state: FaultState = "Alert"


class MetricEffect(_Model):
    name: str
    value: float
    tags: list[str] = Field(default_factory=list)


class LogEffect(_Model):
    service: str
    status: str = "error"
    message: str
    every: float = 60.0
    host: str | None = None
    attributes: dict[str, Any] = Field(default_factory=dict)


def _monitor(data: dict[str, Any], path: str, resolver: Resolver) -> str | None:
    return resolver.refs.resolve(data.get("monitor"), "monitor", resolver.source.reporter(join(path, "monitor")),
                                 tool=TOOL)


def _fields(data: dict[str, Any], model: type[_Model]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k in model.model_fields and v is not None}


def resolve_monitor_action(data: dict[str, Any], path: str, resolver: Resolver) -> MonitorAction | None:
    monitor = _monitor(data, path, resolver)
    if monitor is None or data.get("state") is None:
        return None
    return MonitorAction(monitor=monitor, state=data["state"])


def resolve_event_action(data: dict[str, Any], path: str, resolver: Resolver) -> EventAction | None:
    return None if data.get("title") is None else EventAction.model_validate(_fields(data, EventAction))


def resolve_log_action(data: dict[str, Any], path: str, resolver: Resolver) -> LogAction | None:
    if data.get("service") is None or data.get("message") is None:
        return None
    return LogAction.model_validate(_fields(data, LogAction))


def resolve_monitor_effect(data: dict[str, Any], path: str, resolver: Resolver) -> MonitorEffect | None:
    monitor = _monitor(data, path, resolver)
    return None if monitor is None else MonitorEffect(monitor=monitor, state=data.get("state") or "Alert")


def resolve_metric_effect(data: dict[str, Any], path: str, resolver: Resolver) -> MetricEffect | None:
    if not data.get("name"):
        if "name" in data:
            resolver.add(join(path, "name"), "needs a metric name", "for example name: orders.latency.p99")
        return None
    if data.get("value") is None:
        return None
    return MetricEffect.model_validate(_fields(data, MetricEffect))


def resolve_log_effect(data: dict[str, Any], path: str, resolver: Resolver) -> LogEffect | None:
    if data.get("service") is None or data.get("message") is None:
        return None
    try:
        every = parse_duration(str(data.get("every") or "1m"))
    except ValueError as exc:
        resolver.add(join(path, "every"), str(exc), "for example every: 30s")
        return None
    if every < 1:
        resolver.add(join(path, "every"), "a log stream emits at most one line a second", "for example every: 30s")
        return None
    return LogEffect.model_validate({**_fields(data, LogEffect), "every": every})
