"""What the judge sees of Slack: the messages written during the attempt, in ts order."""

from __future__ import annotations

from typing import Any

MESSAGE_CHARS = 2000


def messages_from_snapshot(slack: dict[str, Any]) -> list[dict[str, Any]]:
    """The messages of a Slack snapshot (``world.json``'s ``slack``), in ts order, each with
    ``channel_name`` and ``user_name`` added."""
    channels = {c.get("id"): c for c in slack.get("channels") or [] if isinstance(c, dict)}
    users = {u.get("id"): u for u in slack.get("users") or [] if isinstance(u, dict)}
    found: list[dict[str, Any]] = []
    by_channel = slack.get("messages") or {}
    for channel_id, messages in (by_channel.items() if isinstance(by_channel, dict) else []):
        channel = channels.get(channel_id) or {}
        name = channel.get("name")
        label = f"#{name}" if name and not channel.get("is_im") else f"DM {channel_id}"
        for message in messages:
            user = users.get(message.get("user")) or {}
            found.append({**message, "channel": channel_id, "channel_name": label,
                          "user_name": f"@{user['name']}" if user.get("name") else message.get("user")})
    return sorted(found, key=lambda m: float(m.get("ts") or 0))


def judge_view(slack: dict[str, Any]) -> str:
    lines = ["Slack messages written during the attempt (final state):"]
    written = [m for m in messages_from_snapshot(slack) if not m.get("seeded")]
    for message in written:
        where = message.get("channel_name") or message.get("channel") or "?"
        thread = message.get("thread_ts")
        place = f"in thread {thread}" if thread and thread != message.get("ts") else "top level"
        author = message.get("user_name") or message.get("user") or message.get("bot_id") or "?"
        text = str(message.get("text") or "")[:MESSAGE_CHARS]
        lines.append(f"- {where}, {place}, ts {message.get('ts')}, from {author}: {text}")
    if not written:
        lines.append("(none)")
    return "\n".join(lines)
