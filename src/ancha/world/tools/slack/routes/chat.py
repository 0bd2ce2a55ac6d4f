"""chat.*: posting, editing and deleting messages."""

from __future__ import annotations

from typing import Any

from ancha.world.tools.slack import errors
from ancha.world.tools.slack.call import Call, Handler
from ancha.world.tools.slack.models import Channel, Message, ts_str

MAX_TEXT = 40_000
MAX_BLOCKS = 50
EDITABLE_SUBTYPES = (None, "thread_broadcast", "me_message")
"""A message its author may edit (not one Slack wrote about the channel, nor a bot's file share)."""
MAX_ATTACHMENTS = 100
KEPT_OPTIONS = ("mrkdwn", "unfurl_links", "unfurl_media", "parse", "link_names", "username",
                "icon_emoji", "icon_url", "as_user")


def chat_post_message(call: Call) -> dict[str, Any]:
    p = call.params
    channel = call.writable_channel(p.get_str("channel"))
    text = p.get_str("text") or ""
    blocks = read_blocks(call)
    attachments = read_attachments(call)
    if not text and not blocks and not attachments:
        raise errors.NoText()
    if len(text) > MAX_TEXT:
        raise errors.MsgTooLong()
    parent = thread_parent(call, channel, p.get_str("thread_ts"))
    message = call.replica.new_message(channel, call.caller, text, parent=parent,
                                       broadcast=parent is not None and p.get_bool("reply_broadcast"))
    message.blocks = blocks
    message.attachments = attachments
    metadata = read_metadata(call)
    if metadata is not None:
        message.metadata = metadata
    for name in KEPT_OPTIONS:
        if name in p.values:
            message.options[name] = p.values[name]
    call.replica.post(message, channel, parent)
    return {"ok": True, "channel": channel.id, "ts": message.ts, "message": message.to_dict()}


def chat_update(call: Call) -> dict[str, Any]:
    p = call.params
    channel = call.find_channel(p.get_str("channel"))
    message = call.message_in(channel, p.get_str("ts"), errors.MessageNotFound)
    if message.user != call.caller.user_id or message.subtype not in EDITABLE_SUBTYPES:
        raise errors.CantUpdateMessage()
    text = p.get_str("text")
    blocks = read_blocks(call)
    attachments = read_attachments(call)
    metadata = read_metadata(call)
    if text is None and blocks is None and attachments is None:
        raise errors.NoText()
    if text is not None and len(text) > MAX_TEXT:
        raise errors.MsgTooLong()
    if channel.is_archived:
        raise errors.IsArchived()
    previous = message.to_dict()
    if text is not None:
        message.text = text
    if blocks is not None:
        message.blocks = blocks
    if attachments is not None:
        message.attachments = attachments
    if metadata is not None:
        message.metadata = metadata
    message.edited = {"user": call.caller.user_id, "ts": ts_str(call.now_key())}
    call.replica.changed(message, channel, previous, call.caller)
    return {"ok": True, "channel": channel.id, "ts": message.ts, "text": message.text,
            "message": message.to_dict()}


def chat_delete(call: Call) -> dict[str, Any]:
    p = call.params
    channel = call.find_channel(p.get_str("channel"))
    message = call.message_in(channel, p.get_str("ts"), errors.MessageNotFound)
    if message.user != call.caller.user_id:
        raise errors.CantDeleteMessage()
    call.replica.delete(message, channel, call.caller)
    return {"ok": True, "channel": channel.id, "ts": message.ts}


def chat_get_permalink(call: Call) -> dict[str, Any]:
    p = call.params
    channel = call.find_channel(p.get_str("channel"))
    message = call.message_in(channel, p.get_str("message_ts"), errors.MessageNotFound)
    return {"ok": True, "channel": channel.id, "permalink": call.replica.permalink(channel, message)}


# --- argument shapes -----------------------------------------------------------------


def thread_parent(call: Call, channel: Channel, thread_ts: str | None) -> Message | None:
    """The root of the thread ``thread_ts`` names (None without one): a reply to a reply
    joins the root's thread, as in Slack."""
    if not thread_ts:
        return None
    parent = call.message_in(channel, thread_ts, errors.ThreadNotFound)
    if parent.is_reply and parent.thread_ts is not None:
        parent = call.message_in(channel, parent.thread_ts, errors.ThreadNotFound)
    return parent



