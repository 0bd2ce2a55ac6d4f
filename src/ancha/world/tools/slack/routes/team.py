"""team.*, bots.info and emoji.list: the workspace itself and what it is set up with."""

from __future__ import annotations

from typing import Any

from ancha.world.tools.slack import errors
from ancha.world.tools.slack.call import Call, Handler
from ancha.world.tools.slack.models import ts_str

_ICON_SIZES = (34, 44, 68, 88, 102, 132, 230)


def team_info(call: Call) -> dict[str, Any]:
    team = call.state.team
    asked = call.params.get_str("team")
    if asked is not None and asked.strip() != team["id"]:
        raise errors.TeamNotFound()
    images = call.replica.urls.images
    icon: dict[str, Any] = {f"image_{size}": f"{images}avatars-teams/ava_0001-{size}.png" for size in _ICON_SIZES}
    icon["image_default"] = True
    return {"ok": True, "team": {"id": team["id"], "name": team["name"], "domain": team["domain"],
                                 "email_domain": "", "icon": icon,
                                 "avatar_base_url": images}}


def team_profile_get(call: Call) -> dict[str, Any]:
    # A workspace has no custom profile fields until an admin adds some; none can be seeded yet.
    return {"ok": True, "profile": {"fields": []}}


def team_billing_info(call: Call) -> dict[str, Any]:
    # A scene's workspace is on Slack's free plan (Slack answers "" for it, or a paid plan's
    # name: "std", "plus", "compliance", "enterprise").
    return {"ok": True, "plan": ""}


TEAM_PREFERENCES: dict[str, Any] = {
    "msg_edit_window_mins": -1,
    "display_real_names": False,
    "disable_file_uploads": "allow_all",
    "who_can_post_general": "everyone",
}
"""A new workspace's preferences, as ``team.preferences.list`` gives them: edits allowed
forever (-1), usernames shown, uploads allowed, and everyone may post in #general.
``allow_message_deletion`` is no longer among them (Slack removed it in August 2025)."""


def team_preferences_list(call: Call) -> dict[str, Any]:
    return {"ok": True, **TEAM_PREFERENCES}


def bots_info(call: Call) -> dict[str, Any]:
    bot_id = (call.params.get_str("bot") or "").strip()
    user = next((u for u in call.state.users.values() if u.is_bot and u.bot_id == bot_id), None) if bot_id else None
    if user is None or user.bot_id is None:
        raise errors.BotNotFound()
    icons = {f"image_{size}": f"{call.replica.urls.images}plugins/app/bot_{size}.png" for size in (36, 48, 72)}
    return {"ok": True, "bot": {"id": user.bot_id, "deleted": user.deleted, "name": user.name,
                                "updated": user.updated, "app_id": user.app_id, "user_id": user.id, "icons": icons}}


def emoji_list(call: Call) -> dict[str, Any]:
    # A new workspace has no custom emoji: Slack's standard set is not listed here.
    return {"ok": True, "emoji": {}, "cache_ts": ts_str(0)}


ROUTES: dict[str, Handler] = {
    "team.info": team_info,
    "team.profile.get": team_profile_get,
    "team.billing.info": team_billing_info,
    "team.preferences.list": team_preferences_list,
    "bots.info": bots_info,
    "emoji.list": emoji_list,
}

PARTIAL: dict[str, str] = {
    "emoji.list": "the workspace has no custom emoji; include_categories is ignored",
    "team.profile.get": "no custom profile fields (a scene cannot define them yet)",
    "team.billing.info": "always the free plan (a scene cannot set one)",
    "team.preferences.list": "a new workspace's defaults (a scene cannot set them)",
}
"""What each method here still lacks (the coverage ledger's ``partial`` notes)."""
