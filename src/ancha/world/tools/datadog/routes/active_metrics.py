"""Active metrics (v1): ``GET /api/v1/metrics``, the metrics that reported since a time."""

from __future__ import annotations

import bisect

from ancha.world.kernel.query_limits import TOO_LONG, too_long
from ancha.world.tools.datadog.call import Call, Reply
from ancha.world.tools.datadog.errors import bad_request
from ancha.world.tools.datadog.metrics import Metric
from ancha.world.tools.datadog.router import route


def _active_since(metric: Metric, since: float, now: float, host: str | None, tags: list[str]) -> bool:
    """``metric`` reported a point since ``since`` (from ``host``, carrying ``tags``)."""
    wanted = [*tags, *([f"host:{host}"] if host else [])]
    if not wanted and (
        metric.baseline is not None or any(o.end is None or o.end >= since for o in metric.overrides)
    ):
        return True  # a seeded series or a held value reports continuously
    i = bisect.bisect_left(metric.times, since)
    return any(at <= now and all(t in point_tags for t in wanted) for at, _, point_tags in metric.points[i:])


@route(
    "GET",
    "/api/v1/metrics",
    partial="tag_filter takes tags joined with AND or commas (no OR, NOT or wildcards)",
)
def list_active_metrics(call: Call) -> Reply:
    """Metrics with points since ``from``, optionally from ``host`` and carrying ``tag_filter``'s tags."""
    since = call.q_int("from")
    if since is None:
        raise bad_request("Missing required parameter: from (seconds since the Unix epoch)")
    host = call.q("host") or None
    text = call.q("tag_filter") or ""
    if too_long(text):
        raise bad_request(f"Invalid tag_filter: {TOO_LONG}")
    tags = [t for t in (p.strip() for p in text.replace(" AND ", ",").split(",")) if t and t != "*"]
    state = call.state
    now = state.now()
    names = sorted(
        name
        for name, metric in state.metrics.metrics.items()
        if _active_since(metric, float(since), now, host, tags)
    )
    return Reply(200, {"from": str(since), "metrics": names})
