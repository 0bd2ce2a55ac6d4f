"""The file URLs outside the Web API: the upload URL and a file's ``url_private``.

``files.getUploadURLExternal`` hands out ``<base>/upload/v1/<ticket>``: the bytes are
POSTed there with no token (the URL is the credential), raw or as a multipart form, and
Slack answers 200 ``OK - <size>``. ``url_private`` (``<base>/files-pri/<team>-<file>/<name>``,
and ``.../download/<name>``) gives the bytes to a token that can see the file; without
one Slack redirects to its sign-in page.
"""

from __future__ import annotations

import json
from email.parser import BytesParser
from email.policy import HTTP
from typing import TYPE_CHECKING
from urllib.parse import quote

from ancha.world.kernel.tool import ToolRequest, ToolResponse
from ancha.world.tools.slack import web_pages
from ancha.world.tools.slack.files import MAX_FILE_BYTES, SlackFile, kind_of

if TYPE_CHECKING:
    from ancha.world.tools.slack.replica import SlackReplica

_TEXT = "text/plain; charset=utf-8"


def serve(replica: SlackReplica, request: ToolRequest) -> ToolResponse:
    """Answer a request below the tool's base URL that is not ``/api/...``."""
    path = request.path
    if path.startswith("/upload/v1/") and request.method == "POST":
        return _upload(replica, path.removeprefix("/upload/v1/"), request)
    if request.method not in ("GET", "HEAD"):
        return ToolResponse(404, b"Not Found", _TEXT, vendor_ok=False)
    if path.startswith("/files-pri/"):
        return _download(replica, path, request)
    return web_pages.serve(replica, path)


def _upload(replica: SlackReplica, ticket: str, request: ToolRequest) -> ToolResponse:
    file = replica.state.files.by_ticket.get(ticket.strip("/"))
    actor = file.actor if file is not None else "agent"
    if file is None or file.completed or file.deleted:
        return ToolResponse(404, b"Not Found", _TEXT, actor=actor, vendor_ok=False)
    data = _posted_bytes(request)
    if len(data) > MAX_FILE_BYTES:
        body = json.dumps({"ok": False, "error": "request_too_large"}).encode()
        return ToolResponse(413, body, "application/json; charset=utf-8", actor=actor, vendor_ok=False)
    file.data = data
    return ToolResponse(200, f"OK - {len(data)}".encode(), _TEXT, actor=actor)


def _posted_bytes(request: ToolRequest) -> bytes:
    """The file's bytes: the body itself, or the file part of a multipart form (``-F file=@x``)."""
    content_type = request.headers.get("content-type", "")
    if content_type.partition(";")[0].strip().lower() != "multipart/form-data":
        return request.body
    head = f"Content-Type: {content_type}\r\n\r\n".encode("latin-1")
    form = BytesParser(policy=HTTP).parsebytes(head + request.body)
    parts = [part for part in form.iter_parts() if part.get_content_disposition() == "form-data"]
    chosen = next((part for part in parts if part.get_filename()), parts[0] if parts else None)
    payload = chosen.get_payload(decode=True) if chosen is not None else None
    return payload if isinstance(payload, bytes) else request.body


def _download(replica: SlackReplica, path: str, request: ToolRequest) -> ToolResponse:
    key, _, _ = path.removeprefix("/files-pri/").partition("/")
    _, _, file_id = key.partition("-")
    file = replica.state.files.by_id.get(file_id)
    auth = request.headers.get("authorization", "")
    caller = replica.tokens.get(auth[7:].strip()) if auth[:7].lower() == "bearer " else None
    if caller is None:
        login = f"{replica.urls.workspace}/?redir={quote(path, safe='')}"
        return ToolResponse(302, b"", "", headers={"location": login}, vendor_ok=False)
    if file is None or file.data is None or file.deleted or not _visible(replica, file, caller.user_id):
        return ToolResponse(404, b"Not Found", _TEXT, actor=caller.actor, vendor_ok=False)
    _, mimetype, _ = kind_of(file.name, file.snippet_type)
    headers = {"content-disposition": f"attachment; filename=\"{quote(file.name)}\""} if "/download/" in path else {}
    return ToolResponse(200, file.data, mimetype, headers=headers, actor=caller.actor)


def _visible(replica: SlackReplica, file: SlackFile, user_id: str) -> bool:
    if file.user == user_id:
        return True
    for channel_id in file.shares:
        channel = replica.state.channels.get(channel_id)
        if channel is not None and (user_id in channel.member_set
                                    or not (channel.is_private or channel.is_im or channel.is_mpim)):
            return True
    return False
