"""Datadog's own hostnames (``agent.hostnames: real``): every site's API and intake hosts.

The official client picks its hosts from a site (``DD_SITE``, ``Configuration``'s ``site``
server variable): ``api.<site>`` for most calls, and for a few operations an intake host
of the same site (``http-intake.logs.<site>`` for logs, ``event-management-intake.<site>``
for v2 events). Every path is the replica's own. The base URL handed back is the site's
API host, so that the links in an answer (logs' and events' next pages, an event's ``url``)
stay on the site the agent chose.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ancha.world.kernel.hostnames import HostRoute

if TYPE_CHECKING:
    from ancha.world.tools.datadog.replica import DatadogReplica

SITES = (
    "datadoghq.com", "us3.datadoghq.com", "us5.datadoghq.com", "ap1.datadoghq.com", "ap2.datadoghq.com",
    "uk1.datadoghq.com", "datadoghq.eu", "ddog-gov.com", "us2.ddog-gov.com",
)
"""Every site ``datadog_api_client.Configuration`` can be set to (its ``site`` server variable)."""
INTAKES = ("http-intake.logs", "event-management-intake")
"""The subdomains the client sends some operations to instead of ``api`` (its operation servers)."""


def site_base(site: str) -> str:
    """The replica's base URL at Datadog for one site: its API host."""
    return f"https://api.{site}"


def real_hosts(replica: DatadogReplica) -> dict[str, HostRoute]:
    """Each site's API and intake hosts, leading to the same paths on the replica."""
    hosts: dict[str, HostRoute] = {}
    for site in SITES:
        route = HostRoute(site_base(site))
        hosts[f"api.{site}"] = route
        for intake in INTAKES:
            hosts[f"{intake}.{site}"] = route
    return hosts
