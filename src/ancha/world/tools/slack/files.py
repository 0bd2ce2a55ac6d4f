"""Files: what ``files.getUploadURLExternal`` starts, the upload URL fills and
``files.completeUploadExternal`` names and shares.

A file's bytes live with it (uploads are capped, ``MAX_FILE_BYTES``); its wire object
(``to_dict``) carries Slack's fields, and the URLs in it (``url_private``, ``permalink``,
``permalink_public``) point at this replica, where ``file_urls.py`` serves them. A file is visible to its uploader and to whoever can see a
conversation it is shared in.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ancha.world.tools.slack.remote_files import RemoteFiles

if TYPE_CHECKING:
    from ancha.world.tools.slack.real_hosts import SlackAddresses

MAX_FILE_BYTES = 8 * 1024 * 1024
"""The replica's upload limit (Slack's own is 1 GB): under the server's 10 MiB body limit,
with room for a multipart envelope. A larger ``length`` gets ``file_upload_size_restricted``,
Slack's answer for a workspace that restricts large uploads."""
MAX_SNIPPET_BYTES = 1024 * 1024
"""Snippets (an upload with ``snippet_type``) are limited to 1 MB, as in Slack."""

_TYPES: dict[str, tuple[str, str, str]] = {
    # extension -> (filetype, mimetype, pretty_type), as Slack names them
    "txt": ("text", "text/plain", "Plain Text"),
    "log": ("text", "text/plain", "Plain Text"),
    "md": ("markdown", "text/plain", "Markdown (raw)"),
    "csv": ("csv", "text/csv", "CSV"),
    "tsv": ("tsv", "text/tab-separated-values", "TSV"),
    "json": ("json", "application/json", "JSON"),
    "yaml": ("yaml", "text/plain", "YAML"),
    "yml": ("yaml", "text/plain", "YAML"),
    "xml": ("xml", "text/xml", "XML"),
    "html": ("html", "text/html", "HTML"),
    "py": ("python", "text/plain", "Python"),
    "js": ("javascript", "text/plain", "JavaScript"),
    "sh": ("shell", "text/plain", "Shell"),
    "sql": ("sql", "text/plain", "SQL"),
    "diff": ("diff", "text/plain", "Diff"),
    "png": ("png", "image/png", "PNG"),
    "jpg": ("jpg", "image/jpeg", "JPEG"),
    "jpeg": ("jpg", "image/jpeg", "JPEG"),
    "gif": ("gif", "image/gif", "GIF"),
    "svg": ("svg", "image/svg+xml", "SVG"),
    "pdf": ("pdf", "application/pdf", "PDF"),
    "zip": ("zip", "application/zip", "Zip"),
    "gz": ("gzip", "application/x-gzip", "GZip"),
}
_BINARY = ("binary", "application/octet-stream", "Binary")
LIST_TYPES = {"all", "spaces", "snippets", "images", "gdocs", "zips", "pdfs"}
"""``files.list``'s ``types`` values."""


def kind_of(filename: str, snippet_type: str | None = None) -> tuple[str, str, str]:
    """``(filetype, mimetype, pretty_type)`` of a file by its name (a snippet by its type)."""
    if snippet_type:
        return snippet_type, "text/plain", snippet_type.capitalize()
    _, dot, extension = filename.rpartition(".")
    return _TYPES.get(extension.lower(), _BINARY) if dot else _BINARY


