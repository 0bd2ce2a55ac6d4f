"""Slack, as one tool of the world: everything Ancha needs to know about it, in one object."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ancha.scene.sections import BodyKind, WorldSection
from ancha.world.kernel.spec import ActionKind, StateKind, ToolSpec
from ancha.world.kernel.tool import ToolResponse
from ancha.world.tools.slack import action_bodies, actions, check_bodies, checkpoint, checks, scene_file
from ancha.world.tools.slack.coverage import COVERAGE
from ancha.world.tools.slack.delivery import start_delivery
from ancha.world.tools.slack.events_http import WEBHOOK
from ancha.world.tools.slack.judge import judge_view
from ancha.world.tools.slack.reach import SlackReach
from ancha.world.tools.slack.real_hosts import real_hosts
from ancha.world.tools.slack.render import render
from ancha.world.tools.slack.replica import SlackReplica

if TYPE_CHECKING:
    from starlette.types import Receive, Scope, Send


def _agent_accounts(seed: dict[str, Any]) -> list[str]:
    return [str((seed.get("bot") or {}).get("ref") or scene_file.SlackBotFile().ref)]


async def _websocket(replica: SlackReplica, path: str, scope: Scope, receive: Receive, send: Send) -> None:
    """Socket Mode connections (``<tool URL>/link/?ticket=...``, or ``wss-primary.slack.com/link/...``)."""
    await replica.socket_mode.serve(path, scope, receive, send)


def _body_too_large(limit: int) -> ToolResponse:
    """Slack refuses an oversized call in its own shape, ``ok: false``, code ``request_too_large``."""
    body = {"ok": False, "error": "request_too_large"}
    return ToolResponse(413, json.dumps(body).encode(), "application/json; charset=utf-8")


TOOL: ToolSpec[SlackReplica] = ToolSpec(
    name="slack",
    world=WorldSection("slack", scene_file.SlackFile, scene_file.build_world, as_json=scene_file.world_json),
    replica=SlackReplica,
    variables=("token", "signing_secret", "app_token"),
    templates=("url", "token", "signing_secret", "app_token"),
    reach=SlackReach,
    delivery=start_delivery,
    transports=("feed", "socket"),
    websocket=_websocket,
    webhook=WEBHOOK,
    real_hosts=real_hosts,
    checks=(
        StateKind(BodyKind("slack.message", "slack", check_bodies.SlackMessageStateFile,
                           check_bodies.resolve_message_state, "messages in a channel"),
                  checks.evaluate, checks.MESSAGE_EVENTS, checks.SlackMessageHeld),
    ),
    actions=(
        ActionKind(BodyKind("slack.message", "slack", action_bodies.SlackMessageActionFile,
                            action_bodies.resolve_message_action, "post a message as a user"), actions.post_message),
        ActionKind(BodyKind("slack.reaction", "slack", action_bodies.SlackReactionActionFile,
                            action_bodies.resolve_reaction_action, "react to a message as a user"), actions.add_reaction),
    ),
    judge_view=judge_view,
    render=render,
    secret_patterns=(r"xox[a-z]-[A-Za-z0-9-]+", r"xapp-[A-Za-z0-9-]+",
                     r"/services/T[A-Z0-9]+/B[A-Z0-9]+/[A-Za-z0-9]+"),  # an incoming webhook's URL
    vendor_files=("web_api", "events", "rate_tiers"),
    coverage=COVERAGE,
    agent_accounts=_agent_accounts,
    body_too_large=_body_too_large,
    shared=checkpoint.shared,
)