def read_blocks(call: Call) -> list[Any] | None:
    if "blocks" not in call.params.values:
        return None
    try:
        blocks = call.params.get_json("blocks")
    except ValueError as exc:
        raise errors.InvalidBlocksFormat() from exc
    if blocks is None:
        return None
    if not isinstance(blocks, list):
        raise errors.InvalidBlocksFormat()
    if len(blocks) > MAX_BLOCKS:
        raise errors.InvalidBlocks("[ERROR] no more than 50 items allowed [json-pointer:/blocks]")
    for i, block in enumerate(blocks):
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            raise errors.InvalidBlocks(f"[ERROR] missing required field: type [json-pointer:/blocks/{i}]")
    return blocks


def read_attachments(call: Call) -> list[Any] | None:
    if "attachments" not in call.params.values:
        return None
    try:
        attachments = call.params.get_json("attachments")
    except ValueError as exc:
        raise errors.InvalidAttachments() from exc
    if attachments is None:
        return None
    if not isinstance(attachments, list) or not all(isinstance(a, dict) for a in attachments):
        raise errors.InvalidAttachments()
    if len(attachments) > MAX_ATTACHMENTS:
        raise errors.TooManyAttachments()
    # Slack numbers a message's attachments from 1.
    return [{**attachment, "id": i} for i, attachment in enumerate(attachments, 1)]


def read_metadata(call: Call) -> dict[str, Any] | None:
    """``metadata`` in either shape Slack documents: message metadata (``event_type`` and
    ``event_payload``) or Work Objects (``entities``), or both at once."""
    if "metadata" not in call.params.values:
        return None
    try:
        metadata = call.params.get_json("metadata")
    except ValueError as exc:
        raise errors.InvalidArguments("[ERROR] metadata is not valid JSON") from exc
    if metadata is None:
        return None
    if not isinstance(metadata, dict):
        raise errors.InvalidArguments("[ERROR] missing required field: event_type [json-pointer:/metadata]")
    if "entities" in metadata:
        _check_entities(metadata["entities"])
    elif not isinstance(metadata.get("event_type"), str):
        raise errors.InvalidArguments("[ERROR] missing required field: event_type [json-pointer:/metadata]")
    if "event_type" in metadata and not isinstance(metadata["event_type"], str):
        raise errors.InvalidArguments("[ERROR] event_type must be a string [json-pointer:/metadata/event_type]")
    return metadata


_ENTITY_FIELDS: tuple[tuple[str, type], ...] = (
    ("entity_type", str), ("url", str), ("external_ref", dict), ("entity_payload", dict))
"""What each Work Object entity must carry (``external_ref`` with an ``id``)."""


def _check_entities(entities: Any) -> None:
    if not isinstance(entities, list) or not entities:
        raise errors.InvalidArguments("[ERROR] entities must be a non-empty array [json-pointer:/metadata/entities]")
    for i, entity in enumerate(entities):
        where = f"/metadata/entities/{i}"
        if not isinstance(entity, dict):
            raise errors.InvalidArguments(f"[ERROR] expected an object [json-pointer:{where}]")
        for name, kind in _ENTITY_FIELDS:
            if name not in entity:
                raise errors.InvalidArguments(f"[ERROR] missing required field: {name} [json-pointer:{where}]")
            if not isinstance(entity[name], kind):
                expected = "a string" if kind is str else "an object"
                raise errors.InvalidArguments(f"[ERROR] {name} must be {expected} [json-pointer:{where}/{name}]")
        if not isinstance(entity["external_ref"].get("id"), str):
            raise errors.InvalidArguments(f"[ERROR] missing required field: id [json-pointer:{where}/external_ref]")


ROUTES: dict[str, Handler] = {
    "chat.postMessage": chat_post_message,
    "chat.update": chat_update,
    "chat.delete": chat_delete,
    "chat.getPermalink": chat_get_permalink,
}

PARTIAL: dict[str, str] = {
    "chat.postMessage": "no blocks generated from text; username/icon_* kept but not shown; no link unfurls; no file uploads",
    "chat.update": "no file_ids, reply_broadcast or link_names",
    "chat.delete": "a deleted thread parent leaves no tombstone",
}
"""What each method here still lacks (the coverage ledger's ``partial`` notes)."""
