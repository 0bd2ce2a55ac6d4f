"""What the agent hears from PagerDuty: v3 webhooks, on the event feed.

Every incident change someone else makes (a person, the world, an escalation, an
integration) becomes the v3 webhook a subscription to every incident event gets, pushed
to the feed as ``{"service": "pagerduty", "type": event_type, "at", "payload": body}``.
The agent's own changes are not delivered back to it.

An endpoint agent gets each webhook as a subscription's HTTP delivery method sends it
(``WEBHOOK``): the body signed in ``X-PagerDuty-Signature`` (``v1=`` and the hex
HMAC-SHA256 of the raw body under the subscription's signing secret), ``X-Webhook-Id``
(the same on every attempt, for de-duplication), ``X-Webhook-Subscription`` and
``User-Agent: PagerDuty-Webhook/V3.0``. PagerDuty expects a 2xx within 5 seconds and
retries a timeout, a failed connection, a 5xx or a 429 up to 4 times (5 attempts) with
exponential backoff over about 20 minutes; any other 4xx drops the webhook
(developer.pagerduty.com, Webhooks: Behavior and Verifying Signatures).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from typing import TYPE_CHECKING, Any

from ancha.world.kernel.bus import DomainEvent
from ancha.world.kernel.tool import Tool
from ancha.world.kernel.webhook import Attempt, WebhookForm
from ancha.world.tools.pagerduty.events import WEBHOOK_TYPES, webhook
from ancha.world.tools.pagerduty.replica import PagerDutyReplica

if TYPE_CHECKING:
    from ancha.world.kernel.port import WorldPort


def signature(secret: str, body: bytes) -> str:
    """``X-PagerDuty-Signature``: ``v1=`` and the body's HMAC-SHA256 under the signing secret."""
    return "v1=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


USER_AGENT = "PagerDuty-Webhook/V3.0"
TIMEOUT_S = 5.0
RETRIES_AFTER_S = (80.0, 160.0, 320.0, 640.0)
"""Four retries, each twice as far as the one before: 20 minutes in all, as PagerDuty's
"exponential backoff over the course of about 20 minutes" (it does not publish the steps)."""


def subscription_id(env_id: str) -> str:
    """The id of the webhook subscription the agent's endpoint stands for (``PXXXXXX``),
    the same for the whole trial."""
    digest = hashlib.sha256(f"{env_id}:webhook_subscription".encode()).digest()
    return "P" + base64.b32encode(digest).decode()[:6]


def webhook_headers(tool: Tool, event: dict[str, Any], body: bytes, attempt: Attempt) -> dict[str, str]:
    """What a v3 webhook subscription sends with one delivery attempt."""
    assert isinstance(tool, PagerDutyReplica)
    return {
        "Content-Type": "application/json",
        "Accept": "application/json",
        "User-Agent": USER_AGENT,
        "X-Webhook-Id": attempt.delivery,
        "X-Webhook-Subscription": subscription_id(tool.world.id),
        "X-PagerDuty-Signature": signature(tool.signing_secret, body),
    }


def _retried(status: int) -> bool:
    """A 5xx or a 429 is tried again; any other answer is final."""
    return status >= 500 or status == 429


WEBHOOK = WebhookForm(webhook_headers, TIMEOUT_S, RETRIES_AFTER_S, retried=_retried)


def start_delivery(replica: PagerDutyReplica, world: WorldPort) -> None:
    """Push every webhook the agent's subscription gets onto the feed (not its own changes)."""

    def deliver(event: DomainEvent) -> None:
        if event.data.get("actor") == "agent":
            return
        body = webhook(replica, event)
        if body is None:
            return
        world.feed.push({"service": "pagerduty", "type": body["event"]["event_type"],
                         "at": world.clock.isoformat(event.at), "payload": body})

    for kind in WEBHOOK_TYPES:
        world.bus.subscribe(kind, deliver)
