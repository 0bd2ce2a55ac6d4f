"""Listing conversations a page at a time, as ``conversations.list`` and
``users.conversations`` both do: ``types``, ``exclude_archived``, ``limit`` and a
``channel`` cursor over the workspace's conversations in creation order."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ancha.world.tools.slack import errors
from ancha.world.tools.slack.call import Call
from ancha.world.tools.slack.models import Channel
from ancha.world.tools.slack.params import encode_cursor

TYPES = frozenset({"public_channel", "private_channel", "mpim", "im"})


def conversation_type(channel: Channel) -> str:
    if channel.is_im:
        return "im"
    if channel.is_mpim:
        return "mpim"
    return "private_channel" if channel.is_private else "public_channel"


def channel_page(call: Call, limit: int, bad_types: errors.SlackError, shown: Callable[[Channel], bool],
                 render: Callable[[Channel], dict[str, Any]]) -> dict[str, Any]:
    """One page of the conversations the caller can see, of the requested ``types``, for
    which ``shown`` holds, each as ``render`` gives it; ``bad_types`` for an unknown type."""
    p = call.params
    types = {t.strip() for t in (p.get_str("types") or "public_channel").split(",") if t.strip()}
    if not types <= TYPES:
        raise bad_types
    exclude_archived = p.get_bool("exclude_archived")
    after = p.cursor("channel")
    page: list[dict[str, Any]] = []
    next_id = ""
    started = after is None
    for channel in call.state.channels.values():
        if not started:
            started = channel.id == after
            if not started:
                continue
        if conversation_type(channel) not in types or not call.can_see(channel) or not shown(channel):
            continue
        if exclude_archived and channel.is_archived:
            continue
        if len(page) == limit:
            next_id = channel.id
            break
        page.append(render(channel))
    if not started:
        raise errors.InvalidCursor()
    return {"ok": True, "channels": page,
            "response_metadata": {"next_cursor": encode_cursor("channel", next_id) if next_id else ""}}
