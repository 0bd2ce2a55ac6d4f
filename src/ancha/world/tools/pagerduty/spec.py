"""PagerDuty, as one tool of the world: everything Ancha needs to know about it, in one object."""

from __future__ import annotations

import json
from typing import Any

from ancha.scene.sections import BodyKind, WorldSection
from ancha.world.kernel.spec import ActionKind, EffectKind, StateKind, ToolSpec
from ancha.world.kernel.tool import ToolResponse
from ancha.world.tools.pagerduty import action_bodies, actions, checks
from ancha.world.tools.pagerduty.check_bodies import SIBLINGS, IncidentSelectorFile, resolve_incident
from ancha.world.tools.pagerduty.coverage import COVERAGE
from ancha.world.tools.pagerduty.delivery import WEBHOOK, start_delivery
from ancha.world.tools.pagerduty.judge import judge_view
from ancha.world.tools.pagerduty.reach import PagerDutyReach
from ancha.world.tools.pagerduty.real_hosts import real_hosts
from ancha.world.tools.pagerduty.render import render
from ancha.world.tools.pagerduty.replica import PagerDutyReplica
from ancha.world.tools.pagerduty.scene_file import PagerDutyFile, build_world
from ancha.world.tools.pagerduty.timeline import incident_marks


def _agent_accounts(seed: dict[str, Any]) -> list[str]:
    return [str((seed.get("agent") or {}).get("ref") or "pagerduty_agent")]


def _action(key: str, file_model: Any, resolve: Any, about: str) -> BodyKind:
    return BodyKind(key, "pagerduty", file_model, resolve, about)


def _body_too_large(limit: int) -> ToolResponse:
    """PagerDuty's RequestEntityTooLarge response, in its error shape."""
    body = {"error": {"message": "Request Entity Too Large", "errors": [f"The request body is over {limit} bytes."]}}
    return ToolResponse(413, json.dumps(body).encode(), "application/json; charset=utf-8")


TOOL: ToolSpec[PagerDutyReplica] = ToolSpec(
    name="pagerduty",
    timeline=incident_marks,
    world=WorldSection("pagerduty", PagerDutyFile, build_world, accounts_kind="user"),
    replica=PagerDutyReplica,
    secure=True,  # the official client refuses any base URL but https://
    variables=("token", "from_email", "routing_key", "signing_secret"),
    templates=("url", "token", "signing_secret", "from_email", "routing_key", "routing_keys"),
    reach=PagerDutyReach,
    delivery=start_delivery,
    webhook=WEBHOOK,
    real_hosts=real_hosts,
    checks=(
        StateKind(BodyKind("pagerduty.incident", "pagerduty", IncidentSelectorFile, resolve_incident,
                           "one incident's status, assignees and response times", SIBLINGS),
                  checks.evaluate, checks.INCIDENT_EVENTS),
    ),
    actions=(
        ActionKind(_action("pagerduty.trigger", action_bodies.TriggerFile, action_bodies.resolve_trigger,
                           "trigger an incident on a service"), actions.trigger),
        ActionKind(_action("pagerduty.acknowledge", action_bodies.IncidentActionFile,
                           action_bodies.resolve_incident_action, "acknowledge an incident"), actions.acknowledge),
        ActionKind(_action("pagerduty.resolve", action_bodies.IncidentActionFile,
                           action_bodies.resolve_incident_action, "resolve an incident"), actions.resolve),
    ),
    effects=(
        EffectKind(_action("pagerduty.trigger", action_bodies.TriggerFile, action_bodies.resolve_trigger,
                           "trigger one incident when the fault starts"), actions.trigger_effect),
    ),
    judge_view=judge_view,
    render=render,
    secret_patterns=(r"u\+[A-Za-z0-9_-]{18}", r"(?<![0-9a-f])[0-9a-f]{32}(?![0-9a-f])"),
    vendor_files=("rest",),
    coverage=COVERAGE,
    agent_accounts=_agent_accounts,
    body_too_large=_body_too_large,
)
