"""PagerDuty REST API v2 handlers, one module per resource family."""

from __future__ import annotations

from ancha.world.tools.pagerduty.router import LINKS, ROUTES, Route


def load_all() -> list[Route]:
    """Every served route (importing the modules registers them)."""
    from ancha.world.tools.pagerduty.routes import (  # noqa: F401
        directory,
        incidents,
        maintenance,
        oncalls,
        overrides,
        teams,
    )

    return list(ROUTES)


def load_links() -> list[Route]:
    """Paths only the replica's own links lead to (outside PagerDuty's API description)."""
    load_all()
    return list(LINKS)
