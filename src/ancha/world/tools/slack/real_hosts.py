"""Slack's own hostnames (``agent.hostnames: real``), and the addresses the replica hands out.

Slack spreads one workspace over several hosts: the Web API on ``slack.com/api/...``, file
bytes and upload URLs on ``files.slack.com``, public file links on ``slack-files.com``,
permalinks and the workspace's home on ``<domain>.slack.com``, Socket Mode on
``wss-primary.slack.com``, incoming webhooks on ``hooks.slack.com``, and pictures on
``a.slack-edge.com`` and Gravatar. Reached under
its Ancha address, the replica serves all of them below its one base URL; reached through
Slack's own hosts, it hands each link out on the host Slack would, and ``real_hosts`` leads
every one of those hosts back to the path the replica serves it at.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ancha.world.kernel.hostnames import HostRoute
from ancha.world.tools.slack.image_links import SLACK_EDGE

if TYPE_CHECKING:
    from ancha.world.tools.slack.replica import SlackReplica

VENDOR_BASE = "https://slack.com"
"""The tool's base URL at Slack: Web API methods are ``/api/<method>`` below it, as on the replica."""
FILES = "https://files.slack.com"
"""``url_private`` (``/files-pri/<team>-<file>/<name>``) and upload URLs (``/upload/v1/<ticket>``)."""
PUBLIC_FILES = "https://slack-files.com"
"""``permalink_public``: ``/<team>-<file>-<secret>``, which the replica serves at ``/files-pub/...``."""
SOCKET_MODE = "wss://wss-primary.slack.com"
"""Where ``apps.connections.open`` sends an app: ``/link/?ticket=...&app_id=...``."""
HOOKS = "hooks.slack.com"
"""Incoming webhooks (``/services/T/B/X``): served at the same path below the replica's URL
(``incoming_webhooks.py``)."""


@dataclass(frozen=True, slots=True)
class SlackAddresses:
    """Where the links the replica hands out point, for the base URL its caller reached it at."""

    files: str
    """Prefix of ``url_private`` and the upload URL."""
    public_files: str
    """Prefix of ``permalink_public`` (``<team>-<file>-<secret>`` follows)."""
    workspace: str
    """The workspace's web address: permalinks, ``auth.test``'s ``url``, the sign-in redirect."""
    images: str
    """The folder of Slack's own images (icons; ``team.info``'s ``avatar_base_url``)."""
    images_on_replica: bool
    """Whether the vendor's image URLs in an answer move onto the replica (``image_links``)."""
    socket_mode: str
    """Prefix of Socket Mode URLs (``/link/?ticket=...`` follows)."""

    @classmethod
    def of(cls, base: str, domain: str) -> SlackAddresses:
        """The addresses for ``base``: Slack's hosts when it is Slack's own, else all below ``base``."""
        if base == VENDOR_BASE:
            return cls(FILES, PUBLIC_FILES, f"https://{domain}.slack.com", SLACK_EDGE, False, SOCKET_MODE)
        scheme, rest = base.split("://", 1)
        socket = f"{'wss' if scheme == 'https' else 'ws'}://{rest}"
        return cls(base, f"{base}/files-pub", base, f"{base}/img/", True, socket)


def real_hosts(replica: SlackReplica) -> dict[str, HostRoute]:
    """Slack's hosts for this workspace, each leading to where the replica serves its paths."""
    same = HostRoute(VENDOR_BASE)
    hosts = {f"{replica.state.team['domain']}.slack.com": same}  # first: Slack's own hosts win a clash
    hosts.update({
        "slack.com": same,
        "files.slack.com": same,
        "slack-files.com": HostRoute(VENDOR_BASE, public_file_path),
        HOOKS: same,
        "wss-primary.slack.com": same,
        "a.slack-edge.com": HostRoute(VENDOR_BASE, edge_image_path),
        "secure.gravatar.com": HostRoute(VENDOR_BASE, gravatar_path),
    })
    return hosts


def public_file_path(path: str) -> str:
    """``slack-files.com/T-F-secret`` is the replica's ``/files-pub/T-F-secret``."""
    return "/files-pub" + path


def edge_image_path(path: str) -> str:
    """``a.slack-edge.com/80588/img/x.png`` is the replica's ``/img/x.png`` (the build number dropped)."""
    at = path.find("/img/")
    return path[at:] if at >= 0 else path


def gravatar_path(path: str) -> str:
    """``secure.gravatar.com/avatar/x.jpg`` is the replica's ``/img/avatars/x.jpg``."""
    return "/img/avatars/" + path.removeprefix("/avatar/") if path.startswith("/avatar/") else path
