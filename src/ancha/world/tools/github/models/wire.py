"""What every wire shape shares: timestamps, node ids, ids, the web host.

API URLs (``url``, ``*_url`` pointing at the REST API) are built on the replica's own
base URL so that SDKs following them (PyGithub completes objects through ``url``) stay
inside the replica; ``html_url`` keeps ``https://github.com`` as people see it.
"""

from __future__ import annotations

import base64
from datetime import UTC, datetime
from typing import Any

HTML = "https://github.com"
AVATARS = "https://avatars.githubusercontent.com"

JSONDict = dict[str, Any]


def iso(t: float | None) -> str | None:
    """GitHub's timestamp: whole seconds, UTC, ``Z``."""
    if t is None:
        return None
    return datetime.fromtimestamp(int(t), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def node_id(kind: str, number: int) -> str:
    """A legacy global node id (``MDQ6VXNlcjE=`` is ``04:User1``), stable for a kind and id."""
    return base64.b64encode(f"{len(kind):02d}:{kind}{number}".encode()).decode()


class Ids:
    """Integer ids per kind: deterministic, counting up from a base drawn once per trial."""

    def __init__(self, seed_hex: str) -> None:
        self._base = 1_000_000 + int(seed_hex, 16) % 9_000_000
        self._next: dict[str, int] = {}

    def next(self, kind: str) -> int:
        value = self._next.get(kind, self._base * _SCALE.get(kind, 10))
        self._next[kind] = value + 1
        return value


# Realistic magnitudes: repositories in the hundreds of millions, comments in the billions.
_SCALE = {"user": 1, "org": 1, "team": 1, "repo": 100, "issue": 1000, "comment": 2000, "label": 1000,
          "milestone": 10, "event": 10000, "pull": 1000, "review": 2000, "review_comment": 1000,
          "deployment": 200, "deployment_status": 400, "status": 5000, "check_run": 5000,
          "check_suite": 2000, "release": 100}
