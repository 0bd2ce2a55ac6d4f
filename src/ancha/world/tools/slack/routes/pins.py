"""pins.*: messages pinned to a conversation."""

from __future__ import annotations

from typing import Any

from ancha.world.tools.slack import errors
from ancha.world.tools.slack.call import Call, Handler
from ancha.world.tools.slack.models import Channel, Message, ts_key
from ancha.world.tools.slack.pins import Pin, pin_event

# Slack will not pin these: a channel's join and leave notices and the like.
_NOT_PINNABLE = {"channel_join", "channel_leave", "group_join", "group_leave"}


def pins_add(call: Call) -> dict[str, Any]:
    channel, message = _item(call)
    if channel.is_archived:
        raise errors.IsArchived()
    if message.subtype in _NOT_PINNABLE:
        raise errors.NotPinnable()
    pins = call.state.pins
    if pins.get(channel, message.key) is not None:
        raise errors.AlreadyPinned()
    now = call.replica.world.clock.now()
    pin = Pin(channel.id, message.key, message.ts, int(now), call.caller.user_id)
    pins.add(pin)
    call.replica.world.bus.publish(pin_event(True, pin, call.caller.user_id, call.caller.actor, now))
    return {"ok": True}


def pins_remove(call: Call) -> dict[str, Any]:
    channel, message = _item(call)
    pin = call.state.pins.get(channel, message.key)
    if pin is None:
        raise errors.NoPin()
    call.state.pins.remove(channel.id, message.key)
    call.replica.world.bus.publish(pin_event(False, pin, call.caller.user_id, call.caller.actor,
                                           call.replica.world.clock.now()))
    return {"ok": True}


def pins_list(call: Call) -> dict[str, Any]:
    channel = call.find_channel(call.params.get_str("channel"))
    items = []
    for pin in call.state.pins.in_channel(channel):
        message = channel.by_key[pin.key].to_dict()
        message["pinned_to"] = [channel.id]
        items.append({"type": "message", "created": pin.created, "created_by": pin.created_by,
                      "channel": channel.id, "message": message})
    return {"ok": True, "items": items}


def _item(call: Call) -> tuple[Channel, Message]:
    """The conversation and message a pins.add / pins.remove call names."""
    p = call.params
    channel = call.find_channel(p.get_str("channel"))
    if p.has("file") or p.has("file_comment"):
        raise errors.NotPinnable("[ERROR] Slack pins messages only; files and file comments cannot be pinned")
    ts = p.get_str("timestamp")
    if not ts:
        raise errors.NoItemSpecified()
    if ts_key(ts.strip()) is None:
        raise errors.BadTimestamp()
    if call.caller.is_bot and call.caller.user_id not in channel.member_set:
        raise errors.NotInChannel()
    return channel, call.message_in(channel, ts, errors.MessageNotFound)


ROUTES: dict[str, Handler] = {
    "pins.add": pins_add,
    "pins.remove": pins_remove,
    "pins.list": pins_list,
}

PARTIAL: dict[str, str] = {}
"""What each method here still lacks (the coverage ledger's ``partial`` notes)."""
