"""Slack's state in one environment: users, conversations and messages, with indexes.

Plain classes for the hot path. A message's ``ts`` is kept twice: as Slack's string
(``"1767603600.000123"``) and as integer microseconds (``key``), which orders the
per-conversation lists that history and replies bisect, so a page costs O(page).
"""

from __future__ import annotations

import json
import re
from array import array
from bisect import bisect_left, insort
from collections.abc import Callable
from typing import Any, Protocol

from ancha.world.tools.slack.bookmarks import Bookmarks
from ancha.world.tools.slack.ephemeral import EphemeralMessage
from ancha.world.tools.slack.files import FileStore
from ancha.world.tools.slack.image_links import GRAVATAR
from ancha.world.tools.slack.pins import Pins
from ancha.world.tools.slack.reacted import Reacted
from ancha.world.tools.slack.reminders import Reminders
from ancha.world.tools.slack.scheduled import ScheduledMessages
from ancha.world.tools.slack.usergroups import Usergroups
from ancha.world.tools.slack.views import ViewStore

MICROS = 1_000_000
_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


class RawJSON(str):
    """JSON text a response embeds as is (already-encoded messages of a history page)."""
_TS = re.compile(r"\d{1,12}(?:\.\d{0,6})?")


def ts_key(value: str) -> int | None:
    """Microseconds of a Slack timestamp (``"1767603600.000123"``, ``"1767603600"``), or None."""
    if not _TS.fullmatch(value):
        return None
    whole, _, frac = value.partition(".")
    return int(whole) * MICROS + int((frac + "000000")[:6])


def ts_str(key: int) -> str:
    return f"{key // MICROS}.{key % MICROS:06d}"


class User:
    __slots__ = ("id", "team_id", "name", "real_name", "display_name", "email", "title", "tz",
                 "tz_label", "tz_offset", "is_admin", "deleted", "is_bot", "bot_id", "app_id",
                 "person", "ref", "updated", "color", "phone", "pronouns", "status_text", "status_emoji",
                 "status_expiration", "away")

    def __init__(self, id: str, team_id: str, name: str, *, real_name: str = "", email: str | None = None,
                 title: str = "", tz: str = "America/Los_Angeles", tz_label: str = "Pacific Standard Time",
                 tz_offset: int = -28800, is_admin: bool = False, deleted: bool = False,
                 is_bot: bool = False, bot_id: str | None = None, app_id: str | None = None,
                 person: str | None = None, ref: str | None = None, updated: int = 0,
                 color: str = "9f69e7") -> None:
        self.id = id
        self.team_id = team_id
        self.name = name
        self.real_name = real_name or name
        self.display_name = "" if is_bot else name
        self.email = email
        self.title = title
        self.tz = tz
        self.tz_label = tz_label
        self.tz_offset = tz_offset
        self.is_admin = is_admin
        self.deleted = deleted
        self.is_bot = is_bot
        self.bot_id = bot_id
        self.app_id = app_id
        self.person = person
        self.ref = ref
        self.updated = updated
        self.color = color
        self.phone = ""
        self.pronouns = ""
        self.status_text = ""
        self.status_emoji = ""
        self.status_expiration = 0
        self.away = False
        """Set away by hand (``users.setPresence``); else active."""

    def profile(self) -> dict[str, Any]:
        first, _, last = self.real_name.partition(" ")
        avatar = f"{GRAVATAR}{self.id.lower()}.jpg?s="
        profile: dict[str, Any] = {
            "title": self.title, "phone": self.phone, "skype": "",
            "real_name": self.real_name, "real_name_normalized": self.real_name,
            "display_name": self.display_name, "display_name_normalized": self.display_name,
            "fields": {}, "status_text": self.status_text, "status_emoji": self.status_emoji,
            "status_emoji_display_info": [], "status_expiration": self.status_expiration,
            "avatar_hash": "g" + self.id[-11:].lower(),
            "first_name": first, "last_name": last,
            "image_24": avatar + "24", "image_32": avatar + "32", "image_48": avatar + "48",
            "image_72": avatar + "72", "image_192": avatar + "192", "image_512": avatar + "512",
            "status_text_canonical": "", "team": self.team_id,
        }
        if self.pronouns:
            profile["pronouns"] = self.pronouns
        if self.email is not None and not self.is_bot:
            profile["email"] = self.email
        if self.is_bot:
            profile.update(bot_id=self.bot_id, api_app_id=self.app_id, always_active=True)
        return profile

    def to_dict(self) -> dict[str, Any]:
        """users.info's ``user`` object."""
        user: dict[str, Any] = {
            "id": self.id, "team_id": self.team_id, "name": self.name, "deleted": self.deleted,
            "color": self.color, "real_name": self.real_name, "tz": self.tz, "tz_label": self.tz_label,
            "tz_offset": self.tz_offset, "profile": self.profile(), "is_admin": self.is_admin,
            "is_owner": False, "is_primary_owner": False, "is_restricted": False,
            "is_ultra_restricted": False, "is_bot": self.is_bot, "is_app_user": False,
            "updated": self.updated, "is_email_confirmed": not self.is_bot,
            "who_can_share_contact_card": "EVERYONE",
        }
        if self.is_bot or self.id == "USLACKBOT":
            user.pop("is_email_confirmed")
        return user


