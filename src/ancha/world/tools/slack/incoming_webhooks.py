"""Incoming webhooks: ``POST https://hooks.slack.com/services/T.../B.../X...`` posts to one channel.

A scene declares them (``world.slack.incoming_webhooks``); each gets a path of Slack's shape,
``/services/<team>/B<id>/<secret>``, drawn from the world's secrets, so the same seed hands out
the same URL and no other environment's works. The replica serves that path below its base URL
and on ``hooks.slack.com`` (``real_hosts``).

As Slack does: the body is JSON (or a form's ``payload`` field holding it) with ``text``,
``blocks``, ``attachments`` and ``thread_ts``; the message goes to the webhook's channel as its
app, a ``bot_message``; the answer is plain text, ``ok`` with 200, or the error's name with its
status (400 ``invalid_payload``/``no_text``, 404 ``no_service``/``channel_not_found``, 410
``channel_is_archived``).
"""

from __future__ import annotations

import json
import string
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

from ancha.world.kernel.tool import ToolRequest, ToolResponse
from ancha.world.tools.slack.call import Caller
from ancha.world.tools.slack.models import Message, User
from ancha.world.tools.slack.routes.chat import MAX_ATTACHMENTS, MAX_BLOCKS, MAX_TEXT
from ancha.world.tools.slack.scene_file import SlackIncomingWebhookFile
from ancha.world.tools.slack.seed import bot_profile, new_id

if TYPE_CHECKING:
    from ancha.world.tools.slack.replica import SlackReplica

PATH_PREFIX = "/services/"
_TEXT = "text/plain; charset=utf-8"
_ID = string.ascii_uppercase + string.digits
_SECRET = string.ascii_letters + string.digits


@dataclass(frozen=True, slots=True)
class IncomingWebhook:
    ref: str
    path: str
    """``/services/<team>/B<id>/<secret>``: below ``https://hooks.slack.com`` or the replica's URL."""
    channel: str
    """The channel id its posts go to."""
    app: User
    """The bot user its posts are from."""


def create(replica: SlackReplica, declared: list[SlackIncomingWebhookFile]) -> dict[str, IncomingWebhook]:
    """The scene's webhooks by path. Paths come from the world's secrets, drawn after the tokens
    (a scene without webhooks draws none); each named app is a bot user of the workspace."""
    world, state = replica.world, replica.state
    team = state.team["id"]
    apps: dict[str, User] = {}
    hooks: dict[str, IncomingWebhook] = {}
    for hook in declared:
        channel = world.refs[hook.channel].id
        app = replica.bot if hook.app is None else apps.get(hook.app)
        if app is None:
            assert hook.app is not None
            app = User(new_id(world, "U"), team, hook.app, is_bot=True, bot_id=new_id(world, "B"),
                       app_id=new_id(world, "A"), updated=replica.bot.updated, color="757575")
            state.add_user(app)
            apps[hook.app] = app
        keys = world.secrets
        path = f"{PATH_PREFIX}{team}/B{keys.choice(_ID, 10)}/{keys.choice(_SECRET, 24)}"
        world.register_ref(hook.ref, "webhook", "slack", path.split("/")[3])
        hooks[path] = IncomingWebhook(hook.ref, path, channel, app)
    return hooks


def serve(replica: SlackReplica, request: ToolRequest) -> ToolResponse:
    """Post what a webhook's URL was sent to its channel; answer as Slack does, in plain text."""
    hook = replica.webhooks.get(request.path.rstrip("/"))
    if hook is None:
        return _refused(404, "no_service")
    if request.method != "POST":
        return _refused(400, "invalid_payload")
    payload = _payload(request)
    if payload is None:
        return _refused(400, "invalid_payload")
    text = payload.get("text")
    blocks, attachments = payload.get("blocks"), payload.get("attachments")
    if not isinstance(text, str | None) or not isinstance(blocks, list | None) \
            or not isinstance(attachments, list | None) or len(text or "") > MAX_TEXT \
            or len(blocks or ()) > MAX_BLOCKS:
        return _refused(400, "invalid_payload")
    if len(attachments or ()) > MAX_ATTACHMENTS:
        return _refused(400, "too_many_attachments")
    if not text and not blocks and not attachments:
        return _refused(400, "no_text")
    channel = replica.state.channels.get(hook.channel)
    if channel is None:
        return _refused(404, "channel_not_found")
    if channel.is_archived:
        return _refused(410, "channel_is_archived")
    parent = _thread_parent(replica, hook.channel, payload.get("thread_ts"))
    message = replica.new_message(channel, Caller(hook.app.id, "agent", is_bot=True), text or "", parent=parent)
    message.subtype = "bot_message"
    message.bot_profile = bot_profile(hook.app, replica.state.team["id"])
    message.blocks = blocks
    message.attachments = attachments
    replica.post(message, channel, parent)
    return ToolResponse(200, b"ok", _TEXT)


def _payload(request: ToolRequest) -> dict[str, Any] | None:
    """The JSON object sent: the body, or a form's ``payload`` field; None when it is neither."""
    body = request.body
    if "application/x-www-form-urlencoded" in request.headers.get("content-type", ""):
        fields = parse_qs(body.decode("utf-8", "replace"))
        body = fields.get("payload", [""])[0].encode()
    try:
        value = json.loads(body)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _thread_parent(replica: SlackReplica, channel: str, thread_ts: object) -> Message | None:
    """The root of the thread ``thread_ts`` names; None (a top-level post) when there is none."""
    if not isinstance(thread_ts, str) or not thread_ts:
        return None
    parent = replica.state.message(channel, thread_ts.strip())
    if parent is not None and parent.is_reply and parent.thread_ts is not None:
        parent = replica.state.message(channel, parent.thread_ts)
    return parent


def _refused(status: int, error: str) -> ToolResponse:
    return ToolResponse(status, error.encode(), _TEXT, vendor_ok=False)
