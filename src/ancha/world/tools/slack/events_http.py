"""Slack's Events API over HTTP: how Slack POSTs events to an endpoint agent's Request URL.

Each event's ``event_callback`` body is signed with the app's signing secret
(``X-Slack-Signature`` v0, ``X-Slack-Request-Timestamp``: see ``event_callback.py``). The
app must answer 2xx within 3 seconds; Slack retries a failed delivery three times,
nearly at once, after a minute and after five minutes (simulated time here), each retry
with ``X-Slack-Retry-Num`` (1, 2, 3) and ``X-Slack-Retry-Reason`` (``http_timeout``,
``http_error``, ``connection_failed``); an answer carrying ``X-Slack-No-Retry: 1`` stops
the retries. Before any event, the Request URL must pass ``url_verification``: it answers
2xx with the ``challenge`` it was sent.
"""

from __future__ import annotations

from typing import Any

from ancha.world.kernel.tool import Tool
from ancha.world.kernel.webhook import Attempt, Handshake, WebhookForm
from ancha.world.tools.slack.event_callback import signed_headers, url_verification
from ancha.world.tools.slack.replica import SlackReplica

ACK_DEADLINE_S = 3.0
RETRIES_AFTER_S = (0.0, 60.0, 300.0)


def _secret(tool: Tool) -> str:
    assert isinstance(tool, SlackReplica)
    return tool.signing_secret


def request_headers(tool: Tool, event: dict[str, Any], body: bytes, attempt: Attempt) -> dict[str, str]:
    """One attempt's headers, signed at the agent's clock's time (Slack's SDKs check it against
    their own: the world's when the agent's clock follows it, else the wall clock's)."""
    assert isinstance(tool, SlackReplica)
    headers = signed_headers(_secret(tool), int(tool.world.agent_now()), body)
    if attempt.number:
        headers["X-Slack-Retry-Num"] = str(attempt.number)
        headers["X-Slack-Retry-Reason"] = attempt.reason or "unknown_error"
    return headers


def handshake(tool: Tool) -> Handshake:
    assert isinstance(tool, SlackReplica)
    challenge = tool.world.random_hex(48)
    return Handshake(url_verification(challenge), challenge, "challenge", "Slack URL verification")


WEBHOOK = WebhookForm(request_headers, ACK_DEADLINE_S, RETRIES_AFTER_S, "X-Slack-No-Retry", handshake)
