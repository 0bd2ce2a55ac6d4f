"""files.*: the v2 upload (``files.getUploadURLExternal``, a POST of the bytes to the
upload URL, ``files.completeUploadExternal``), reading and deleting files.

This is the sequence ``slack_sdk``'s ``files_upload_v2`` runs. Completing an upload with
a ``channel_id`` (or ``channels``) shares it: a message carrying the files, with the
``initial_comment`` as its text, is posted there (in ``thread_ts``'s thread if given),
as Slack does. The retired ``files.upload`` answers ``method_deprecated``, as Slack has
answered apps since it switched the method off (March 2025 for new apps, November 2025
for all).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ancha.world.tools.slack import errors
from ancha.world.tools.slack.call import Call, Handler
from ancha.world.tools.slack.files import LIST_TYPES, MAX_FILE_BYTES, MAX_SNIPPET_BYTES, SlackFile, kind_of
from ancha.world.tools.slack.models import Channel, Message
from ancha.world.tools.slack.routes.chat import thread_parent
from ancha.world.tools.slack.seed import new_id

MAX_ALT_TXT = 1000
MAX_SHARE_CHANNELS = 100
LIST_COUNT = 100
_BLOCKS_MAX = 50


def files_get_upload_url_external(call: Call) -> dict[str, Any]:
    p = call.params
    filename = p.required("filename")
    length = p.get_int("length", 0) if p.has("length") else None
    if length is None:
        raise errors.InvalidArguments("[ERROR] missing required field: length")
    if length <= 0:
        raise errors.MissingArgument()
    snippet_type = p.get_str("snippet_type")
    alt_txt = p.get_str("alt_txt")
    if alt_txt is not None and len(alt_txt) > MAX_ALT_TXT:
        raise errors.AltTxtTooLarge()
    if snippet_type is not None and length > MAX_SNIPPET_BYTES:
        raise errors.SnippetTooLarge()
    if length > MAX_FILE_BYTES:
        raise errors.FileUploadSizeRestricted()
    replica = call.replica
    # The upload URL is a capability (no token goes with the bytes): random, like a token.
    file = SlackFile(new_id(replica.world, "F"), replica.world.secrets.token_urlsafe(24), call.caller.user_id,
                     call.state.team["id"], filename, length, int(replica.world.clock.peek()),
                     actor=call.caller.actor, alt_txt=alt_txt, snippet_type=snippet_type)
    call.state.files.add(file)
    return {"ok": True, "upload_url": f"{replica.urls.files}/upload/v1/{file.ticket}", "file_id": file.id}


def files_complete_upload_external(call: Call) -> dict[str, Any]:
    p = call.params
    items = _file_items(call)
    uploads: list[tuple[SlackFile, str | None]] = []
    for item in items:
        file = call.state.files.get(str(item["id"]))
        if file is None or file.user != call.caller.user_id or file.deleted or file.completed or file.data is None:
            # Unknown, someone else's, already completed, or its bytes never arrived.
            raise errors.FileNotFound()
        title = item.get("title")
        uploads.append((file, str(title) if title not in (None, "") else None))
    targets = _share_targets(call)
    thread_ts = p.get_str("thread_ts")
    if thread_ts and len(targets) > 1:
        raise errors.InvalidArguments("[ERROR] thread_ts can only be used with a single channel")
    channels = [call.writable_channel(target) for target in targets]  # every check before any write
    parents = [thread_parent(call, channel, thread_ts) for channel in channels]
    blocks = _blocks(call)
    for file, title in uploads:
        file.completed = True
        if title is not None:
            file.title = title
    for channel, parent in zip(channels, parents, strict=True):
        _share(call, [file for file, _ in uploads], channel, parent, blocks)
    return {"ok": True, "files": [file_dict(call, file) for file, _ in uploads]}


def files_upload(call: Call) -> dict[str, Any]:
    raise errors.MethodDeprecated()


def files_info(call: Call) -> dict[str, Any]:
    file = _visible_file(call)
    return {"ok": True, "file": file_dict(call, file), "comments": [],
            "response_metadata": {"next_cursor": ""}}


def files_list(call: Call) -> dict[str, Any]:
    p = call.params
    user = p.get_str("user")
    if user is not None and user.strip() not in call.state.users:
        raise errors.UserNotFound()
    channel = call.find_channel(p.get_str("channel")) if p.has("channel") else None
    types = {t.strip() for t in (p.get_str("types") or "all").split(",") if t.strip()}
    if not types <= LIST_TYPES:
        raise errors.UnknownType()
    ts_from = p.get_int("ts_from", 0)
    ts_to = p.get_int("ts_to", 0)
    count = max(1, min(p.get_int("count", LIST_COUNT), 1000))
    page = max(1, p.get_int("page", 1))
    found = []
    for file in reversed(call.state.files.shared()):  # newest first, as Slack lists them
        if file.deleted or not visible(call, file):
            continue
        if user is not None and file.user != user.strip():
            continue
        if channel is not None and channel.id not in file.shares:
            continue
        if (ts_from and file.created < ts_from) or (ts_to and file.created > ts_to):
            continue
        if "all" not in types and not _of_types(file, types):
            continue
        found.append(file)
    pages = max(1, -(-len(found) // count))
    shown = found[(page - 1) * count:page * count]
    return {"ok": True, "files": [file_dict(call, f) for f in shown],
            "paging": {"count": count, "total": len(found), "page": page, "pages": pages}}


def files_delete(call: Call) -> dict[str, Any]:
    file = _visible_file(call)
    if file.user != call.caller.user_id:
        raise errors.CantDeleteFile()
    file.deleted = True
    for channel_id, shares in file.shares.items():
        for share in shares:
            message = call.state.message(channel_id, str(share["ts"]))
            if message is not None and message.files:
                message.files = [file.tombstone() if f.get("id") == file.id else f for f in message.files]
                message.touch()
    return {"ok": True}


# --- shared --------------------------------------------------------------------------


def _file_items(call: Call) -> list[dict[str, Any]]:
    if not call.params.has("files"):
        raise errors.InvalidArguments("[ERROR] missing required field: files")
    try:
        items = call.params.get_json("files")
    except ValueError as exc:
        raise errors.InvalidArguments("[ERROR] files must be a JSON array [json-pointer:/files]") from exc
    if not isinstance(items, list) or not items:
        raise errors.InvalidArguments("[ERROR] files must be a non-empty JSON array [json-pointer:/files]")
    for i, item in enumerate(items):
        if not isinstance(item, dict) or not isinstance(item.get("id"), str) or not item["id"]:
            raise errors.InvalidArguments(f"[ERROR] missing required field: id [json-pointer:/files/{i}]")
    return items


def _share_targets(call: Call) -> list[str]:
    p = call.params
    targets: list[str] = []
    channel_id = p.get_str("channel_id")
    if channel_id:
        targets.append(channel_id.strip())
    for target in _channel_list(p.get_str("channels") or ""):
        if target not in targets:
            targets.append(target)
    if len(targets) > MAX_SHARE_CHANNELS:
        raise errors.InvalidArguments(f"[ERROR] no more than {MAX_SHARE_CHANNELS} channels allowed")
    return targets


def _channel_list(value: str) -> list[str]:
    """``channels``' ids. slack_sdk's ``files_upload_v2(channels="C0123")`` joins the string
    it was given character by character (``"C,0,1,2,3"``), and Slack shares the file in
    ``C0123`` all the same: a list of single characters is read as that one id."""
    parts = [part.strip() for part in value.split(",") if part.strip()]
    if len(parts) > 1 and all(len(part) == 1 for part in parts):
        return ["".join(parts)]
    return parts


def _blocks(call: Call) -> list[Any] | None:
    """The message's blocks, when there is no ``initial_comment`` (which wins, as in Slack)."""
    if call.params.has("initial_comment") or not call.params.has("blocks"):
        return None
    try:
        blocks = call.params.get_json("blocks")
    except ValueError as exc:
        raise errors.InvalidBlocksFormat() from exc
    if not isinstance(blocks, list) or len(blocks) > _BLOCKS_MAX:
        raise errors.InvalidBlocksFormat()
    for i, block in enumerate(blocks):
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            raise errors.InvalidBlocks(f"[ERROR] missing required field: type [json-pointer:/blocks/{i}]")
    return blocks


