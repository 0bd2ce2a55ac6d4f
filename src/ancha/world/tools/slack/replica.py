"""SlackReplica: one environment's Slack workspace behind Slack's own Web API.

Requests arrive as ``ToolRequest`` for paths ``/api/<method>``. A method the replica
serves runs its handler; one Slack has but the replica lacks answers 501
``not_implemented`` (a coverage gap); a name Slack has no method by answers Slack's own
``unknown_method``. Every write also publishes a domain event on the environment's bus.

Refs: seeded users and the bot register as ``user`` (id ``U...``), channels as
``channel`` (``C...``), messages as ``message`` with id ``"<channel id>/<ts>"``;
``message_ref`` turns a message ref back into ``(channel id, ts)``.
"""

from __future__ import annotations

import json
import string
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import orjson

from ancha.world.kernel import hostnames
from ancha.world.kernel.tool import ToolRequest, ToolResponse
from ancha.world.tools.slack import errors, events, file_urls, image_links, incoming_webhooks
from ancha.world.tools.slack.call import Call, Caller
from ancha.world.tools.slack.canvases import Canvas
from ancha.world.tools.slack.coverage_ledger import LEDGER
from ancha.world.tools.slack.history import SeededView
from ancha.world.tools.slack.models import Channel, Message, RawJSON, SlackState, User
from ancha.world.tools.slack.params import Params, bearer_token
from ancha.world.tools.slack.rate_limits import HOLD_MARGIN_S, REAL, RateLimiter, retry_after
from ancha.world.tools.slack.reach import SlackActor
from ancha.world.tools.slack.real_hosts import SlackAddresses
from ancha.world.tools.slack.router import APP_LEVEL, ROUTES, method_of
from ancha.world.tools.slack.scene_file import SlackFile
from ancha.world.tools.slack.seed import bot_profile, new_id, seed_state
from ancha.world.tools.slack.snapshot import Line, channel_lines, written
from ancha.world.tools.slack.socket_mode import new_socket_mode
from ancha.world.tools.slack.third_party_calls import ThirdPartyCall

if TYPE_CHECKING:
    from ancha.world.kernel.port import WorldPort
    from ancha.world.kernel.world_secrets import WorldSecrets

JSON = "application/json; charset=utf-8"
_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


