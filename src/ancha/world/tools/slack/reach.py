"""Slack's side of reach: which people a Slack message reaches, and posting as someone.

A message reaches person P (never its own author, and never one Slack writes about the
channel itself, such as "has joined the channel") when it is a direct message to P's
user (a DM, or a group DM P is in), mentions P (``<@U...>``), is a reply in a thread P
is in (P wrote the parent or a reply), or is in a channel P listens to; in a DM, group
DM or private channel only if P is a member (a mention there does not reach outsiders,
as Slack does not notify them). A DM or a
mention addresses P directly; the others reach P without addressing them.

People and world rules write through the replica's Web API with user tokens, exactly
as a user would: ``SlackActor.call`` goes through ``WorldPort.dispatch``, so every
such call is traced (actor ``person:NAME`` or ``world``) and publishes the same
domain events as the agent's calls.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ancha.world.kernel.bus import DomainEvent
from ancha.world.kernel.reach import Directory, Place, Utterance
from ancha.world.kernel.tool import ToolRequest
from ancha.world.tools.slack import channel_events

if TYPE_CHECKING:
    from ancha.world.kernel.port import WorldPort
    from ancha.world.tools.slack.replica import SlackReplica

TOOL = "slack"


class SlackActor:
    """Calls Slack's Web API as a given user, with one token per (user, actor)."""

    def __init__(self, world: WorldPort, replica: SlackReplica) -> None:
        self.world = world
        self.replica = replica
        self._tokens: dict[tuple[str, str], str] = {}

    def call(self, user_id: str, actor: str, method: str, **args: Any) -> dict[str, Any]:
        """``method`` with JSON ``args`` as ``user_id``; Slack's answer as a dict."""
        token = self._tokens.get((user_id, actor))
        if token is None:
            token = self._tokens[(user_id, actor)] = self.replica.issue_user_token(user_id, actor)
        request = ToolRequest("POST", f"/api/{method}", headers={
            "authorization": f"Bearer {token}", "content-type": "application/json; charset=utf-8"},
            body=json.dumps({k: v for k, v in args.items() if v is not None}).encode())
        answer = self.world.dispatch(TOOL, request)
        try:
            body = json.loads(answer.body)
        except ValueError:
            return {"ok": False, "error": f"http_{answer.status}"}
        return body if isinstance(body, dict) else {"ok": False, "error": "invalid_response"}


class SlackReach:
    tool: str = TOOL
    events: tuple[str, ...] = ("message_posted",)

    def __init__(self, replica: SlackReplica, world: WorldPort, directory: Directory) -> None:
        self.world = world
        self.directory = directory
        self.actor = SlackActor(world, replica)
        self.state = replica.state
        for user in self.state.users.values():
            if user.person:
                directory.link(TOOL, user.id, user.person.removeprefix("$").rpartition(".")[2])
        self.people = directory.people_on(TOOL)

    def utterance(self, event: DomainEvent) -> Utterance | None:
        data = event.data
        if data.get("subtype") in channel_events.SUBTYPES:
            return None  # Slack's own note that someone joined, set the topic...: nobody is told anything
        channel = self.state.channels.get(data["channel"])
        if channel is None:
            return None
        ts: str = data["ts"]
        thread: str | None = data.get("thread_ts")
        place = Place(TOOL, channel.id, thread)
        if thread is not None:
            reply_place = place
        elif channel.is_im or channel.is_mpim:
            reply_place = Place(TOOL, channel.id, None)
        else:
            reply_place = Place(TOOL, channel.id, ts)
        author: str = data["user"]
        audience: dict[str, bool] = {}
        if self.people:  # with nobody on Slack, a message reaches no one
            mentioned = set(data.get("mentions") or ())
            direct_place = channel.is_im or channel.is_mpim
            members_only = direct_place or channel.is_private
            root = self.state.message(channel.id, thread) if thread is not None else None
            for person, user_id in self.people:
                if user_id == author or (members_only and user_id not in channel.member_set):
                    continue  # nobody hears their own message, or one in a conversation they cannot see
                direct = user_id in mentioned or (direct_place and user_id in channel.member_set)
                in_thread = root is not None and (root.user == user_id or user_id in root.reply_users)
                if direct or in_thread or self.directory.listens_to(person, channel.id):
                    audience[person] = direct
        return Utterance(
            tool=TOOL, place=place, reply_place=reply_place, author=author, actor=data.get("actor") or "agent",
            text=data.get("text") or "", at=event.at, locator={"channel": channel.id, "ts": ts},
            fields={"channel": channel.id, "ts": ts, "thread_ts": thread, "user": author},
            audience=audience,
        )

    def post(self, person: str, place: Place, text: str) -> dict[str, Any] | None:
        user_id = self.directory.account(person, TOOL)
        if user_id is None:
            return None
        answer = self.actor.call(user_id, f"person:{person}", "chat.postMessage", channel=place.container,
                                 text=text, thread_ts=place.thread)
        if not answer.get("ok"):
            return None
        return {"channel": answer["channel"], "ts": answer["ts"]}