def _share(call: Call, files: list[SlackFile], channel: Channel, parent: Message | None,
           blocks: list[Any] | None) -> None:
    """Post the message that carries ``files`` in ``channel``, and record the share on each."""
    replica = call.replica
    message = replica.new_message(channel, call.caller, call.params.get_str("initial_comment") or "", parent=parent)
    message.blocks = blocks
    for file in files:
        share: dict[str, Any] = {"reply_users": [], "reply_users_count": 0, "reply_count": 0, "ts": message.ts,
                                 "channel_name": channel.name, "team_id": call.state.team["id"],
                                 "share_user_id": call.caller.user_id, "source": "UNKNOWN"}
        if parent is not None:
            share["thread_ts"] = parent.ts
        file.shares.setdefault(channel.id, []).append(share)
    message.files = [file_dict(call, file) for file in files]
    replica.post(message, channel, parent)


def file_dict(call: Call, file: SlackFile) -> dict[str, Any]:
    return file.to_dict(call.replica.urls, share_kinds(call, file.shares))


def share_kinds(call: Call, shares: Mapping[str, object]) -> dict[str, str]:
    """Conversation id -> ``public``, ``private`` or ``im``, for each conversation in ``shares``."""
    kinds: dict[str, str] = {}
    for channel_id in shares:
        channel = call.state.channels.get(channel_id)
        if channel is not None:
            kinds[channel_id] = "im" if channel.is_im else "private" if channel.is_private or channel.is_mpim \
                else "public"
    return kinds