class SlackReplica:
    """The Tool for ``world.slack``; ``state`` is what checks read."""

    name = "slack"

    def __init__(self, world: WorldPort, seed: SlackFile | dict[str, Any] | None) -> None:
        self.world = world
        self.state: SlackState
        self.bot: User
        if not isinstance(seed, SlackFile):
            seed = world.scene.seed("slack", SlackFile) or SlackFile()
        self.state, self.bot, self.history = seed_state(world, seed)
        self._bot_profile = bot_profile(self.bot, self.state.team["id"])
        self.tokens: dict[str, Caller] = {}
        self.calls: dict[str, ThirdPartyCall] = {}
        """Calls apps registered (``calls.add``), by their ``R`` id."""
        self.canvases: dict[str, Canvas] = {}
        """Canvases (``canvases.create``, ``conversations.canvases.create``), by id."""
        self.bot_token = self._mint("xoxb", Caller(self.bot.id, "agent", is_bot=True))
        keys = world.secrets
        self.signing_secret = keys.token_hex(16)
        self.app_token = f"xapp-1-{self.bot.app_id}-{_digits(keys, 13)}-{keys.token_hex(32)}"
        self.webhooks = incoming_webhooks.create(self, seed.incoming_webhooks)
        """The scene's incoming webhooks by URL path (``/services/T/B/X``)."""
        self.base_url = f"http://127.0.0.1/envs/{world.id}/slack"
        """Where callers reach this replica (from the last request's Host, or Slack's own
        ``https://slack.com`` through real hostnames): the links it hands out follow (``urls``)."""
        self.urls = SlackAddresses.of(self.base_url, self.state.team["domain"])
        """Where file URLs, permalinks, icons and Socket Mode URLs point, for ``base_url``."""
        self.socket_mode = new_socket_mode(world, self)
        self.rate_limiter = RateLimiter() if seed.rate_limits == REAL else None
        """Slack's per-method limits on the agent's calls (``world.slack.rate_limits: real``)."""
        self.world_actor = SlackActor(world, self)
        """Writes as world rules' users (``actions.py``), with one token per user, kept for the trial."""

    # --- Tool ---------------------------------------------------------------------------

    def credentials(self) -> dict[str, Any]:
        """What the context gives the agent; ``webhooks`` (a scene with incoming webhooks): each
        one's ref -> its URL's path, below the tool's URL or ``https://hooks.slack.com``."""
        given: dict[str, Any] = {"token": self.bot_token, "signing_secret": self.signing_secret,
                                 "app_token": self.app_token, "team_id": self.state.team["id"],
                                 "bot_user_id": self.bot.id}
        if self.webhooks:
            given["webhooks"] = {hook.ref: hook.path for hook in self.webhooks.values()}
        return given

    def handle(self, request: ToolRequest) -> ToolResponse:
        path = request.path
        base = hostnames.base_url(request, self.world.id, self.name)
        if base is not None and base != self.base_url:  # links point where the caller reached us
            self.base_url = base
            self.urls = SlackAddresses.of(base, self.state.team["domain"])
        if path.startswith(incoming_webhooks.PATH_PREFIX):
            return incoming_webhooks.serve(self, request)
        method = method_of(path)
        if method is None:
            return file_urls.serve(self, request)  # the upload URL and url_private; else 404
        handler = ROUTES.get(method)
        if handler is None and method not in APP_LEVEL:
            if method == "api.test":
                return self._api_test(request)
            actor = self._actor_of(request)
            if method in LEDGER:
                gap = {"ok": False, "error": "not_implemented", "method": method}
                return ToolResponse(501, _dumps(gap).encode(), JSON, actor=actor, coverage_gap=True,
                                    vendor_ok=False)
            return self._fail(errors.UnknownMethod(req_method=method), actor)
        actor = "agent"
        try:
            params = Params.from_request(request)
            token = bearer_token(request, params)
            if token is None:
                raise errors.NotAuthed()
            if token == self.app_token or method in APP_LEVEL:
                return self._app_level(method, token)
            caller = self.tokens.get(token)
            if caller is None:
                raise errors.InvalidAuth()
            actor = caller.actor
            if self.rate_limiter is not None and actor == "agent":
                limited = self._rate_limited(method, token, params)
                if limited is not None:
                    return limited
            assert handler is not None
            body = handler(Call(self, params, caller))
        except errors.SlackError as exc:
            return self._fail(exc, actor)
        except Exception:  # a bug, never bad input: answer JSON as Slack would, and let tests see 500
            return ToolResponse(500, b'{"ok":false,"error":"fatal_error"}', JSON, actor=actor, vendor_ok=False)
        if params.warnings:
            body["warning"] = ",".join(params.warnings)
            metadata = body.setdefault("response_metadata", {})
            metadata["warnings"] = [*metadata.get("warnings", []), *params.warnings]
        encoded = _encode_body(body)
        if self.urls.images_on_replica:
            encoded = image_links.on_replica(encoded, self.base_url)
        return ToolResponse(200, encoded, JSON, actor=actor)

    def snapshot(self) -> dict[str, Any]:
        snapshot: dict[str, Any] = json.loads(b"".join(self.snapshot_json()))
        return snapshot

    def snapshot_json(self) -> Iterator[bytes]:
        """The whole state as JSON text (``world.json``'s ``slack``), as it is now, given a
        piece at a time: one line per user, channel and message; seeded history comes from
        text every trial of the scene shares (``snapshot.py``), written out as it is read."""
        state = self.state
        bot = {"user_id": self.bot.id, "bot_id": self.bot.bot_id, "app_id": self.bot.app_id, "ref": self.bot.ref}
        users = [_dumps({**u.to_dict(), "ref": u.ref, "person": u.person}) for u in state.users.values()]
        channels = [_dumps({**c.to_dict(self.bot.id, num_members=not c.is_im), "members": list(c.members),
                            "ref": c.ref}) for c in state.channels.values()]
        head = (f'{{"team": {_dumps(state.team)},\n"bot": {_dumps(bot)},\n'
                f'"users": [\n{_lines(users)}\n],\n"channels": [\n{_lines(channels)}\n],\n'
                f'{self._files_and_views_json()}'
                f'{self._arranged_json()}"messages": {{').encode()
        messages = [(cid, channel_lines(self.history.plan, self.history.channels.get(cid), channel,
                                        self.history.ids, self.bot)) for cid, channel in state.channels.items()]
        return self._snapshot_text(head, messages, self._unlisted_json())

    def _unlisted_json(self) -> bytes:
        """``world.json``'s messages that are in no history: scheduled ones not yet posted
        and ephemeral ones, as they are now."""
        scheduled = [_dumps(m.to_dict()) for m in self.state.scheduled.all()]
        ephemeral = [_dumps(m.to_dict()) for m in self.state.ephemeral]
        return (f',\n"scheduled_messages": [{_items(scheduled)}],'
                f'\n"ephemeral_messages": [{_items(ephemeral)}]').encode()

    def _arranged_json(self) -> str:
        """``world.json``'s pins, bookmarks and user groups, as they are now."""
        state = self.state
        return (f'"pins": {_dumps(state.pins.to_list(state.channels))},\n'
                f'"bookmarks": {_dumps(state.bookmarks.to_list())},\n'
                f'"usergroups": {_dumps(state.usergroups.to_list())},\n')

    @staticmethod
    def _snapshot_text(head: bytes, messages: list[tuple[str, list[Line]]], tail: bytes = b"") -> Iterator[bytes]:
        yield head
        for i, (cid, lines) in enumerate(messages):
            yield f'{"," if i else ""}\n{_dumps(cid)}: ['.encode()
            if lines:
                yield b"\n"
                yield from written(lines)
                yield b"\n"
            yield b"]"
        yield b"\n}" + tail + b"}"

    def _files_and_views_json(self) -> str:
        """``world.json``'s files (what was uploaded, not the bytes), views and reminders, as they are now."""
        files = [{"id": f.id, "name": f.name, "title": f.title, "user": f.user, "size": f.size,
                  "created": f.created, "completed": f.completed, "deleted": f.deleted,
                  "channels": list(f.shares), "actor": f.actor} for f in self.state.files.by_id.values()]
        return (f'"files": {_dumps(files)},\n"views": {_dumps(self.state.views.snapshot())},\n'
                f'"reminders": {_dumps(self.state.reminders.to_list())},\n')

    def messages_as_read(self, channel_id: str) -> list[Message | SeededView]:
        """Every message of a conversation in ts order, seeded ones included, building none:
        a seeded message nobody touched is read from the scene's shared history."""
        channel = self.state.channels.get(channel_id)
        if channel is None:
            return []
        index = channel.by_key
        found: list[Message | SeededView] = []
        for key in sorted(index):
            held = index.held(key)
            found.append(self.history.view(channel_id, held) if isinstance(held, int) else held)
        return found

    def place_label(self, place_id: str) -> str | None:
        channel = self.state.channels.get(place_id)
        if channel is None:
            return None
        return f"the DM {place_id}" if channel.is_im else f"#{channel.name}"

    # --- tokens and refs ----------------------------------------------------------------

    def issue_user_token(self, user_id: str, actor: str) -> str:
        """An ``xoxp-`` token acting as ``user_id``, traced as ``actor`` (``person:laura``, ``world``)."""
        if user_id not in self.state.users:
            raise KeyError(f"no Slack user {user_id!r}")
        return self._mint("xoxp", Caller(user_id, actor, is_bot=self.state.users[user_id].is_bot))

    def message_ref(self, ref: str) -> tuple[str, str]:
        """``(channel id, ts)`` of a message ref (or of a ``"C.../ts"`` record id)."""
        record = self.world.refs.get(ref.removeprefix("$"))
        record_id = record.id if record is not None else ref
        channel, sep, ts = record_id.partition("/")
        if not sep:
            raise KeyError(f"{ref!r} is not a Slack message ref")
        return channel, ts

    def _mint(self, kind: str, caller: Caller) -> str:
        # The world's secrets, not the trial's RNG: a token must never work in another environment,
        # and a replay (the same seed) hands out the tokens the agent called with.
        keys = self.world.secrets
        token = f"{kind}-{_digits(keys, 12)}-{_digits(keys, 13)}-{keys.token_urlsafe(18)[:24]}"
        self.tokens[token] = caller
        return token

    # --- writes (handlers call these; each publishes its domain event) ------------------

    def new_message(self, channel: Channel, caller: Caller, text: str, *, parent: Message | None = None,
                    broadcast: bool = False) -> Message:
        key = self.state.free_key(channel.id, round(self.world.clock.now() * 1_000_000))
        message = Message(channel.id, key, caller.user_id, text, team=self.state.team["id"],
                          thread_ts=parent.ts if parent is not None else None)
        message.actor = caller.actor
        if broadcast:
            message.subtype = "thread_broadcast"
        user = self.state.users[caller.user_id]
        if user.is_bot:
            message.bot_id, message.app_id = user.bot_id, user.app_id
            message.bot_profile = self._bot_profile
        return message

    def post(self, message: Message, channel: Channel, parent: Message | None) -> None:
        self.state.add_message(message, parent)
        self.world.bus.publish(events.message_posted(message, channel))

    def changed(self, message: Message, channel: Channel, previous: dict[str, Any], caller: Caller) -> None:
        message.touch()
        self.world.bus.publish(events.message_changed(message, channel, previous, caller.actor, self.world.clock.now()))

    def delete(self, message: Message, channel: Channel, caller: Caller) -> None:
        self.state.remove_message(message)
        self.world.bus.publish(events.message_deleted(message, channel, caller.actor, self.world.clock.now()))

    def react(self, message: Message, channel: Channel, name: str, caller: Caller, *, added: bool) -> None:
        message.touch()
        users = message.reactions.setdefault(name, [])
        if added:
            users.append(caller.user_id)
            self.state.reacted.note(caller.user_id, channel.id, message.key, self.world.clock.now())
        else:
            users.remove(caller.user_id)
            if not users:
                del message.reactions[name]
        self.world.bus.publish(events.reaction(added, message, channel, name, caller.user_id, caller.actor,
                                             self.world.clock.now()))

    def join(self, channel: Channel, caller: Caller) -> bool:
        """Add the caller to a channel; False when they already were a member."""
        if not channel.add_member(caller.user_id):
            return False
        self.world.bus.publish(events.member_joined_channel(channel, caller.user_id, caller.actor,
                                                          self.world.clock.now()))
        return True

    def leave(self, channel: Channel, user_id: str, actor: str) -> bool:
        """Take ``user_id`` out of a channel (they left or were removed); False when they were not in it."""
        if not channel.remove_member(user_id):
            return False
        self.world.bus.publish(events.member_left_channel(channel, user_id, actor, self.world.clock.now()))
        return True

    def open_dm(self, members: list[str], creator: str) -> Channel:
        """The DM (two people, or one with themself) or group DM of ``members``, created if new."""
        key = frozenset(members)
        existing = self.state.dms.get(key)
        if existing is not None:
            return self.state.channels[existing]
        created = int(self.world.clock.peek())
        if len(key) <= 2:
            channel = Channel(new_id(self.world, "D"), "", created=created, creator=creator, is_im=True)
        else:
            names = [self.state.users[m].name for m in sorted(key)]
            channel = Channel(new_id(self.world, "G"), "mpdm-" + "--".join(names) + "-1", created=created,
                              creator=creator, is_private=True, is_mpim=True)
        for member in sorted(key):
            channel.add_member(member)
        self.state.add_channel(channel)
        self.state.dms[key] = channel.id
        return channel

    def permalink(self, channel: Channel, message: Message) -> str:
        # Slack's shape (``/archives/<channel>/p<ts without the dot>``), on the workspace's address.
        link = f"{self.urls.workspace}/archives/{channel.id}/p{message.ts.replace('.', '')}"
        if message.is_reply:
            link += f"?thread_ts={message.thread_ts}&cid={channel.id}"
        return link

    # --- answers ------------------------------------------------------------------------

    def _actor_of(self, request: ToolRequest) -> str:
        """Who calls, from the Authorization header alone (for calls that are not served)."""
        caller = self.tokens.get(request.headers.get("authorization", "")[7:].strip())
        return caller.actor if caller is not None else "agent"

    def _fail(self, error: errors.SlackError, actor: str) -> ToolResponse:
        return ToolResponse(error.status, _dumps(error.body()).encode(), JSON, actor=actor, vendor_ok=False)

    def _rate_limited(self, method: str, token: str, params: Params) -> ToolResponse | None:
        """Slack's 429 when this call is past ``method``'s limit for ``token``, else None (and
        the call is counted). The agent then counts as working until Retry-After has passed,
        so the clock flows through its sleep rather than jumping (``WorldPort.hold_agent``)."""
        assert self.rate_limiter is not None
        channel = params.values.get("channel") or params.values.get("channel_id")
        clock = self.world.clock
        wait = self.rate_limiter.take(token, method, str(channel) if channel else None, clock.peek())
        if not wait:
            return None
        seconds = retry_after(wait, clock.speed)
        self.world.hold_agent(seconds + HOLD_MARGIN_S)
        error = errors.Ratelimited()
        return ToolResponse(error.status, _dumps(error.body()).encode(), JSON, headers={"Retry-After": str(seconds)},
                            vendor_ok=False)

    def _app_level(self, method: str, token: str) -> ToolResponse:
        """The app-level token (``xapp-``) opens Socket Mode connections and nothing else; no
        other token may open one."""
        if token != self.app_token:
            raise errors.InvalidAuth() if token not in self.tokens else errors.NotAllowedTokenType()
        if method not in APP_LEVEL:
            raise errors.NotAllowedTokenType()
        body = {"ok": True, "url": self.socket_mode.open_url()}
        return ToolResponse(200, _dumps(body).encode(), JSON)

    def _api_test(self, request: ToolRequest) -> ToolResponse:
        try:
            params = Params.from_request(request)
        except errors.SlackError as exc:
            return self._fail(exc, "agent")
        # Text arguments only: a multipart file part's bytes are no JSON.
        args = {k: v for k, v in params.values.items() if k != "token" and not isinstance(v, bytes)}
        body: dict[str, Any] = {"ok": "error" not in args}
        if "error" in args:
            body["error"] = str(args["error"])
        body["args"] = args
        return ToolResponse(200, _dumps(body).encode(), JSON, vendor_ok=body["ok"])