class Message:
    __slots__ = ("channel", "key", "ts", "user", "text", "thread_ts", "seeded", "reactions", "team",
                 "bot_id", "app_id", "bot_profile", "subtype", "blocks", "attachments", "files",
                 "metadata", "edited", "reply_keys", "reply_users", "parent_user_id", "options", "actor",
                 "fields", "_wire")

    def __init__(self, channel: str, key: int, user: str, text: str, *, team: str,
                 thread_ts: str | None = None, seeded: bool = False) -> None:
        self.channel = channel
        self.key = key
        self.ts = ts_str(key)
        self.user = user
        self.text = text
        self.team = team
        self.thread_ts = thread_ts
        self.seeded = seeded
        self.reactions: dict[str, list[str]] = {}
        self.bot_id: str | None = None
        self.app_id: str | None = None
        self.bot_profile: dict[str, Any] | None = None
        self.subtype: str | None = None
        self.blocks: list[Any] | None = None
        self.attachments: list[Any] | None = None
        self.files: list[Any] | None = None
        self.metadata: dict[str, Any] | None = None
        self.edited: dict[str, str] | None = None
        self.reply_keys: list[int] = []
        self.reply_users: list[str] = []
        self.parent_user_id: str | None = None
        self.options: dict[str, Any] = {}
        """What the caller sent that Slack keeps but does not echo (unfurl_*, mrkdwn, ...)."""
        self.actor = "seed" if seeded else "agent"
        self.fields: dict[str, Any] | None = None
        """Wire fields a subtype carries (``inviter``, ``topic``, ``purpose``, ``name``, ``old_name``)."""
        self._wire: str | None = None

    def touch(self) -> None:
        """Forget the cached wire JSON: call after changing a stored message in place."""
        self._wire = None

    def wire(self) -> str:
        """``to_dict()`` as JSON text, cached until ``touch()``: history pages join these."""
        if self._wire is None:
            self._wire = _encode(self.to_dict())
        return self._wire

    @property
    def is_reply(self) -> bool:
        return self.thread_ts is not None and self.thread_ts != self.ts

    @property
    def in_history(self) -> bool:
        """Top-level messages and replies also sent to the channel show in conversations.history."""
        return not self.is_reply or self.subtype == "thread_broadcast"

    def to_dict(self) -> dict[str, Any]:
        """The message object of Slack's wire shape (history, replies, chat.postMessage)."""
        d: dict[str, Any] = {"type": "message"}
        if self.subtype:
            d["subtype"] = self.subtype
        d["text"] = self.text
        d["user"] = self.user
        d["ts"] = self.ts
        if self.bot_id:
            d["bot_id"] = self.bot_id
            d["app_id"] = self.app_id
            d["bot_profile"] = self.bot_profile
        d["team"] = self.team
        if self.fields:
            d.update(self.fields)
        if self.blocks is not None:
            d["blocks"] = self.blocks
        if self.attachments is not None:
            d["attachments"] = self.attachments
        if self.files:
            d["files"] = self.files
        if self.metadata is not None:
            d["metadata"] = self.metadata
        if self.edited is not None:
            d["edited"] = self.edited
        if self.thread_ts is not None:
            d["thread_ts"] = self.thread_ts
            if self.is_reply:
                d["parent_user_id"] = self.parent_user_id
            else:
                d["reply_count"] = len(self.reply_keys)
                d["reply_users_count"] = len(self.reply_users)
                if self.reply_keys:
                    d["latest_reply"] = ts_str(self.reply_keys[-1])
                    d["reply_users"] = list(self.reply_users)
                d["is_locked"] = False
                d["subscribed"] = False
        if self.reactions:
            d["reactions"] = [{"name": name, "users": list(users), "count": len(users)}
                              for name, users in self.reactions.items()]
        return d


