"""Slack's Events API wire form: the ``event_callback`` wrapper, the ``url_verification``
handshake and the request signature, shared by every transport that carries Slack events
(the feed, HTTP to an endpoint agent, Socket Mode).

The same ``event_callback`` body reaches the agent whichever way it listens: as the
``payload`` of an event on Ancha's feed, as the JSON Slack POSTs to a Request URL, and as
the ``payload`` of a Socket Mode ``events_api`` envelope. Its fields are those of
``slack_common_event_wrapper_schema.json`` and the ``*Payload.json`` samples.

Slack signs a request to a Request URL with the app's signing secret: the basestring is
``v0:<X-Slack-Request-Timestamp>:<body>`` and ``X-Slack-Signature`` is ``v0=`` and its
hex HMAC-SHA256. The timestamp is the agent's clock's (Unix seconds): the world's when the
agent's clock follows it, else the wall clock's (``WorldPort.agent_now``). Slack's SDKs refuse
a request more than five minutes from their own clock.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ancha.world.kernel.port import WorldPort
    from ancha.world.tools.slack.replica import SlackReplica

__all__ = ["body_bytes", "event_callback", "new_event_id", "signature", "signed_headers",
           "url_verification", "wrap"]


def event_callback(event: dict[str, Any], *, team_id: str, api_app_id: str, bot_user_id: str,
                   event_id: str, event_time: int, token: str = "") -> dict[str, Any]:
    """The outer body Slack POSTs to a Request URL (and wraps in Socket Mode)."""
    return {
        "token": token,
        "team_id": team_id,
        "context_team_id": team_id,
        "context_enterprise_id": None,
        "api_app_id": api_app_id,
        "event": event,
        "type": "event_callback",
        "event_id": event_id,
        "event_time": event_time,
        "authorizations": [{"enterprise_id": None, "team_id": team_id, "user_id": bot_user_id,
                            "is_bot": True, "is_enterprise_install": False}],
        "authed_users": [bot_user_id],
        "is_ext_shared_channel": False,
        "event_context": f"4-{event_id}",
    }


def new_event_id(world: WorldPort) -> str:
    """An ``Ev...`` id from the trial's RNG (the same behaviour gives the same ids)."""
    return "Ev" + world.random_hex(10).upper()


def wrap(replica: SlackReplica, inner: dict[str, Any], at: float, token: str = "") -> dict[str, Any]:
    """``inner`` (an event that happened at simulated ``at``) as this world's app receives it:
    a fresh ``event_id`` from the trial's RNG, ``event_time`` in Unix seconds, the bot's
    ``authorizations``."""
    bot = replica.bot
    return event_callback(inner, team_id=replica.state.team["id"], api_app_id=bot.app_id or "", bot_user_id=bot.id,
                          event_id=new_event_id(replica.world), event_time=int(at), token=token)


def url_verification(challenge: str, token: str = "") -> dict[str, Any]:
    """The body of the handshake Slack POSTs to a new Request URL; the app answers 2xx with
    the ``challenge`` (as text, or as ``{"challenge": ...}`` JSON)."""
    return {"token": token, "challenge": challenge, "type": "url_verification"}


def signature(secret: str, timestamp: int, body: bytes) -> str:
    """``X-Slack-Signature`` of ``body`` sent at ``timestamp``: ``v0=`` + hex HMAC-SHA256."""
    base = b"v0:" + str(timestamp).encode() + b":" + body
    return "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


def signed_headers(secret: str, timestamp: int, body: bytes) -> dict[str, str]:
    """The headers of one signed POST to a Request URL (retry headers are added per attempt)."""
    return {
        "Content-Type": "application/json",
        "User-Agent": "Slackbot 1.0 (+https://api.slack.com/robots)",
        "X-Slack-Request-Timestamp": str(timestamp),
        "X-Slack-Signature": signature(secret, timestamp, body),
    }


def body_bytes(payload: dict[str, Any]) -> bytes:
    """The exact bytes that are signed and sent."""
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()
