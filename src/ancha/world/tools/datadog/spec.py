"""Datadog, as one tool of the world: everything Ancha needs to know about it, in one object."""

from __future__ import annotations

import json
from typing import Any

from ancha.scene.sections import BodyKind, WorldSection
from ancha.world.kernel.spec import ActionKind, EffectKind, StateKind, ToolSpec
from ancha.world.kernel.tool import ToolResponse
from ancha.world.tools.datadog import action_bodies, actions, checks
from ancha.world.tools.datadog import check_bodies as bodies
from ancha.world.tools.datadog.coverage import COVERAGE
from ancha.world.tools.datadog.delivery import WEBHOOK, start_delivery
from ancha.world.tools.datadog.judge import judge_view
from ancha.world.tools.datadog.real_hosts import real_hosts
from ancha.world.tools.datadog.render import render
from ancha.world.tools.datadog.replica import DatadogReplica
from ancha.world.tools.datadog.scene_file import DatadogFile, build_world
from ancha.world.tools.datadog.timeline import monitor_marks


def _kind(key: str, file_model: Any, resolve: Any, about: str, siblings: dict[str, Any] | None = None) -> BodyKind:
    return BodyKind(key, "datadog", file_model, resolve, about, siblings or {})


def _body_too_large(limit: int) -> ToolResponse:
    """Datadog's 413 (Payload too large, an APIErrorResponse); its intake takes payloads up to 5 MB."""
    body = {"errors": ["Payload too large"]}
    return ToolResponse(413, json.dumps(body).encode(), "application/json; charset=utf-8")


TOOL: ToolSpec[DatadogReplica] = ToolSpec(
    name="datadog",
    timeline=monitor_marks,
    world=WorldSection("datadog", DatadogFile, build_world),
    replica=DatadogReplica,
    variables=("token", "api_key", "app_key"),
    templates=("url", "token", "signing_secret", "api_key", "app_key", "webhook_token"),
    delivery=start_delivery,
    webhook=WEBHOOK,
    real_hosts=real_hosts,
    checks=(
        StateKind(_kind("datadog.monitor", bodies.MonitorCheckFile, bodies.resolve_monitor_check,
                        "a monitor's current state", bodies.MONITOR_SIBLINGS),
                  checks.monitor_state, checks.MONITOR_EVENTS),
        StateKind(_kind("datadog.downtime", bodies.DowntimeCheckFile, bodies.resolve_downtime_check,
                        "an active downtime on one monitor"), checks.downtime, checks.DOWNTIME_EVENTS),
    ),
    actions=(
        ActionKind(_kind("datadog.monitor", action_bodies.MonitorActionFile, action_bodies.resolve_monitor_action,
                         "set a monitor's state"), actions.set_monitor),
        ActionKind(_kind("datadog.event", action_bodies.EventActionFile, action_bodies.resolve_event_action,
                         "post an event"), actions.post_event),
        ActionKind(_kind("datadog.log", action_bodies.LogActionFile, action_bodies.resolve_log_action,
                         "send one log line"), actions.send_log),
    ),
    effects=(
        EffectKind(_kind("datadog.monitor", action_bodies.MonitorEffectFile, action_bodies.resolve_monitor_effect,
                         "a monitor holds a state while the fault is active"), actions.monitor_effect),
        EffectKind(_kind("datadog.metric", action_bodies.MetricEffectFile, action_bodies.resolve_metric_effect,
                         "a metric reads a value while the fault is active"), actions.metric_effect),
        EffectKind(_kind("datadog.log", action_bodies.LogEffectFile, action_bodies.resolve_log_effect,
                         "log lines at a rate while the fault is active"), actions.log_effect),
    ),
    judge_view=judge_view,
    render=render,
    secret_patterns=(r"\b[0-9a-f]{32}\b", r"\b[0-9a-f]{40}\b"),
    vendor_files=("rest",),
    coverage=COVERAGE,
    body_too_large=_body_too_large,
    max_body=5 * 1024 * 1024,
)