class MessageIndex(dict[int, Message]):
    """A conversation's messages by key. A seeded message nobody has read yet is held as its
    ordinal in the channel's shared history plan and built (``build``) the first time it is
    read, so a trial that reads one page of a long history builds one page of messages.

    Reads and writes go through ``[]``, ``get``, ``pop``, ``in`` and iteration over keys;
    ``held`` gives what is stored without building it, ``built`` the built messages.
    """

    __slots__ = ("_build",)

    def __init__(self, seeded: dict[int, int] | None = None,
                 build: Callable[[int], Message] | None = None) -> None:
        super().__init__(seeded or {})  # type: ignore[arg-type]  # ordinals until built
        self._build = build

    def __getitem__(self, key: int) -> Message:
        value: Message | int = dict.__getitem__(self, key)
        return value if type(value) is Message else self._made(key, value)

    def get(self, key: int, default: Any = None) -> Any:  # type: ignore[override]
        value: Message | int | None = dict.get(self, key)
        if value is None:
            return default
        return value if type(value) is Message else self._made(key, value)

    def pop(self, key: int, *default: Any) -> Any:  # type: ignore[override]
        value: Message | int = dict.pop(self, key, *default)
        if type(value) is int and self._build is not None:
            return self._build(value)
        return value

    def values(self) -> list[Message]:  # type: ignore[override]
        return [self[key] for key in self]

    def items(self) -> list[tuple[int, Message]]:  # type: ignore[override]
        return [(key, self[key]) for key in self]

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as held (a checkpoint): a seeded message nobody read stays an ordinal."""
        return type(self), (None, self._build), None, None, iter(dict.items(self))

    def held(self, key: int) -> Message | int:
        """The message under ``key`` if built, else its ordinal in the shared plan."""
        value: Message | int = dict.__getitem__(self, key)
        return value

    def built(self) -> list[Message]:
        """The messages built so far (every message written during the trial is one)."""
        return [value for value in dict.values(self) if type(value) is Message]

    def _made(self, key: int, ordinal: Message | int) -> Message:
        assert self._build is not None and type(ordinal) is int
        message = self._build(ordinal)
        dict.__setitem__(self, key, message)
        return message


class SeededKeys(Protocol):
    """A channel's shared seeded history plan, as a channel reads it (``history.ChannelPlan``)."""

    top: list[int]


