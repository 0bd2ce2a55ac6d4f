"""The Web API methods this replica serves, one module per family (``router.py`` gathers them).

Handlers are thin and named after the method (``chat.postMessage`` -> ``chat_post_message``):
they read arguments, apply Slack's rules through ``Call`` and the models, and return the
``ok: true`` body or raise a ``SlackError``.
"""

from __future__ import annotations
