"""GitHub's real hostnames (``agent.hostnames: real``): where each of GitHub's hosts leads on the replica.

An agent given real hostnames calls ``https://api.github.com`` and follows the URLs GitHub
hands out onto its other hosts. Each host's path becomes the path the replica serves the
same thing at on its own base (``web.py``, ``routes/raw_files.py``), and every host hands
the replica GitHub's API base, so that the URLs it answers with name GitHub's hosts in turn
(``models.wire``):

=================================  ==========================================  =====================================
host                               GitHub's path                               the replica's path
=================================  ==========================================  =====================================
api.github.com                     ``/repos/o/r``, ``/graphql``                the same
github.com                         ``/o/r/pull/5``, ``/o/r.git/info/refs``     the same
uploads.github.com                 ``/repos/o/r/releases/1/assets``            the same
raw.githubusercontent.com          ``/o/r/{ref}/{path}``                       ``/raw/o/r/{ref}/{path}``
codeload.github.com                ``/o/r/legacy.tar.gz/{ref}``, ``/zip/..``   ``/o/r/archive/{ref}.tar.gz``, ``.zip``
avatars.githubusercontent.com      ``/u/{id}``                                 ``/avatars/u/{id}``
github.githubassets.com            ``/images/icons/emoji/unicode/{x}.png``     the same
=================================  ==========================================  =====================================
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlsplit

from ancha.world.kernel.hostnames import HostRoute
from ancha.world.tools.github.models.wire import (
    API,
    ASSETS,
    AVATAR_PATH,
    AVATARS,
    CODELOAD,
    HTML,
    RAW,
    RAW_PATH,
    UPLOADS,
)
from ancha.world.tools.github.replica import GitHubReplica

_ARCHIVE_EXT = {"legacy.tar.gz": ".tar.gz", "tar.gz": ".tar.gz", "legacy.zip": ".zip", "zip": ".zip"}
"""Codeload's archive kinds (the third segment of its paths) and the replica's archive extension."""


def raw_path(path: str) -> str:
    """``raw.githubusercontent.com/{o}/{r}/{ref}/{path}`` on the replica (``routes/raw_files.py``)."""
    return RAW_PATH.rstrip("/") + path


def codeload_path(path: str) -> str:
    """``codeload.github.com/{o}/{r}/{kind}/{ref}`` on the replica (``web.py``'s archives).
    A path of another shape stays as it is (the replica answers GitHub's 404)."""
    parts = path.split("/", 4)  # '', owner, repo, kind, ref
    if len(parts) < 5 or parts[3] not in _ARCHIVE_EXT or not parts[4]:
        return path
    _, owner, repo, kind, ref = parts
    return f"/{owner}/{repo}/archive/{ref}{_ARCHIVE_EXT[kind]}"


def avatar_path(path: str) -> str:
    """``avatars.githubusercontent.com/u/{id}`` on the replica (``web.py``'s avatars)."""
    return AVATAR_PATH.removesuffix("/u/") + path


def real_hosts(replica: GitHubReplica) -> Mapping[str, HostRoute]:
    """GitHub's hosts, each leading to the replica with GitHub's API base (the same for every scene)."""
    return HOSTS


def _host(url: str) -> str:
    return urlsplit(url).netloc


HOSTS: Mapping[str, HostRoute] = {
    _host(API): HostRoute(API),
    _host(HTML): HostRoute(API),
    _host(UPLOADS): HostRoute(API),
    _host(RAW): HostRoute(API, raw_path),
    _host(CODELOAD): HostRoute(API, codeload_path),
    _host(AVATARS): HostRoute(API, avatar_path),
    _host(ASSETS): HostRoute(API),
}
