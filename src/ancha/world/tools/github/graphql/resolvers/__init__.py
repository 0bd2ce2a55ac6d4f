"""The resolver map's modules; importing this package registers every served field."""

from __future__ import annotations

from ancha.world.tools.github.graphql.resolvers import (
    actors,
    git,
    issues,
    meta,
    mutations,
    pulls,
    repository,
    search,
)

__all__ = ["actors", "git", "issues", "meta", "mutations", "pulls", "repository", "search"]
