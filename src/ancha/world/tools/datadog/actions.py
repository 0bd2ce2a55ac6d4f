"""World-rule actions and fault effects on Datadog, made through the replica's own HTTP
handling with the world's keys (traced as actor ``world``):

- action ``datadog.monitor``: ``PUT /ancha/monitor/{id}/state`` (key ``action``);
- action ``datadog.event``: ``POST /api/v1/events``;
- action ``datadog.log``: ``POST /api/v2/logs`` (one line, now);
- effect ``datadog.monitor``: ``PUT /ancha/monitor/{id}/state`` keyed by the fault; released
  by ``DELETE`` (the monitor recovers: OK, or what its metric says);
- effect ``datadog.metric``: ``PUT /ancha/metric/{name}/hold/{fault}``; released by ``DELETE``
  (back to its baseline);
- effect ``datadog.log``: ``PUT /ancha/logs/stream/{key}`` (lines at the fault's start +
  k * every, materialized when read); released by ``DELETE`` (lines stop).

Each action answers what went wrong (``datadog.event: 400 Event title is required``) or None.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from ancha.world.kernel.port import WorldPort
from ancha.world.kernel.spec import Release
from ancha.world.tools.datadog.action_bodies import (
    EventAction,
    LogAction,
    LogEffect,
    MetricEffect,
    MonitorAction,
    MonitorEffect,
)
from ancha.world.tools.datadog.replica import DatadogReplica, error_text


def _monitor_id(world: WorldPort, ref: str) -> str:
    return world.ref_id(ref.removeprefix("$").rpartition(".")[2], "monitor")


def set_monitor(body: dict[str, Any], replica: DatadogReplica, world: WorldPort) -> str | None:
    spec = MonitorAction.model_validate(body)
    status, answer = replica.world_call("PUT", f"/ancha/monitor/{_monitor_id(world, spec.monitor)}/state",
                                        {"state": spec.state, "key": "action"})
    return None if status == 200 else f"datadog.monitor: {error_text(status, answer)}"


def post_event(body: dict[str, Any], replica: DatadogReplica, world: WorldPort) -> str | None:
    spec = EventAction.model_validate(body)
    status, answer = replica.world_call("POST", "/api/v1/events", {
        "title": spec.title, "text": spec.text, "tags": spec.tags, "alert_type": spec.alert_type})
    return None if status == 202 else f"datadog.event: {error_text(status, answer)}"


def send_log(body: dict[str, Any], replica: DatadogReplica, world: WorldPort) -> str | None:
    spec = LogAction.model_validate(body)
    item: dict[str, Any] = {**spec.attributes, "service": spec.service, "status": spec.status,
                            "message": spec.message}
    if spec.host:
        item["hostname"] = spec.host
    status, answer = replica.world_call("POST", "/api/v2/logs", [item])
    return None if status == 202 else f"datadog.log: {error_text(status, answer)}"


def _expect(replica: DatadogReplica, what: str, method: str, path: str, body: Any = None) -> None:
    status, answer = replica.world_call(method, path, body)
    if status != 200:
        raise RuntimeError(f"{what}: {error_text(status, answer)}")


def monitor_effect(body: dict[str, Any], replica: DatadogReplica, world: WorldPort, fault: str) -> Release | None:
    spec = MonitorEffect.model_validate(body)
    path = f"/ancha/monitor/{_monitor_id(world, spec.monitor)}/state"
    key = f"fault:{fault}"
    _expect(replica, "datadog.monitor", "PUT", path, {"state": spec.state, "key": key})
    return lambda: _expect(replica, "datadog.monitor", "DELETE", f"{path}/{quote(key, safe=':')}")


def metric_effect(body: dict[str, Any], replica: DatadogReplica, world: WorldPort, fault: str) -> Release | None:
    spec = MetricEffect.model_validate(body)
    path = f"/ancha/metric/{quote(spec.name, safe='.')}/hold/{quote(fault, safe='')}"
    _expect(replica, "datadog.metric", "PUT", path, {"value": spec.value, "tags": spec.tags})
    return lambda: _expect(replica, "datadog.metric", "DELETE", path)


def log_effect(body: dict[str, Any], replica: DatadogReplica, world: WorldPort, fault: str) -> Release | None:
    spec = LogEffect.model_validate(body)
    path = f"/ancha/logs/stream/{quote(fault, safe='')}-{world.random_hex(6)}"
    _expect(replica, "datadog.log", "PUT", path, {
        "service": spec.service, "status": spec.status, "message": spec.message, "every": f"{int(spec.every * 1000)}ms",
        "host": spec.host, "attributes": spec.attributes})
    return lambda: _expect(replica, "datadog.log", "DELETE", path)
