"""Slack's Events API wire form, shared by every transport that carries Slack events (the
feed, HTTP to an endpoint agent, Socket Mode): the ``event_callback`` wrapper, the
``url_verification`` handshake and the request signature.

Slack signs a request to a Request URL with the app's signing secret: the basestring is
``v0:<X-Slack-Request-Timestamp>:<body>`` and ``X-Slack-Signature`` is ``v0=`` and its
hex HMAC-SHA256. The timestamp is the wall clock's (Unix seconds), never the trial's
simulated time: Slack's SDKs refuse a request more than five minutes from their own clock.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ancha.world.tools.slack.replica import SlackReplica

USER_AGENT = "Slackbot 1.0 (+https://api.slack.com/robots)"


def event_callback(event: dict[str, Any], *, team_id: str, api_app_id: str, bot_user_id: str,
                   event_id: str, event_time: int, token: str = "") -> dict[str, Any]:
    """The outer envelope Slack POSTs to a Request URL (and wraps in Socket Mode).
    ``authed_users`` is required by Slack's wrapper schema; ``authorizations`` is what Slack
    sends today in its place (the installation the event is visible to)."""
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
        "authed_users": [bot_user_id],
        "authorizations": [{"enterprise_id": None, "team_id": team_id, "user_id": bot_user_id,
                            "is_bot": True, "is_enterprise_install": False}],
        "is_ext_shared_channel": False,
        "event_context": f"4-{event_id}",
    }


def wrap(replica: SlackReplica, inner: dict[str, Any], at: float) -> dict[str, Any]:
    """``inner`` (an event that happened at simulated ``at``) as this world's app receives it:
    a fresh ``event_id`` from the trial's RNG, ``event_time`` in Unix seconds, the bot's
    ``authorizations``."""
    bot = replica.bot
    return event_callback(inner, team_id=replica.state.team["id"], api_app_id=bot.app_id or "", bot_user_id=bot.id,
                          event_id="Ev" + replica.env.random_hex(10).upper(), event_time=int(at))


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
        "User-Agent": USER_AGENT,
        "X-Slack-Request-Timestamp": str(timestamp),
        "X-Slack-Signature": signature(secret, timestamp, body),
    }
