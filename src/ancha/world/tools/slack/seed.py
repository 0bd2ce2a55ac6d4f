"""Build a workspace from a scene's ``world.slack``: ids, members, seeded history.

Ids come from the trial's RNG (``env.random_hex``), so the same scene and trial give
the same world. Seeded messages without ``at`` are spaced a minute apart, in seed
order, ending a minute before ``clock.start``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ancha.world.tools.slack.models import MICROS, Channel, Message, SlackState, User, ts_key
from ancha.world.tools.slack.scene_models import SlackWorld

if TYPE_CHECKING:
    from ancha.world.environment import Environment

SPACING_S = 60
_COLORS = ("9f69e7", "4bbe2e", "e7392d", "3c989f", "e96699", "674b1b", "5b89d5", "e0a729")


def new_id(env: Environment, prefix: str) -> str:
    return prefix + env.random_hex(10).upper()


def seed_state(env: Environment, world: SlackWorld) -> tuple[SlackState, User]:
    """The workspace and the agent's bot user."""
    start = int(env.clock.start)
    state = SlackState(new_id(env, "T"), world.team.name, world.team.domain)
    team = state.team["id"]
    bot = User(new_id(env, "U"), team, world.bot.name, is_bot=True, bot_id=new_id(env, "B"),
               app_id=new_id(env, "A"), ref=world.bot.ref, updated=start - 86400, color="757575")
    users: dict[str, str] = {world.bot.ref: bot.id}
    state.add_user(User("USLACKBOT", team, "slackbot", real_name="Slackbot", updated=0, color="757575"))
    state.add_user(bot)
    env.register_ref(world.bot.ref, "user", "slack", bot.id)
    owners = env.scene.accounts("slack")
    for i, seeded in enumerate(world.users):
        tz, label, offset = _timezone(seeded.tz, datetime.fromtimestamp(start, UTC))
        user = User(new_id(env, "U"), team, seeded.name, real_name=seeded.real_name or seeded.name,
                    email=seeded.email, title=seeded.title or "", tz=tz, tz_label=label, tz_offset=offset,
                    is_admin=seeded.is_admin, deleted=seeded.deleted,
                    person=owners.get(seeded.ref or "", seeded.person),
                    ref=seeded.ref, updated=start - 86400, color=_COLORS[i % len(_COLORS)])
        state.add_user(user)
        if seeded.ref:
            users[seeded.ref] = user.id
        env.register_ref(seeded.ref, "user", "slack", user.id)

    channels: dict[str, str] = {}
    for seeded_channel in world.channels:
        members = [_resolve(users, ref, f"channel {seeded_channel.name!r} member") for ref in seeded_channel.members]
        channel = Channel(new_id(env, "C"), seeded_channel.name.lstrip("#").lower(), created=start - 30 * 86400,
                          creator=members[0] if members else bot.id, is_private=seeded_channel.private,
                          topic=seeded_channel.topic or "", purpose=seeded_channel.purpose or "",
                          is_archived=seeded_channel.archived, ref=seeded_channel.ref)
        channel.is_general = channel.name == "general"
        for member in members:
            channel.add_member(member)
        state.add_channel(channel)
        if seeded_channel.ref:
            channels[seeded_channel.ref] = channel.id
        env.register_ref(seeded_channel.ref, "channel", "slack", channel.id)

    undated = sum(1 for m in world.messages if m.at is None)
    seen: dict[str, Message] = {}
    for i, seeded_message in enumerate(world.messages):
        where = f"message {i + 1}"
        channel_id = _resolve(channels, seeded_message.channel, f"{where} channel")
        user_id = _resolve(users, seeded_message.from_, f"{where} from")
        parent: Message | None = None
        if seeded_message.thread_of:
            parent = seen.get(seeded_message.thread_of)
            if parent is None:
                raise ValueError(f"slack {where}: thread_of {seeded_message.thread_of!r} names no earlier message")
            if parent.is_reply and parent.thread_ts:
                parent = state.message(parent.channel, parent.thread_ts) or parent
            channel_id = parent.channel
        if seeded_message.at is not None:
            key = _key(seeded_message.at)
        else:
            undated -= 1
            key = (start - SPACING_S * (undated + 1)) * MICROS
        if parent is not None and key <= parent.key:
            key = parent.key + 1
        key = state.free_key(channel_id, key)
        message = Message(channel_id, key, user_id, seeded_message.text, team=team,
                          thread_ts=parent.ts if parent else None, seeded=True)
        if user_id == bot.id:
            message.bot_id, message.app_id = bot.bot_id, bot.app_id
            message.bot_profile = bot_profile(bot, team)
        for emoji, refs in seeded_message.reactions.items():
            message.reactions[emoji.strip(":")] = [_resolve(users, r, f"{where} reaction") for r in refs]
        if seeded_message.files:
            message.files = list(seeded_message.files)
        state.add_message(message, parent)
        if seeded_message.ref:
            seen[seeded_message.ref] = message
        env.register_ref(seeded_message.ref, "message", "slack", f"{channel_id}/{message.ts}")
    return state, bot


def bot_profile(bot: User, team: str) -> dict[str, object]:
    icons = "https://a.slack-edge.com/80588/img/plugins/app/bot_{}.png"
    return {"id": bot.bot_id, "deleted": False, "name": bot.name, "updated": bot.updated,
            "app_id": bot.app_id, "icons": {"image_36": icons.format(36), "image_48": icons.format(48),
                                            "image_72": icons.format(72)}, "team_id": team}


def _resolve(ids: dict[str, str], ref: str, where: str) -> str:
    ref = ref.removeprefix("$").split(".")[-1]
    if ref not in ids:
        known = ", ".join(sorted(ids)) or "none"
        raise ValueError(f"slack {where}: {ref!r} names nothing here (known: {known})")
    return ids[ref]


def _key(at: datetime) -> int:
    key = ts_key(f"{at.timestamp():.6f}")
    return key if key is not None else 0


def _timezone(name: str | None, when: datetime) -> tuple[str, str, int]:
    if not name:
        return "America/Los_Angeles", "Pacific Standard Time", -28800
    try:
        local = when.astimezone(ZoneInfo(name))
    except (ZoneInfoNotFoundError, ValueError):
        return name, name, 0
    offset = local.utcoffset()
    return name, local.tzname() or name, int(offset.total_seconds()) if offset else 0
