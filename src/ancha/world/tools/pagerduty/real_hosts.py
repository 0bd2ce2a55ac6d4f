"""PagerDuty's own hostnames (``agent.hostnames: real``): the REST API and the Events API.

``api.pagerduty.com`` is the REST API; ``events.pagerduty.com`` takes Events API v2 calls
(``/v2/enqueue``, ``/v2/change/enqueue``), which the replica serves at those same paths
beside the REST API. Both hand back the REST API's base URL: every ``self`` and
``html_url`` (the replica's ``html_url`` is the record's REST address, since it has no web
app) and each avatar is on ``api.pagerduty.com``, and leads back there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ancha.world.kernel.hostnames import HostRoute

if TYPE_CHECKING:
    from ancha.world.tools.pagerduty.replica import PagerDutyReplica

VENDOR_BASE = "https://api.pagerduty.com"
"""The REST API at PagerDuty: the replica's base URL through real hostnames."""


def real_hosts(replica: PagerDutyReplica) -> dict[str, HostRoute]:
    """The REST and Events API hosts, both leading to the same paths on the replica."""
    route = HostRoute(VENDOR_BASE)
    return {"api.pagerduty.com": route, "events.pagerduty.com": route}