def _visible_file(call: Call) -> SlackFile:
    file = call.state.files.get(call.params.get_str("file"))
    if file is None or not file.completed or not visible(call, file):
        raise errors.FileNotFound()
    if file.deleted:
        raise errors.FileDeleted()
    return file


def visible(call: Call, file: SlackFile) -> bool:
    if file.user == call.caller.user_id:
        return True
    return any((channel := call.state.channels.get(cid)) is not None and call.can_see(channel)
               for cid in file.shares)


def _of_types(file: SlackFile, types: set[str]) -> bool:
    filetype, mimetype, _ = kind_of(file.name, file.snippet_type)
    return (("images" in types and mimetype.startswith("image/"))
            or ("zips" in types and filetype == "zip")
            or ("pdfs" in types and filetype == "pdf")
            or ("snippets" in types and file.snippet_type is not None))


ROUTES: dict[str, Handler] = {
    "files.getUploadURLExternal": files_get_upload_url_external,
    "files.completeUploadExternal": files_complete_upload_external,
    "files.upload": files_upload,
    "files.info": files_info,
    "files.list": files_list,
    "files.delete": files_delete,
}

PARTIAL: dict[str, str] = {
    "files.getUploadURLExternal": f"uploads are capped at {MAX_FILE_BYTES // (1024 * 1024)} MB "
                                  "(file_upload_size_restricted), not Slack's 1 GB",
    "files.completeUploadExternal": "shares at once (Slack shares asynchronously); no thumbnails or previews "
                                    "beyond a text file's first kilobyte",
    "files.info": "no comments; no content for snippets",
    "files.list": "only files uploaded during the trial (files on seeded messages are not listed); "
                  "types spaces and gdocs match nothing",
}
"""What each method here still lacks (the coverage ledger's ``partial`` notes)."""
