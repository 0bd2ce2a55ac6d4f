"""The served Okta routes, one module per API family (each registers with ``router.route``)."""

from __future__ import annotations


def load_all() -> None:
    """Import every route module (registration happens on import)."""
    from ancha.world.tools.okta.routes import event_hooks, groups, lifecycle, logs, users  # noqa: F401
