"""Remote files (``files.remote.*``): files that live in another service, which an app
registers in Slack by its own ``external_id`` and URL, and then shares into conversations.

A remote file belongs to the whole workspace (any member may see it once it is shared;
its app sees it always). ``url_private`` is the file's ``external_url``, as Slack gives
it: that URL is the app's own, never Slack's. ``permalink`` leads to this replica.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ancha.world.tools.slack.real_hosts import SlackAddresses

MAX_EXTERNAL_ID = 255
"""Longer ``external_id``s get ``invalid_external_id``."""
MAX_TITLE = 255
"""Longer titles get ``bad_title``."""


class RemoteFile:
    """One registered remote file. ``shares``: conversation id -> the ts of each message that
    shared it there, in share order."""

    __slots__ = (
        "id",
        "external_id",
        "external_url",
        "title",
        "filetype",
        "user",
        "team",
        "created",
        "updated",
        "indexable",
        "has_preview",
        "shares",
        "removed",
    )

    def __init__(
        self,
        id: str,
        external_id: str,
        external_url: str,
        title: str,
        user: str,
        team: str,
        created: int,
        *,
        filetype: str | None = None,
    ) -> None:
        self.id = id
        self.external_id = external_id
        self.external_url = external_url
        self.title = title
        self.filetype = filetype
        self.user = user
        self.team = team
        self.created = created
        self.updated = created
        self.indexable = ""
        """``indexable_file_contents``: the words search matches the file by."""
        self.has_preview = False
        self.shares: dict[str, list[str]] = {}
        self.removed = False

    def to_dict(self, urls: SlackAddresses, share_kinds: dict[str, str]) -> dict[str, Any]:
        """Slack's file object of a remote file. ``share_kinds``: conversation id -> ``public``,
        ``private`` or ``im``."""
        channels: list[str] = []
        groups: list[str] = []
        ims: list[str] = []
        shares: dict[str, dict[str, list[dict[str, Any]]]] = {}
        for channel_id, stamps in self.shares.items():
            kind = share_kinds.get(channel_id, "public")
            (channels if kind == "public" else ims if kind == "im" else groups).append(channel_id)
            shares.setdefault("public" if kind == "public" else "private", {})[channel_id] = [
                {
                    "reply_users": [],
                    "reply_users_count": 0,
                    "reply_count": 0,
                    "ts": ts,
                    "share_user_id": self.user,
                    "source": "UNKNOWN",
                }
                for ts in stamps
            ]
        d: dict[str, Any] = {
            "id": self.id,
            "created": self.created,
            "timestamp": self.created,
            "name": self.title,
            "title": self.title,
            "mimetype": "application/vnd.slack-remote",
            "filetype": self.filetype or "remote",
            "pretty_type": "Remote",
            "user": self.user,
            "user_team": self.team,
            "editable": False,
            "size": 0,
            "mode": "external",
            "is_external": True,
            "external_type": "app",
            "is_public": bool(channels),
            "public_url_shared": False,
            "display_as_bot": False,
            "username": "",
            "url_private": self.external_url,
            "media_display_type": "unknown",
            "permalink": f"{urls.workspace}/files/{self.user}/{self.id}/{self.title}",
            "comments_count": 0,
            "is_starred": False,
            "shares": shares,
            "channels": channels,
            "groups": groups,
            "ims": ims,
            "external_id": self.external_id,
            "external_url": self.external_url,
            "has_rich_preview": self.has_preview,
            "file_access": "visible",
        }
        if self.updated != self.created:
            d["updated"] = self.updated
        return d


class RemoteFiles:
    """The workspace's remote files, by id and by ``external_id``, in the order they were added."""

    __slots__ = ("by_id", "by_external_id")

    def __init__(self) -> None:
        self.by_id: dict[str, RemoteFile] = {}
        self.by_external_id: dict[str, RemoteFile] = {}

    def add(self, file: RemoteFile) -> None:
        self.by_id[file.id] = file
        self.by_external_id[file.external_id] = file

    def remove(self, file: RemoteFile) -> None:
        file.removed = True
        self.by_id.pop(file.id, None)
        if self.by_external_id.get(file.external_id) is file:
            del self.by_external_id[file.external_id]

    def all(self) -> list[RemoteFile]:
        return list(self.by_id.values())
