"""``Query.rateLimit``: GitHub's GraphQL budget of 5,000 points an hour.

A query costs what GitHub's formula says (``limits.Cost.points``: connection pages / 100,
at least 1), and ``nodeCount`` is its node count. Points are counted per replica and per
viewer from the first query of the hour, as GitHub's primary limit counts them; the
replica never refuses a query for it.
"""

from __future__ import annotations

import threading
import weakref
from datetime import UTC, datetime
from typing import Any

from graphql import GraphQLResolveInfo

from ancha.world.tools.github.graphql.context import Context, ctx
from ancha.world.tools.github.graphql.registry import plain, resolver

LIMIT = 5000
WINDOW = 3600.0

_lock = threading.Lock()
_spent: weakref.WeakKeyDictionary[Any, dict[str, tuple[float, int]]] = weakref.WeakKeyDictionary()


def _now(context: Context) -> float:
    clock = getattr(getattr(context.replica, "world", None), "clock", None)
    return float(clock.now()) if clock is not None else datetime.now(UTC).timestamp()


def spend(context: Context, points: int = 1) -> tuple[float, int]:
    """Count one query for the viewer; (window start, points used in it)."""
    now = _now(context)
    with _lock:
        buckets = _spent.setdefault(context.replica, {})
        start, used = buckets.get(context.viewer.key, (now, 0))
        if now - start >= WINDOW:
            start, used = now, 0
        buckets[context.viewer.key] = (start, used + points)
        return start, used + points


@resolver("Query.rateLimit", args=("dryRun",))
def rate_limit(_: Any, info: GraphQLResolveInfo, dryRun: bool = False) -> dict[str, Any]:  # noqa: N803
    context = ctx(info)
    priced = context.cost
    points = priced.points if priced is not None else 1
    start, used = spend(context, 0)  # the executor counted this query already
    reset = datetime.fromtimestamp(int(start + WINDOW), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"cost": points, "limit": LIMIT, "nodeCount": priced.nodes if priced is not None else 0,
            "remaining": max(LIMIT - used, 0), "used": used, "resetAt": reset}


plain("RateLimit", cost="cost", limit="limit", nodeCount="nodeCount", remaining="remaining", used="used",
      resetAt="resetAt")
