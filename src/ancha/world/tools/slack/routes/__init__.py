"""The Web API methods this replica serves, by Slack's method name.

Each module here serves one family (``chat``, ``conversations``...) and declares its
``ROUTES`` (method -> handler) and ``PARTIAL`` (method -> what it still lacks); this
package gathers them. Handlers are thin and named after the method (``chat.postMessage``
-> ``chat_post_message``): they read arguments, apply Slack's rules through ``Call`` and
the models, and return the ``ok: true`` body or raise a ``SlackError``.
"""

from __future__ import annotations

from ancha.world.tools.slack.call import Handler
from ancha.world.tools.slack.routes import (
    bookmarks,
    chat,
    chat_more,
    chat_stream,
    conversation_admin,
    conversations,
    dnd,
    files,
    pins,
    presence,
    profiles,
    reactions,
    reminders,
    search,
    team,
    usergroups,
    users,
    views,
)

FAMILIES = (users, chat, chat_more, chat_stream, conversations, conversation_admin, reactions, files, search, views, dnd, reminders, profiles, presence, pins, bookmarks, usergroups, team)

ROUTES: dict[str, Handler] = {method: handler for family in FAMILIES for method, handler in family.ROUTES.items()}

APP_LEVEL = {"apps.connections.open"}
"""Served to the app-level token (``xapp-``) only (``replica.py``, ``socket_mode.py``)."""

UNAUTHENTICATED = {"api.test"}
"""Served without a token (``api.test`` echoes its arguments)."""

PARTIAL: dict[str, str] = {method: note for family in FAMILIES for method, note in family.PARTIAL.items()}
"""What each served method still lacks (the coverage ledger's ``partial`` notes)."""
