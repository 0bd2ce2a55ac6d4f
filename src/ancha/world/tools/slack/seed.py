"""Build a workspace from a scene's ``world.slack``: ids, members, seeded history.

Ids come from the trial's RNG (``WorldPort.random_hex``), so the same scene and trial give
the same world. Seeded messages are placed once per scene and built into a trial's
channel the first time it is touched (``history``).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ancha.world.tools.slack.history import HistoryLoader, Ids, plan_history, resolve
from ancha.world.tools.slack.image_links import SLACK_EDGE
from ancha.world.tools.slack.models import Channel, SlackState, User
from ancha.world.tools.slack.scene_file import SlackFile

if TYPE_CHECKING:
    from ancha.world.kernel.port import WorldPort

_COLORS = ("9f69e7", "4bbe2e", "e7392d", "3c989f", "e96699", "674b1b", "5b89d5", "e0a729")


def new_id(world: WorldPort, prefix: str) -> str:
    return prefix + world.random_hex(10).upper()


def seed_state(world: WorldPort, seed: SlackFile) -> tuple[SlackState, User, HistoryLoader]:
    """The workspace, the agent's bot user and what gives channels their seeded history."""
    start = int(world.clock.start)
    state = SlackState(new_id(world, "T"), seed.team.name, seed.team.domain)
    team = state.team["id"]
    bot = User(new_id(world, "U"), team, seed.bot.name, is_bot=True, bot_id=new_id(world, "B"),
               app_id=new_id(world, "A"), ref=seed.bot.ref, updated=start - 86400, color="757575")
    users: dict[str, str] = {seed.bot.ref: bot.id}
    state.add_user(User("USLACKBOT", team, "slackbot", real_name="Slackbot", updated=0, color="757575"))
    state.add_user(bot)
    world.register_ref(seed.bot.ref, "user", "slack", bot.id)
    owners = world.scene.accounts("slack")
    for i, seeded in enumerate(seed.users):
        tz, label, offset = _timezone(seeded.tz, datetime.fromtimestamp(start, UTC))
        user = User(new_id(world, "U"), team, seeded.name, real_name=seeded.real_name or seeded.name,
                    email=seeded.email, title=seeded.title or "", tz=tz, tz_label=label, tz_offset=offset,
                    is_admin=seeded.is_admin, deleted=seeded.deleted,
                    person=owners.get(seeded.ref or "", seeded.person),
                    ref=seeded.ref, updated=start - 86400, color=_COLORS[i % len(_COLORS)])
        state.add_user(user)
        if seeded.ref:
            users[seeded.ref] = user.id
        world.register_ref(seeded.ref, "user", "slack", user.id)

    channels_by_index: list[Channel] = []
    for seeded_channel in seed.channels:
        members = [resolve(users, ref, f"channel {seeded_channel.name!r} member") for ref in seeded_channel.members]
        channel = Channel(new_id(world, "C"), seeded_channel.name.lstrip("#").lower(), created=start - 30 * 86400,
                          creator=members[0] if members else bot.id, is_private=seeded_channel.private,
                          topic=seeded_channel.topic or "", purpose=seeded_channel.purpose or "",
                          is_archived=seeded_channel.archived, ref=seeded_channel.ref)
        channel.is_general = channel.name == "general"
        for member in members:
            channel.add_member(member)
        state.add_channel(channel)
        channels_by_index.append(channel)
        world.register_ref(seeded_channel.ref, "channel", "slack", channel.id)

    plan = plan_history(seed, start)  # shared by every trial of the scene
    for position in plan.with_ref:
        world.register_ref(plan.seeded.ref[position], "message", "slack",
                         f"{channels_by_index[plan.channel[position]].id}/{plan.ts(position)}")
    history = HistoryLoader(plan, Ids(team, users, bot.id, bot.bot_id, bot.app_id, lambda: bot_profile(bot, team)))
    for index, channel in enumerate(channels_by_index):
        history.defer(channel, index)
    return state, bot, history


def bot_profile(bot: User, team: str) -> dict[str, object]:
    icons = SLACK_EDGE + "plugins/app/bot_{}.png"
    return {"id": bot.bot_id, "deleted": False, "name": bot.name, "updated": bot.updated,
            "app_id": bot.app_id, "icons": {"image_36": icons.format(36), "image_48": icons.format(48),
                                            "image_72": icons.format(72)}, "team_id": team}


def _timezone(name: str | None, when: datetime) -> tuple[str, str, int]:
    if not name:
        return "America/Los_Angeles", "Pacific Standard Time", -28800
    try:
        local = when.astimezone(ZoneInfo(name))
    except (ZoneInfoNotFoundError, ValueError):
        return name, name, 0
    offset = local.utcoffset()
    return name, local.tzname() or name, int(offset.total_seconds()) if offset else 0
