"""The served routes, one module per Datadog API family; ``load_all`` registers them."""

from __future__ import annotations


def load_all() -> None:
    from ancha.world.tools.datadog.routes import (  # noqa: F401
        active_metrics,
        dashboards,
        downtimes,
        downtimes_v1,
        events,
        logs,
        metrics,
        monitors,
        slo_corrections,
        slos,
        world,
    )
