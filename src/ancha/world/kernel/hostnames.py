"""A tool's real hostnames (``agent.hostnames: real``): where the vendor's hosts lead on its replica.

With real hostnames the agent calls ``https://api.github.com/...`` and the server's interceptor
(``ancha.server.interceptor``) hands the request to the tool whose ``ToolSpec.real_hosts``
names that host, at the path ``HostRoute.path`` makes of the host's own path. The request
carries ``REAL_BASE``: the tool's base URL at the vendor (``https://api.github.com``), which
the replica then uses for every URL it hands out (``base_url``) instead of its address on the
Ancha server, so that self links, ``html_url`` and upload URLs name the vendor's hosts too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ancha.world.kernel.tool import ToolRequest

REAL_BASE = "x-ancha-real-base"
"""The header the interceptor sets on a request that reached a tool through a vendor hostname:
the tool's real base URL (no trailing slash). The gateway drops it from any other request."""
REAL_HOST = "x-ancha-real-host"
"""The header naming the vendor hostname the agent used (``uploads.github.com``), for the trace."""


@dataclass(frozen=True, slots=True)
class HostRoute:
    """Where one vendor hostname leads on its tool."""

    base: str
    """The tool's base URL at the vendor, as the replica hands it out with this host
    (``https://api.github.com``; Datadog's depends on the site the agent chose)."""
    path: Callable[[str], str] | None = None
    """The tool's path for the host's path (both start with ``/``, no query): GitHub's
    ``raw.githubusercontent.com/o/r/main/a.txt`` is ``/raw/o/r/main/a.txt`` on the replica.
    None: the same path."""

    def tool_path(self, path: str) -> str:
        return self.path(path) if self.path is not None else path


def base_url(request: ToolRequest, world_id: str, tool: str) -> str | None:
    """The tool's base URL as the caller reached it: the vendor's (``REAL_BASE``) when the
    request came through a real hostname, else ``{scheme}://{host}/envs/{world}/{tool}``;
    None when the request names no host (a world actor's call)."""
    headers = request.headers
    real = headers.get(REAL_BASE)
    if real:
        return real
    host = headers.get("host")
    if not host:
        return None
    return f"{headers.get('x-forwarded-proto', 'http')}://{host}/envs/{world_id}/{tool}"


def is_real(base: str | None, vendor_base: str) -> bool:
    """Whether ``base`` (a replica's current base URL) is the vendor's own (``vendor_base``)."""
    return base == vendor_base
