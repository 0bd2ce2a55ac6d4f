"""Okta, as one tool of the world: everything Ancha needs to know about it, in one object."""

from __future__ import annotations

import json

from ancha.scene.sections import BodyKind, WorldSection
from ancha.world.kernel.spec import ActionKind, StateKind, ToolSpec
from ancha.world.kernel.tool import ToolResponse
from ancha.world.tools.okta import action_bodies, actions, check_bodies, checks
from ancha.world.tools.okta.coverage import COVERAGE
from ancha.world.tools.okta.delivery import WEBHOOK, start_delivery
from ancha.world.tools.okta.judge import judge_view
from ancha.world.tools.okta.real_hosts import real_hosts
from ancha.world.tools.okta.render import render
from ancha.world.tools.okta.replica import OktaReplica
from ancha.world.tools.okta.scene_file import OktaFile, build_world


def _body_too_large(limit: int) -> ToolResponse:
    """Okta's error shape (``E0000003``: a body it will not read)."""
    body = {"errorCode": "E0000003", "errorSummary": f"The request body was not well-formed: over {limit} bytes.",
            "errorLink": "E0000003", "errorId": "oaeRequestTooLarge", "errorCauses": []}
    return ToolResponse(413, json.dumps(body).encode(), "application/json; charset=utf-8")


TOOL: ToolSpec[OktaReplica] = ToolSpec(
    name="okta",
    world=WorldSection("okta", OktaFile, build_world),
    replica=OktaReplica,
    variables=("token",),
    templates=("url", "token", "signing_secret"),
    checks=(
        StateKind(BodyKind("okta.user", "okta", check_bodies.UserStateFile, check_bodies.resolve_user_state,
                           "an Okta user's status (status, status_in) or existence (exists), "
                           "by $ref or login", check_bodies.SIBLINGS),
                  checks.evaluate, checks.EVENTS),
    ),
    actions=(
        ActionKind(BodyKind("okta.user", "okta", action_bodies.UserActionFile,
                            action_bodies.resolve_user_action,
                            "move an Okta user to a status through its lifecycle operations: {user: $ref or login, "
                            "status}; or {login, email, first_name, last_name, status, groups}, creating the user "
                            "when missing; groups are added"), actions.perform),
    ),
    delivery=start_delivery,
    webhook=WEBHOOK,
    real_hosts=real_hosts,
    agent_env={"OKTA_TESTING_TESTINGDISABLEHTTPSCHECK": "true"},
    judge_view=judge_view,
    render=render,
    secret_patterns=(r"\b00[A-Za-z0-9_-]{40}\b",),
    vendor_files=("rest",),
    coverage=COVERAGE,
    body_too_large=_body_too_large,
)