class SlackFile:
    """One upload. ``data`` is None until the upload URL receives the bytes; ``completed``
    once ``files.completeUploadExternal`` named it; ``deleted`` after ``files.delete``."""

    __slots__ = ("id", "ticket", "user", "actor", "team", "name", "title", "length", "alt_txt", "snippet_type",
                 "created", "data", "completed", "deleted", "shares")

    def __init__(self, id: str, ticket: str, user: str, team: str, name: str, length: int, created: int, *,
                 actor: str = "agent", alt_txt: str | None = None, snippet_type: str | None = None) -> None:
        self.id = id
        self.ticket = ticket
        self.user = user
        self.actor = actor
        """Who uploads it (the trace actor of the token that asked for the upload URL)."""
        self.team = team
        self.name = name
        self.title = name
        self.length = length
        self.alt_txt = alt_txt
        self.snippet_type = snippet_type
        self.created = created
        self.data: bytes | None = None
        self.completed = False
        self.deleted = False
        self.shares: dict[str, list[dict[str, Any]]] = {}
        """Conversation id -> its shares (the message that carries the file, in share order)."""

    @property
    def size(self) -> int:
        return len(self.data) if self.data is not None else self.length

    def url_path(self, download: bool = False) -> str:
        """Where the replica serves the bytes, below the tool's base URL."""
        return f"/files-pri/{self.team}-{self.id}/{'download/' if download else ''}{self.name}"

    def to_dict(self, urls: SlackAddresses, share_kinds: dict[str, str]) -> dict[str, Any]:
        """Slack's file object. ``share_kinds``: conversation id -> ``public``, ``private``
        or ``im``, for the conversations it is shared in."""
        filetype, mimetype, pretty = kind_of(self.name, self.snippet_type)
        shares: dict[str, dict[str, list[dict[str, Any]]]] = {}
        channels: list[str] = []
        groups: list[str] = []
        ims: list[str] = []
        for channel_id, entries in self.shares.items():
            kind = share_kinds.get(channel_id, "public")
            shares.setdefault("public" if kind == "public" else "private", {})[channel_id] = [dict(e) for e in entries]
            (channels if kind == "public" else ims if kind == "im" else groups).append(channel_id)
        d: dict[str, Any] = {
            "id": self.id, "created": self.created, "timestamp": self.created, "name": self.name,
            "title": self.title, "mimetype": mimetype, "filetype": filetype, "pretty_type": pretty,
            "user": self.user, "user_team": self.team, "editable": self.snippet_type is not None,
            "size": self.size, "mode": "snippet" if self.snippet_type else "hosted", "is_external": False,
            "external_type": "", "is_public": bool(channels), "public_url_shared": False,
            "display_as_bot": False, "username": "",
            "url_private": urls.files + self.url_path(), "url_private_download": urls.files + self.url_path(True),
            "permalink": f"{urls.workspace}/files/{self.user}/{self.id}/{self.name}",
            "permalink_public": f"{urls.public_files}/{self.team}-{self.id}-{self.ticket[:10].lower()}",
            "comments_count": 0, "is_starred": False, "shares": shares, "channels": channels,
            "groups": groups, "ims": ims, "has_rich_preview": False, "file_access": "visible",
        }
        if self.alt_txt:
            d["alt_txt"] = self.alt_txt
        if mimetype.startswith("text/") and self.data is not None:
            d["preview"] = self.data[:1024].decode("utf-8", "replace")
        return d

    def tombstone(self) -> dict[str, Any]:
        """What a message that carried a deleted file shows in its place."""
        return {"id": self.id, "mode": "tombstone"}


class FileStore:
    """Every file of the workspace, by id and by upload ticket, in upload order (and the
    remote files, apart)."""

    def __init__(self) -> None:
        self.by_id: dict[str, SlackFile] = {}
        self.by_ticket: dict[str, SlackFile] = {}
        self.remote = RemoteFiles()
        """The files apps registered with ``files.remote.add``."""

    def add(self, file: SlackFile) -> None:
        self.by_id[file.id] = file
        self.by_ticket[file.ticket] = file

    def get(self, file_id: str | None) -> SlackFile | None:
        return self.by_id.get(file_id.strip()) if file_id else None

    def shared(self) -> list[SlackFile]:
        """Files whose upload was completed, oldest first (deleted ones included)."""
        return [f for f in self.by_id.values() if f.completed]
