"""files.remote.*: registering files that live in another service, sharing them into
conversations, and finding, changing and removing them.

``files.remote.add`` is an upsert by ``external_id``, as in Slack; a file is then named by
``file`` (its ``F`` id) or ``external_id``, never both (``too_many_ids``). Sharing posts a
message carrying the file, from the app, in each channel of ``channels``.
"""

from __future__ import annotations

from typing import Any

from ancha.world.tools.slack import errors
from ancha.world.tools.slack.call import Call, Handler
from ancha.world.tools.slack.params import encode_cursor
from ancha.world.tools.slack.remote_files import MAX_EXTERNAL_ID, MAX_TITLE, RemoteFile
from ancha.world.tools.slack.routes.files import share_kinds
from ancha.world.tools.slack.seed import new_id

LIST_LIMIT = 100
_CURSOR = "remote_file"


def files_remote_add(call: Call) -> dict[str, Any]:
    p = call.params
    external_id = p.required("external_id").strip()
    external_url = p.required("external_url").strip()
    title = p.required("title")
    _check(external_id, title)
    file = call.state.files.remote.by_external_id.get(external_id)
    if file is None:
        now = int(call.replica.world.clock.peek())
        file = RemoteFile(
            new_id(call.replica.world, "F"),
            external_id,
            external_url,
            title,
            call.caller.user_id,
            call.state.team["id"],
            now,
            filetype=p.get_str("filetype"),
        )
        call.state.files.remote.add(file)
    else:  # an upsert: adding an external_id again updates that file
        file.external_url, file.title = external_url, title
        file.updated = int(call.replica.world.clock.peek())
        if p.has("filetype"):
            file.filetype = p.get_str("filetype")
    _take_contents(call, file)
    return {"ok": True, "file": remote_dict(call, file)}


def files_remote_info(call: Call) -> dict[str, Any]:
    return {"ok": True, "file": remote_dict(call, _named(call))}


def files_remote_list(call: Call) -> dict[str, Any]:
    p = call.params
    channel = call.find_channel(p.get_str("channel")) if p.has("channel") else None
    ts_from = p.get_int("ts_from", 0)
    ts_to = p.get_int("ts_to", 0)
    limit = max(1, min(p.get_int("limit", LIST_LIMIT), 1000))
    after = p.cursor(_CURSOR)
    found = []
    for file in reversed(call.state.files.remote.all()):  # the newest first
        if channel is not None and channel.id not in file.shares:
            continue
        if (ts_from and file.created < ts_from) or (ts_to and file.created > ts_to):
            continue
        if not _visible(call, file):
            continue
        found.append(file)
    start = next((i + 1 for i, f in enumerate(found) if f.id == after), 0) if after else 0
    page = found[start : start + limit]
    more = start + limit < len(found)
    return {
        "ok": True,
        "files": [remote_dict(call, f) for f in page],
        "response_metadata": {"next_cursor": encode_cursor(_CURSOR, page[-1].id) if more and page else ""},
    }


def files_remote_update(call: Call) -> dict[str, Any]:
    p = call.params
    file = _named(call)
    title = p.get_str("title")
    _check(file.external_id, title or file.title)
    if title is not None:
        file.title = title
    if p.has("external_url"):
        file.external_url = str(p.get_str("external_url")).strip()
    if p.has("filetype"):
        file.filetype = p.get_str("filetype")
    _take_contents(call, file)
    file.updated = int(call.replica.world.clock.peek())
    return {"ok": True, "file": remote_dict(call, file)}


def files_remote_remove(call: Call) -> dict[str, Any]:
    file = _named(call)
    call.state.files.remote.remove(file)
    return {"ok": True}


def files_remote_share(call: Call) -> dict[str, Any]:
    p = call.params
    file = _named(call)
    targets = [t.strip() for t in (p.get_str("channels") or "").split(",") if t.strip()]
    if not targets:
        raise errors.InvalidArguments("[ERROR] missing required field: channels")
    channels = [call.writable_channel(target) for target in targets]  # every check before any write
    for channel in channels:
        message = call.replica.new_message(channel, call.caller, "")
        file.shares.setdefault(channel.id, []).append(message.ts)
        message.files = [remote_dict(call, file)]
        message.options["upload"] = False
        call.replica.post(message, channel, None)
    return {"ok": True, "file": remote_dict(call, file)}


# --- shared --------------------------------------------------------------------------


def remote_dict(call: Call, file: RemoteFile) -> dict[str, Any]:
    return file.to_dict(call.replica.urls, share_kinds(call, file.shares))


def _check(external_id: str, title: str) -> None:
    if not external_id or len(external_id) > MAX_EXTERNAL_ID:
        raise errors.InvalidExternalId()
    if not title.strip() or len(title) > MAX_TITLE:
        raise errors.BadTitle()


def _take_contents(call: Call, file: RemoteFile) -> None:
    """The optional multipart parts: ``indexable_file_contents`` (text to search by) and
    ``preview_image`` (kept only as "has a preview")."""
    contents = call.params.values.get("indexable_file_contents")
    if isinstance(contents, bytes):
        file.indexable = contents.decode("utf-8", "replace")
    elif isinstance(contents, str) and contents:
        file.indexable = contents
    if call.params.values.get("preview_image") not in (None, ""):
        file.has_preview = True


def _named(call: Call) -> RemoteFile:
    """The remote file ``file`` or ``external_id`` names (one of them, not both)."""
    p = call.params
    file_id, external_id = p.get_str("file"), p.get_str("external_id")
    if file_id and external_id:
        raise errors.TooManyIds()
    remote = call.state.files.remote
    found = (
        remote.by_id.get(file_id.strip())
        if file_id
        else remote.by_external_id.get(external_id.strip())
        if external_id
        else None
    )
    if found is None or not _visible(call, found):
        raise errors.FileNotFound()
    return found


def _visible(call: Call, file: RemoteFile) -> bool:
    """Its app sees it always; anyone else once it is shared where they can see."""
    if file.user == call.caller.user_id:
        return True
    return any(
        (channel := call.state.channels.get(cid)) is not None and call.can_see(channel) for cid in file.shares
    )


ROUTES: dict[str, Handler] = {
    "files.remote.add": files_remote_add,
    "files.remote.info": files_remote_info,
    "files.remote.list": files_remote_list,
    "files.remote.update": files_remote_update,
    "files.remote.remove": files_remote_remove,
    "files.remote.share": files_remote_share,
}

PARTIAL: dict[str, str] = {
    "files.remote.add": "preview_image is kept only as has_rich_preview; indexable_file_contents is not searched",
}
"""What each method here still lacks (the coverage ledger's ``partial`` notes)."""
