"""Okta's own hostname for the scene's org (``agent.hostnames: real``), and the org's name.

An Okta org lives on its own subdomain, ``https://<org>.okta.com``, where the Management
API is ``/api/v1/...`` as on the replica. The org comes from the scene (``world.okta.org``);
without one, it is named for the company the users' logins belong to.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import TYPE_CHECKING

from ancha.world.kernel.hostnames import HostRoute

if TYPE_CHECKING:
    from ancha.world.tools.okta.replica import OktaReplica
    from ancha.world.tools.okta.scene_file import OktaFile

DEFAULT_ORG = "acme"
"""The org when the scene names none and its logins suggest none."""
_LABEL = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?")


def org_of(seed: OktaFile) -> str:
    """The org's subdomain: ``world.okta.org``, else the first label of the users' most common
    login domain (``dana@acme.com``: ``acme``) when that is a DNS label, else ``acme``."""
    if seed.org:
        return seed.org
    domains = Counter(user.login.rpartition("@")[2].lower() for user in seed.users if "@" in user.login)
    for domain, _ in domains.most_common(1):
        label = domain.split(".", 1)[0]
        if _LABEL.fullmatch(label):
            return label
    return DEFAULT_ORG


def org_base(org: str) -> str:
    """The replica's base URL at Okta: the org's own host."""
    return f"https://{org}.okta.com"


def real_hosts(replica: OktaReplica) -> dict[str, HostRoute]:
    """The org's host, leading to the same paths on the replica."""
    return {f"{replica.org}.okta.com": HostRoute(org_base(replica.org))}