class Channel:
    """A conversation: public or private channel, DM (``is_im``) or group DM (``is_mpim``).

    Its seeded history may be deferred (``defer``): it is filled in the first time anything
    reads or writes ``top`` or ``by_key``, so a trial never copies history it does not touch.
    Even then ``by_key`` (a ``MessageIndex``) builds a seeded message only when it is read.
    """

    __slots__ = ("id", "name", "is_private", "is_im", "is_mpim", "topic", "purpose", "created",
                 "creator", "is_archived", "is_general", "members", "member_set", "ref",
                 "topic_set", "purpose_set", "previous_names", "last_read", "closed_by",
                 "_top", "_by_key", "_pending", "_seeded")

    def __init__(self, id: str, name: str, *, created: int, creator: str, is_private: bool = False,
                 is_im: bool = False, is_mpim: bool = False, topic: str = "", purpose: str = "",
                 is_archived: bool = False, ref: str | None = None) -> None:
        self.id = id
        self.name = name
        self.is_private = is_private
        self.is_im = is_im
        self.is_mpim = is_mpim
        self.topic = topic
        self.purpose = purpose
        self.created = created
        self.creator = creator
        self.is_archived = is_archived
        self.is_general = False
        self.members: list[str] = []
        self.member_set: set[str] = set()
        self.ref = ref
        self.topic_set: tuple[str, int] | None = None
        """Who set the topic and when (``conversations.setTopic``); else the creator, at creation."""
        self.purpose_set: tuple[str, int] | None = None
        self.previous_names: list[str] = []
        """Names it had before, the latest first (``conversations.rename``)."""
        self.last_read: dict[str, str] = {}
        """User id -> the ts they marked read (``conversations.mark``)."""
        self.closed_by: set[str] = set()
        """Members who closed this DM or group DM (``conversations.close``) and have not reopened it."""
        self._top: list[int] = []
        self._by_key = MessageIndex()
        self._pending: Callable[[Channel], None] | None = None
        self._seeded: SeededKeys | None = None
        """The shared plan the seeded history came from (a checkpoint names it, see ``__getstate__``)."""

    def __getstate__(self) -> tuple[None, dict[str, Any]]:
        """Its slots, for a checkpoint. The keys of a long history are the seeded plan's, named
        (the plan is shared), and those added since; or, when seeded keys were removed, all of
        them as one block of 64-bit integers."""
        slots = {name: getattr(self, name) for name in self.__slots__ if hasattr(self, name)}
        seeded = self._seeded.top if self._seeded is not None else []
        kept = len(seeded) if seeded and self._top[:len(seeded)] == seeded else 0
        try:
            slots["_top"] = (kept, array("q", self._top[kept:]))
        except (OverflowError, TypeError):
            slots["_top"] = (kept, self._top[kept:])
        return None, slots

    def __setstate__(self, state: tuple[None, dict[str, Any]]) -> None:
        slots = dict(state[1])
        kept, added = slots.pop("_top")
        for name, value in slots.items():
            setattr(self, name, value)
        seeded = self._seeded.top[:kept] if self._seeded is not None else []
        self._top = [*seeded, *added]

    def defer(self, load: Callable[[Channel], None]) -> None:
        """Let ``load(channel)`` add the seeded history the first time it is needed."""
        self._pending = load

    def _load(self) -> None:
        load, self._pending = self._pending, None
        if load is not None:
            load(self)

    @property
    def deferred(self) -> bool:
        """True while the seeded history has not been filled in (nothing touched it yet)."""
        return self._pending is not None

    def seed(self, top: list[int], messages: MessageIndex, seeded: SeededKeys | None = None) -> None:
        """The seeded history: keys of the top-level messages (ascending), the index, and the
        shared plan they came from (``top`` starts as a copy of its keys)."""
        self._top, self._by_key, self._seeded = top, messages, seeded

    @property
    def top(self) -> list[int]:
        """Keys of the messages conversations.history shows, ascending."""
        if self._pending is not None:
            self._load()
        return self._top

    @property
    def by_key(self) -> MessageIndex:
        """Every message of the conversation, replies included."""
        if self._pending is not None:
            self._load()
        return self._by_key

    @property
    def channel_type(self) -> str:
        """The Events API's ``channel_type``."""
        if self.is_im:
            return "im"
        if self.is_mpim:
            return "mpim"
        return "group" if self.is_private else "channel"

    def add_member(self, user_id: str) -> bool:
        if user_id in self.member_set:
            return False
        self.member_set.add(user_id)
        self.members.append(user_id)
        return True

    def remove_member(self, user_id: str) -> bool:
        if user_id not in self.member_set:
            return False
        self.member_set.discard(user_id)
        self.members.remove(user_id)
        return True

    def _set_by(self, value: str, set_by: tuple[str, int] | None) -> dict[str, Any]:
        if not value:
            return {"value": "", "creator": "", "last_set": 0}
        creator, last_set = set_by or (self.creator, self.created)
        return {"value": value, "creator": creator, "last_set": last_set}

    def to_dict(self, viewer: str, *, num_members: bool = False) -> dict[str, Any]:
        """The conversation object as ``viewer`` sees it (``is_member``)."""
        if self.is_im:
            return {"id": self.id, "created": self.created, "is_archived": False, "is_im": True,
                    "is_org_shared": False, "context_team_id": "", "updated": self.created * 1000,
                    "user": next((m for m in self.members if m != viewer), viewer),
                    "is_user_deleted": False, "priority": 0}
        d: dict[str, Any] = {
            "id": self.id, "name": self.name, "is_channel": not self.is_mpim,
            "is_group": self.is_mpim, "is_im": False, "is_mpim": self.is_mpim,
            "is_private": self.is_private, "created": self.created, "is_archived": self.is_archived,
            "is_general": self.is_general, "unlinked": 0, "name_normalized": self.name,
            "is_shared": False, "is_org_shared": False, "is_pending_ext_shared": False,
            "pending_shared": [], "parent_conversation": None, "creator": self.creator,
            "is_ext_shared": False, "shared_team_ids": [], "pending_connected_team_ids": [],
            "is_member": viewer in self.member_set, "updated": self.created * 1000,
            "topic": self._set_by(self.topic, self.topic_set),
            "purpose": self._set_by(self.purpose, self.purpose_set),
            "previous_names": list(self.previous_names),
        }
        if viewer in self.last_read:
            d["last_read"] = self.last_read[viewer]
        if num_members:
            d["num_members"] = len(self.members)
        return d


