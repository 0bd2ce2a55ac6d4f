"""The Web API methods this replica serves, one module per family (``router.py`` gathers them).

Handlers are thin and named after the method (``chat.postMessage`` -> ``chat_post_message``):
they read arguments, apply Slack's rules through ``Call`` and the models, and return the
``ok: true`` body or raise a ``SlackError``.
"""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    # The tables live in router.py; coverage.py still imports them from here (read lazily:
    # router.py imports this package's modules).
    if name in ("ROUTES", "PARTIAL", "APP_LEVEL", "UNAUTHENTICATED", "FAMILIES"):
        from ancha.world.tools.slack import router

        return getattr(router, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
