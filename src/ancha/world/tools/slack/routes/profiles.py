"""users.profile.*: a person's profile (names, title, phone, status) as they keep it.

Only a person's own user token may change their profile; an admin may change another
member's, but not another admin's. A bot token cannot set profiles (Slack grants
``users.profile:write`` to user tokens only).
"""

from __future__ import annotations

import re
from typing import Any

from ancha.world.kernel import bounded_json
from ancha.world.kernel.bus import DomainEvent
from ancha.world.tools.slack import errors
from ancha.world.tools.slack.call import Call, Handler
from ancha.world.tools.slack.models import User

_EMOJI = re.compile(r":[a-z0-9_+'\-]{1,100}(::skin-tone-[2-6])?:")
_TEXT_FIELDS = ("display_name", "real_name", "first_name", "last_name", "title", "phone", "pronouns",
                "status_text", "status_emoji", "status_expiration", "email")


def users_profile_get(call: Call) -> dict[str, Any]:
    user_id = (call.params.get_str("user") or call.caller.user_id).strip()
    user = call.state.users.get(user_id)
    if user is None:
        raise errors.UserNotFound()
    return {"ok": True, "profile": user.profile()}


def users_profile_set(call: Call) -> dict[str, Any]:
    if call.caller.is_bot:
        raise errors.NotAllowedTokenType("[ERROR] users.profile.set takes a user token (xoxp-), not a bot token")
    user = _target(call)
    changes = _changes(call)
    caller_is_admin = call.state.users[call.caller.user_id].is_admin
    if "email" in changes and not caller_is_admin:
        raise errors.NotAdmin("[ERROR] only an admin can change an email address")
    status = changes.get("status_emoji")
    if status and not _EMOJI.fullmatch(status):
        raise errors.ProfileStatusSetFailedNotEmojiSyntax()
    _apply(call, user, changes)
    user.updated = int(call.replica.world.clock.now())
    call.replica.world.bus.publish(DomainEvent("user_profile_changed", "slack", call.replica.world.clock.now(), {
        "user": user.id, "actor": call.caller.actor, "changed": sorted(changes)}))
    return {"ok": True, "username": user.name, "profile": user.profile()}


def _target(call: Call) -> User:
    user_id = (call.params.get_str("user") or call.caller.user_id).strip()
    user = call.state.users.get(user_id)
    if user is None:
        raise errors.UserNotFound()
    if user.id != call.caller.user_id:
        if not call.state.users[call.caller.user_id].is_admin:
            raise errors.NotAdmin("[ERROR] only an admin can change another member's profile")
        if user.is_admin:
            raise errors.CannotUpdateAdminUser()
    return user


def _changes(call: Call) -> dict[str, str]:
    """The profile fields the call sets: ``profile`` (a JSON object), else ``name`` and ``value``."""
    p = call.params
    raw = p.values.get("profile")
    if raw is not None and raw != "":
        if isinstance(raw, str):
            try:
                raw = bounded_json.loads(raw)
            except ValueError as exc:
                raise errors.InvalidProfile() from exc
        if not isinstance(raw, dict):
            raise errors.InvalidProfile()
        fields: dict[str, Any] = raw
    elif p.has("name"):
        fields = {p.required("name"): p.values.get("value", "")}
    else:
        raise errors.InvalidProfile("[ERROR] pass profile (a JSON object of fields), or name and value")
    changes: dict[str, str] = {}
    for key, value in fields.items():
        if key not in _TEXT_FIELDS:
            continue  # Slack ignores what it does not know (custom ``fields`` are not kept here)
        if isinstance(value, dict | list):
            raise errors.InvalidProfile(f"[ERROR] {key} takes a string")
        changes[key] = "" if value is None else str(value).strip()
    expiration = changes.get("status_expiration")
    if expiration and not expiration.isdigit():
        raise errors.InvalidProfile("[ERROR] status_expiration takes epoch seconds")
    return changes


def _apply(call: Call, user: User, changes: dict[str, str]) -> None:
    first, _, last = user.real_name.partition(" ")
    if "first_name" in changes or "last_name" in changes:
        first, last = changes.get("first_name", first), changes.get("last_name", last)
        user.real_name = f"{first} {last}".strip()
    if "real_name" in changes:
        user.real_name = changes["real_name"]
    for key in ("display_name", "title", "phone", "pronouns", "status_text", "status_emoji"):
        if key in changes:
            setattr(user, key, changes[key])
    if "status_expiration" in changes:
        user.status_expiration = int(changes["status_expiration"] or 0)
    if "email" in changes:
        if user.email:
            call.state.user_ids_by_email.pop(user.email.lower(), None)
        user.email = changes["email"] or None
        if user.email:
            call.state.user_ids_by_email[user.email.lower()] = user.id


_IMAGE_SIGNATURES = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF87a", b"GIF89a")
MAX_PHOTO_BYTES = 1024 * 1024
"""Slack's limit on a profile photo (``too_large`` past it)."""


def users_set_photo(call: Call) -> dict[str, Any]:
    """A person sets their own photo (a user token's method, as at Slack). The image is checked
    and taken; the profile's ``image_*`` URLs stay as they were."""
    if call.caller.is_bot:
        raise errors.NotAllowedTokenType()
    image = call.params.values.get("image")
    if image is None or image == "":
        raise errors.InvalidArguments("[ERROR] missing required field: image")
    if not isinstance(image, bytes) or not image.startswith(_IMAGE_SIGNATURES):
        raise errors.BadImage()
    if len(image) > MAX_PHOTO_BYTES:
        raise errors.TooLarge()
    return {"ok": True}


ROUTES: dict[str, Handler] = {
    "users.profile.get": users_profile_get,
    "users.profile.set": users_profile_set,
    "users.setPhoto": users_set_photo,
}

PARTIAL: dict[str, str] = {
    "users.profile.get": "no custom profile fields; include_labels is ignored",
    "users.profile.set": "custom profile fields (fields) are ignored; status does not expire by itself",
    "users.setPhoto": "the image is checked, not kept: the profile's image_* URLs do not change; crop_* are ignored",
}
"""What each method here still lacks (the coverage ledger's ``partial`` notes)."""