class SlackState:
    """The workspace: the state checks read (``channels``, ``users``, ``messages_in``, ``message``)."""

    def __init__(self, team_id: str, team_name: str, domain: str) -> None:
        self.team = {"id": team_id, "name": team_name, "domain": domain}
        self.users: dict[str, User] = {}
        self.channels: dict[str, Channel] = {}
        self.channel_ids_by_name: dict[str, str] = {}
        self.user_ids_by_email: dict[str, str] = {}
        self.dms: dict[frozenset[str], str] = {}
        """Members of a DM or group DM -> its id."""
        self.scheduled = ScheduledMessages()
        """Messages waiting for their ``post_at`` (chat.scheduleMessage)."""
        self.ephemeral: list[EphemeralMessage] = []
        """Ephemeral messages sent during the trial, in order (chat.postEphemeral): in no history."""
        self.streaming: set[tuple[str, int]] = set()
        """(channel id, key) of messages being streamed (chat.startStream until chat.stopStream)."""
        self.files = FileStore()
        """Files uploaded during the trial (files.getUploadURLExternal, files.completeUploadExternal)."""
        self.views = ViewStore()
        """Modals and Home tabs the app opened or published (views.*), and trigger ids issued."""
        self.pins = Pins()
        self.bookmarks = Bookmarks()
        self.usergroups = Usergroups()
        self.reacted = Reacted()
        """Who reacted to which message during the trial (reactions.list)."""
        self.reminders = Reminders()
        """Reminders people set (reminders.add)."""

    # --- reads (checks use these) -------------------------------------------------------

    def messages_written(self, channel_id: str) -> list[Message]:
        """The conversation's messages written during the trial (not seeded), in ts order,
        without building its seeded history."""
        channel = self.channels.get(channel_id)
        if channel is None or channel.deferred:
            return []
        return sorted((m for m in channel.by_key.built() if not m.seeded), key=lambda m: m.key)

    def messages_in(self, channel_id: str, include_replies: bool = True) -> list[Message]:
        """The conversation's messages in ts order; without replies, as history shows them."""
        channel = self.channels.get(channel_id)
        if channel is None:
            return []
        if include_replies:
            return [channel.by_key[k] for k in sorted(channel.by_key)]
        return [channel.by_key[k] for k in channel.top]

    def message(self, channel_id: str, ts: str) -> Message | None:
        channel = self.channels.get(channel_id)
        key = ts_key(ts)
        if channel is None or key is None:
            return None
        return channel.by_key.get(key)

    def channel_named(self, name: str) -> Channel | None:
        channel_id = self.channel_ids_by_name.get(name)
        return self.channels.get(channel_id) if channel_id else None

    # --- writes -------------------------------------------------------------------------

    def add_user(self, user: User) -> None:
        self.users[user.id] = user
        if user.email:
            self.user_ids_by_email[user.email.lower()] = user.id

    def add_channel(self, channel: Channel) -> None:
        self.channels[channel.id] = channel
        if not (channel.is_im or channel.is_mpim):
            self.channel_ids_by_name[channel.name] = channel.id

    def rename_channel(self, channel: Channel, name: str) -> None:
        """Give a channel a new name (its old one is free again and kept in ``previous_names``)."""
        if self.channel_ids_by_name.get(channel.name) == channel.id:
            del self.channel_ids_by_name[channel.name]
        channel.previous_names.insert(0, channel.name)
        channel.name = name
        self.channel_ids_by_name[name] = channel.id

    def add_message(self, message: Message, parent: Message | None = None) -> None:
        """Store a message; ``parent`` when it is a thread reply (keeps the reply index)."""
        channel = self.channels[message.channel]
        channel.by_key[message.key] = message
        if message.in_history:
            _insert(channel.top, message.key)
        if parent is not None:
            parent.touch()
            parent.thread_ts = parent.ts
            message.parent_user_id = parent.user
            _insert(parent.reply_keys, message.key)
            if message.user not in parent.reply_users:
                parent.reply_users.append(message.user)

    def remove_message(self, message: Message) -> None:
        channel = self.channels[message.channel]
        channel.by_key.pop(message.key, None)
        if message.in_history:
            _remove(channel.top, message.key)
        if message.is_reply and message.thread_ts is not None:
            parent_key = ts_key(message.thread_ts)
            parent = channel.by_key.get(parent_key) if parent_key is not None else None
            if parent is not None:
                parent.touch()
                _remove(parent.reply_keys, message.key)
                parent.reply_users = _unique(channel.by_key[k].user for k in parent.reply_keys)

    def free_key(self, channel_id: str, key: int) -> int:
        """``key``, or the next microsecond no message of the channel has."""
        taken = self.channels[channel_id].by_key
        while key in taken:
            key += 1
        return key


def _insert(keys: list[int], key: int) -> None:
    if not keys or key > keys[-1]:
        keys.append(key)  # the usual case: a new message is the newest
    else:
        insort(keys, key)


def _remove(keys: list[int], key: int) -> None:
    i = bisect_left(keys, key)
    if i < len(keys) and keys[i] == key:
        del keys[i]


def _unique(users: Any) -> list[str]:
    seen: list[str] = []
    for user in users:
        if user not in seen:
            seen.append(user)
    return seen