def _lines(items: list[str]) -> str:
    return ",\n".join(items)


def _items(items: list[str]) -> str:
    """A JSON list's items, one a line (nothing for an empty list)."""
    return f"\n{_lines(items)}\n" if items else ""


def _encode_body(body: dict[str, Any]) -> bytes:
    """Encode an answer, splicing in any ``RawJSON`` values as they are.

    orjson writes what ``_dumps`` writes (compact, UTF-8, the same escapes and float
    digits) at a tenth of the cost: every answer goes through here. What orjson refuses
    (an int past 64 bits, a key that is not a string) is encoded by ``_dumps`` instead."""
    raw = [key for key, value in body.items() if isinstance(value, RawJSON)]
    try:
        if not raw:
            return orjson.dumps(body)
        return orjson.dumps({key: orjson.Fragment(value) if isinstance(value, RawJSON) else value
                             for key, value in body.items()})
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        pass
    if not raw:
        return _dumps(body).encode()
    spliced = dict(body)
    for key in raw:
        spliced[key] = f"\x00{key}\x00"
    text = _dumps(spliced)
    for key in raw:
        text = text.replace(f'"\\u0000{key}\\u0000"', body[key], 1)
    return text.encode()


def _digits(keys: WorldSecrets, n: int) -> str:
    """``n`` decimal digits, the first not 0 (a number of ``n`` digits, evenly drawn)."""
    return keys.choice(string.digits[1:], 1) + keys.choice(string.digits, n - 1)
