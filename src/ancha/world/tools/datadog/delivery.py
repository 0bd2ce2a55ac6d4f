"""What the agent hears from Datadog: monitor notifications, on the event feed.

Every monitor state change that is not silenced by an active downtime is pushed as
``{"service": "datadog", "type": <type>, "at", "payload"}``, where type is
``monitor.alert`` (to Alert), ``monitor.warn``, ``monitor.no_data`` or
``monitor.recovered`` (to OK), and the payload is the body Datadog's webhook integration
sends with its default payload (``id``, ``last_updated``, ``event_type``, ``title``,
``date``, ``org``, ``body``) plus ``alert_transition`` (Triggered, Warn, No Data,
Recovered), ``alert_id``, ``alert_status``, ``alert_title``, ``alert_scope``, ``link``,
``priority`` and ``tags``.

An endpoint agent gets each notification as the Webhooks integration POSTs it to a
webhook's URL (``WEBHOOK``): that body as JSON, with the webhook's custom headers. Datadog
signs nothing; a webhook authenticates by what its custom headers (or basic auth) carry.
Ancha's webhook carries ``Authorization: Bearer`` and the ``webhook_token`` credential
(``{{datadog.webhook_token}}``). Datadog gives a request 15 seconds, retries it when the
endpoint answers 5xx and retries a missed connection 5 times; any other answer is final
(docs.datadoghq.com, Webhooks integration).
"""

from __future__ import annotations

from typing import Any

from ancha.world.kernel.bus import DomainEvent
from ancha.world.kernel.port import WorldPort
from ancha.world.kernel.tool import Tool
from ancha.world.kernel.webhook import Attempt, WebhookForm
from ancha.world.tools.datadog.monitors import ORG_ID, Monitor
from ancha.world.tools.datadog.replica import DatadogReplica

FEED_TYPES = {
    "Alert": "monitor.alert",
    "Warn": "monitor.warn",
    "No Data": "monitor.no_data",
    "OK": "monitor.recovered",
}
TRANSITIONS = {"Alert": "Triggered", "Warn": "Warn", "No Data": "No Data", "OK": "Recovered"}
ORG_NAME = "Acme"


def webhook_payload(
    monitor: Monitor, event_id: int, before: str, after: str, at: float, base: str
) -> dict[str, Any]:
    """Datadog's webhook notification body for one transition of ``monitor``; ``link`` is the
    transition's event on the replica (``base``: its base URL), never Datadog's own site."""
    transition = TRANSITIONS[after]
    if after == "Alert" and before == "Alert":
        transition = "Re-Triggered"
    parsed = monitor.parsed
    scope = ",".join(parsed.metric.scope) if parsed and parsed.metric.scope else "*"
    title = f"[{transition}] {monitor.name}"
    status = (
        f"{parsed.metric.name} over {scope} crossed {parsed.op} {parsed.threshold:g} on "
        f"{parsed.aggregation} during the last {int(parsed.window // 60)}m."
        if parsed
        else f"{monitor.name} is {after}"
    )
    ms = str(int(at * 1000))
    return {
        "id": str(event_id),
        "last_updated": ms,
        "event_type": f"{monitor.type.replace(' ', '_')}_monitor",
        "title": title,
        "date": ms,
        "org": {"id": str(ORG_ID), "name": ORG_NAME},
        "body": monitor.message,
        "alert_transition": transition,
        "alert_id": str(monitor.id),
        "alert_status": status,
        "alert_title": f"{monitor.name}",
        "alert_scope": scope,
        "alert_query": monitor.query,
        "alert_type": {"Alert": "error", "Warn": "warning", "No Data": "warning", "OK": "success"}[after],
        "link": f"{base}/api/v1/events/{event_id}",
        "priority": "normal",
        "alert_priority": f"P{monitor.priority}" if monitor.priority else None,
        "tags": ",".join(monitor.tags),
    }


class DatadogDelivery:
    service = "datadog"

    def __init__(self, world: WorldPort, replica: DatadogReplica) -> None:
        self.world = world
        self.replica = replica
        world.bus.subscribe("monitor_state_changed", self._on_change)

    def _on_change(self, event: DomainEvent) -> None:
        data = event.data
        if not data.get("notify"):
            return
        monitor = self.replica.state.monitors.get(data["monitor"])
        if monitor is None:
            return
        payload = webhook_payload(
            monitor, data["event"], data["from"], data["to"], event.at, self.replica.base_url
        )
        self.world.feed.push(
            {
                "service": self.service,
                "type": FEED_TYPES[data["to"]],
                "at": self.world.clock.isoformat(event.at),
                "payload": payload,
            }
        )


TIMEOUT_S = 15.0
RETRIES_AFTER_S = (10.0, 20.0, 40.0, 80.0, 160.0)
"""Five retries; Datadog does not publish their spacing, so each waits twice the one before."""


def webhook_headers(tool: Tool, event: dict[str, Any], body: bytes, attempt: Attempt) -> dict[str, str]:
    """The custom headers of the webhook the agent's endpoint stands for (JSON, the token)."""
    assert isinstance(tool, DatadogReplica)
    return {"Content-Type": "application/json", "Authorization": f"Bearer {tool.webhook_token}"}


def _retried(status: int) -> bool:
    """Only a 5xx is tried again."""
    return status >= 500


WEBHOOK = WebhookForm(webhook_headers, TIMEOUT_S, RETRIES_AFTER_S, retried=_retried)


def start_delivery(replica: DatadogReplica, world: WorldPort) -> None:
    """Subscribe the agent's event feed to this world's Datadog monitors."""
    DatadogDelivery(world, replica)
