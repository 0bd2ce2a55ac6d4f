"""Slack's Events API wire form: the ``event_callback`` envelope, the ``url_verification``
handshake and the request signature, shared by every transport that carries Slack events
(the feed, HTTP to an endpoint agent, Socket Mode).

Slack signs a request to a Request URL with the app's signing secret: the basestring is
``v0:<X-Slack-Request-Timestamp>:<body>`` and ``X-Slack-Signature`` is ``v0=`` and its
hex HMAC-SHA256. The timestamp is the wall clock's (Unix seconds), never the trial's
simulated time: Slack's SDKs refuse a request more than five minutes from their own clock.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import TYPE_CHECKING, Any

from ancha.world.tools.slack.events import event_callback

if TYPE_CHECKING:
    from ancha.world.environment import Environment
    from ancha.world.tools.slack.replica import SlackReplica

__all__ = ["envelope", "event_callback", "signature", "signed_headers", "url_verification"]


def envelope(env: Environment, replica: SlackReplica, inner: dict[str, Any], at: float) -> dict[str, Any]:
    """The ``event_callback`` Slack sends this world's app for ``inner`` (an event that
    happened at simulated ``at``): a fresh ``event_id`` from the trial's RNG, ``event_time``
    in Unix seconds and the bot's ``authorizations``."""
    bot = replica.bot
    return event_callback(inner, team_id=replica.state.team["id"], api_app_id=bot.app_id or "", bot_user_id=bot.id,
                          event_id="Ev" + env.random_hex(10).upper(), event_time=int(at))


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
