"""GitHub's GraphQL API (``POST {github.url}/graphql``) over the REST core's state.

``execute(replica, request, caller)`` answers one request; ``warm()`` starts building
the shared schema in the background. See ``executor.py`` for the order of checks and
``registry.py`` for what is served.
"""

from __future__ import annotations

from ancha.world.tools.github.graphql.executor import execute
from ancha.world.tools.github.graphql.schema import warm

__all__ = ["execute", "warm"]
