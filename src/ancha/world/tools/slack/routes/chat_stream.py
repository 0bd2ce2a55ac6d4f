"""chat.startStream, chat.appendStream, chat.stopStream: a reply written as it is generated.

What an AI app calls (slack_sdk's ``client.chat_stream()``, Bolt's ``say_stream``): start
a message, append markdown to it a piece at a time, stop it. The message is in the
channel's history from the start, with the text streamed so far, but it is published
(``message_posted``: people, checks' predicates, the agent's feed) once, when the stream
stops, with its whole text: a person is told the finished answer, not its first words. A
stream never stopped is in history but reaches nobody.
"""

from __future__ import annotations

from typing import Any

from ancha.world.tools.slack import errors, events
from ancha.world.tools.slack.call import Call, Handler
from ancha.world.tools.slack.models import Channel, Message
from ancha.world.tools.slack.routes.chat import read_blocks, read_metadata, thread_parent

MAX_MARKDOWN = 12_000
"""``markdown_text`` (and each chunk's text) is at most 12,000 characters."""


def chat_start_stream(call: Call) -> dict[str, Any]:
    p = call.params
    channel = call.writable_channel(p.get_str("channel"))
    text = _streamed_text(call)
    parent = thread_parent(call, channel, p.get_str("thread_ts"))
    message = call.replica.new_message(channel, call.caller, text, parent=parent)
    call.state.add_message(message, parent)
    call.state.streaming.add((channel.id, message.key))
    return {"ok": True, "channel": channel.id, "ts": message.ts}


def chat_append_stream(call: Call) -> dict[str, Any]:
    channel, message = _streaming(call)
    text = _streamed_text(call)
    if not text:
        raise errors.InvalidArguments("[ERROR] missing required field: markdown_text")
    message.text += text
    message.touch()
    return {"ok": True, "channel": channel.id, "ts": message.ts}


def chat_stop_stream(call: Call) -> dict[str, Any]:
    channel, message = _streaming(call)
    message.text += _streamed_text(call)
    blocks = read_blocks(call)
    if blocks is not None:
        message.blocks = blocks
    metadata = read_metadata(call)
    if metadata is not None:
        message.metadata = metadata
    message.touch()
    call.state.streaming.discard((channel.id, message.key))
    call.replica.world.bus.publish(events.message_posted(message, channel))
    return {"ok": True, "channel": channel.id, "ts": message.ts, "message": message.to_dict()}


def _streaming(call: Call) -> tuple[Channel, Message]:
    """The caller's message being streamed that ``channel`` and ``ts`` name."""
    p = call.params
    channel = call.find_channel(p.get_str("channel"))
    message = call.message_in(channel, p.get_str("ts"), errors.MessageNotFound)
    if message.user != call.caller.user_id:
        raise errors.CantUpdateMessage()
    if (channel.id, message.key) not in call.state.streaming:
        raise errors.MessageNotInStreamingState()
    return channel, message


def _streamed_text(call: Call) -> str:
    """``markdown_text`` followed by the text of any ``markdown_text`` chunks."""
    p = call.params
    parts = [p.get_str("markdown_text") or ""]
    if "chunks" in p.values:
        try:
            chunks = p.get_json("chunks")
        except ValueError as exc:
            raise errors.InvalidArguments("[ERROR] chunks is not valid JSON") from exc
        if chunks is not None and not (isinstance(chunks, list) and all(isinstance(c, dict) for c in chunks)):
            raise errors.InvalidArguments("[ERROR] chunks must be an array of chunk objects")
        for chunk in chunks or []:
            if chunk.get("type") == "markdown_text":
                if not isinstance(chunk.get("text"), str):
                    raise errors.InvalidArguments("[ERROR] missing required field: text [json-pointer:/chunks]")
                parts.append(chunk["text"])
    if any(len(part) > MAX_MARKDOWN for part in parts):
        raise errors.MsgTooLong()
    return "".join(parts)


ROUTES: dict[str, Handler] = {
    "chat.startStream": chat_start_stream,
    "chat.appendStream": chat_append_stream,
    "chat.stopStream": chat_stop_stream,
}

PARTIAL: dict[str, str] = {
    "chat.startStream": "task_update and plan_update chunks are accepted but not shown; "
                        "recipient_user_id/recipient_team_id not required in channels",
    "chat.appendStream": "task_update and plan_update chunks are accepted but not shown",
    "chat.stopStream": "task_update and plan_update chunks are accepted but not shown; no session_status",
}
"""What each method here still lacks (the coverage ledger's ``partial`` notes)."""
