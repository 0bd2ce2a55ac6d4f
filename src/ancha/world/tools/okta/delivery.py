"""What the agent hears from Okta: its event hooks' calls, on the event feed.

Okta tells nobody anything until an event hook asks for it: every System Log entry whose
``eventType`` an ``ACTIVE`` and ``VERIFIED`` hook subscribes to becomes one event hook
call per such hook, in Okta's delivery shape (``eventType: com.okta.event_hook``,
``eventTypeVersion``, ``cloudEventsVersion``, ``source`` (the hook), ``eventId``,
``eventTime``, ``contentType`` and ``data.events[]`` holding the LogEvent). Each is pushed
to the feed as ``{"service": "okta", "type": <the LogEvent's eventType>, "at", "hook":
<the hook's id>, "payload": body}``. As with every tool here, the agent's own changes
are not delivered back to it (they are in the System Log).

An endpoint agent gets each call as Okta POSTs it (``WEBHOOK``) to ``agent.url``: JSON,
with the hook's extra ``headers`` and its ``authScheme`` header (``key: value``). Okta
gives the service 3 seconds and retries once after a timeout or a 5xx; any other answer
is final (developer.okta.com, Event hooks).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ancha.world.kernel.tool import Tool
from ancha.world.kernel.webhook import Attempt, WebhookForm
from ancha.world.tools.okta.models import okta_time
from ancha.world.tools.okta.replica import OktaReplica
from ancha.world.tools.okta.system_log import LogEntry

if TYPE_CHECKING:
    from ancha.world.kernel.port import WorldPort

EVENT_TYPE = "com.okta.event_hook"
EVENT_TYPE_VERSION = "1.0"
CLOUD_EVENTS_VERSION = "0.1"
TIMEOUT_S = 3.0
RETRIES_AFTER_S = (0.0,)
"""One retry, at once."""
USER_AGENT = "Okta Event Hooks"


def call_body(replica: OktaReplica, hook_id: str, entry: LogEntry) -> dict[str, Any]:
    """The body Okta POSTs to a hook for one System Log entry."""
    return {
        "eventType": EVENT_TYPE,
        "eventTypeVersion": EVENT_TYPE_VERSION,
        "cloudEventsVersion": CLOUD_EVENTS_VERSION,
        "source": f"{replica.base_url}/api/v1/eventHooks/{hook_id}",
        "eventId": replica.log.new_uuid(),
        "data": {"events": [entry.body]},
        "eventTime": okta_time(entry.at),
        "contentType": "application/json",
    }


def webhook_headers(tool: Tool, event: dict[str, Any], body: bytes, attempt: Attempt) -> dict[str, str]:
    """What Okta sends with one call: JSON, and the hook's own headers and auth header."""
    assert isinstance(tool, OktaReplica)
    headers = {"Content-Type": "application/json", "Accept": "application/json", "User-Agent": USER_AGENT}
    hook = tool.hooks.get(str(event.get("hook", "")))
    if hook is not None:
        headers.update(hook.channel.request_headers())
    return headers


def _retried(status: int) -> bool:
    return status >= 500


WEBHOOK = WebhookForm(webhook_headers, TIMEOUT_S, RETRIES_AFTER_S, retried=_retried)


def start_delivery(replica: OktaReplica, world: WorldPort) -> None:
    """Push every event hook call onto the feed (not the agent's own changes)."""

    def deliver(entry: LogEntry) -> None:
        if entry.by == "agent":
            return
        for hook in sorted(replica.hooks.values(), key=lambda h: h.id):
            if hook.receives and entry.event_type in hook.items:
                world.feed.push(
                    {
                        "service": "okta",
                        "type": entry.event_type,
                        "at": world.clock.isoformat(entry.at),
                        "hook": hook.id,
                        "payload": call_body(replica, hook.id, entry),
                    }
                )

    replica.log.subscribe(deliver)
