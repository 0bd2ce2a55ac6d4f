"""How a Web API call finds its handler: ``/api/<method>``, by Slack's method name.

Each module of ``routes/`` serves one family (``chat``, ``conversations``...) and declares
its ``ROUTES`` (method -> handler) and ``PARTIAL`` (method -> what it still lacks); this
module gathers them. A method with no handler is either one Slack has that the replica
lacks (in the ledger: a coverage gap) or no method at all (``replica.py`` answers both).
"""

from __future__ import annotations

from ancha.world.tools.slack.call import Handler
from ancha.world.tools.slack.routes import (
    bookmarks,
    calls,
    canvases,
    chat,
    chat_more,
    chat_stream,
    conversation_admin,
    conversations,
    dnd,
    files,
    files_remote,
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

API_PREFIX = "/api/"

FAMILIES = (users, chat, chat_more, chat_stream, conversations, conversation_admin, reactions, files, files_remote, search, views,
            dnd, reminders, profiles, presence, pins, bookmarks, usergroups, team, calls, canvases)

ROUTES: dict[str, Handler] = {method: handler for family in FAMILIES for method, handler in family.ROUTES.items()}

APP_LEVEL = {"apps.connections.open"}
"""Served to the app-level token (``xapp-``) only (``replica.py``, ``socket_mode.py``)."""

UNAUTHENTICATED = {"api.test"}
"""Served without a token (``api.test`` echoes its arguments)."""

PARTIAL: dict[str, str] = {method: note for family in FAMILIES for method, note in family.PARTIAL.items()}
"""What each served method still lacks (the coverage ledger's ``partial`` notes)."""


def method_of(path: str) -> str | None:
    """The Web API method a path calls (``/api/chat.postMessage`` -> ``chat.postMessage``);
    None for any other path (file URLs)."""
    if not path.startswith(API_PREFIX):
        return None
    return path[len(API_PREFIX):].rstrip("/")
