"""What the agent hears from PagerDuty: v3 webhooks, on the event feed.

Every incident change someone else makes (a person, the world, an escalation, an
integration) becomes the v3 webhook a subscription to every incident event gets, pushed
to the feed as ``{"service": "pagerduty", "type": event_type, "at", "payload": body}``.
The agent's own changes are not delivered back to it. ``signature`` gives PagerDuty's
``X-PagerDuty-Signature`` for an endpoint agent's POST.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import TYPE_CHECKING

from ancha.world.bus import DomainEvent
from ancha.world.tools.base import Tool
from ancha.world.tools.pagerduty.events import WEBHOOK_TYPES, webhook

if TYPE_CHECKING:
    from ancha.world.environment import Environment
    from ancha.world.tools.pagerduty.replica import PagerDutyReplica


def signature(secret: str, body: bytes) -> str:
    """``X-PagerDuty-Signature``: ``v1=`` and the body's HMAC-SHA256 under the signing secret."""
    return "v1=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def start_delivery(env: Environment, tool: Tool) -> None:
    replica: PagerDutyReplica = tool  # type: ignore[assignment]

    def deliver(event: DomainEvent) -> None:
        if event.data.get("actor") == "agent":
            return
        body = webhook(replica, event)
        if body is None:
            return
        env.feed.push({"service": "pagerduty", "type": body["event"]["event_type"],
                       "at": env.clock.isoformat(event.at), "payload": body})

    for kind in WEBHOOK_TYPES:
        env.bus.subscribe(kind, deliver)
