"""The Web API methods this replica serves, by Slack's method name.

Handlers are thin and named after the method (``chat.postMessage`` ->
``chat_post_message``): they read arguments, apply Slack's rules through ``Call``
and the models, and return the ``ok: true`` body or raise a ``SlackError``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ancha.world.tools.slack.call import Call
from ancha.world.tools.slack.routes import chat, conversations, reactions, users

Handler = Callable[[Call], dict[str, Any]]

ROUTES: dict[str, Handler] = {
    "auth.test": users.auth_test,
    "chat.postMessage": chat.chat_post_message,
    "chat.update": chat.chat_update,
    "chat.delete": chat.chat_delete,
    "chat.getPermalink": chat.chat_get_permalink,
    "conversations.history": conversations.conversations_history,
    "conversations.replies": conversations.conversations_replies,
    "conversations.list": conversations.conversations_list,
    "conversations.info": conversations.conversations_info,
    "conversations.members": conversations.conversations_members,
    "conversations.join": conversations.conversations_join,
    "conversations.open": conversations.conversations_open,
    "users.list": users.users_list,
    "users.info": users.users_info,
    "users.lookupByEmail": users.users_lookup_by_email,
    "reactions.add": reactions.reactions_add,
    "reactions.remove": reactions.reactions_remove,
    "reactions.get": reactions.reactions_get,
}

UNAUTHENTICATED = {"api.test"}
"""Served without a token (``api.test`` echoes its arguments)."""

PARTIAL: dict[str, str] = {
    "chat.postMessage": "no blocks generated from text; username/icon_* kept but not shown; "
                        "no link unfurls; no file uploads",
    "chat.update": "no file_ids, reply_broadcast or link_names",
    "chat.delete": "a deleted thread parent leaves no tombstone",
    "conversations.history": "no include_all_metadata filtering; pin_count is always 0",
    "conversations.replies": "no include_all_metadata",
    "conversations.list": "no team_id (Enterprise Grid)",
    "conversations.join": "no channel_join message is posted",
    "conversations.open": "group DMs are created without a purpose or name history",
    "users.list": "no include_locale; presence is not tracked",
    "users.info": "no include_locale",
    "reactions.add": "messages only (no files or file comments)",
    "reactions.remove": "messages only (no files or file comments)",
    "reactions.get": "messages only (no files or file comments); full is ignored",
}
"""What each served method still lacks (the coverage ledger's ``partial`` notes)."""
