"""``slack.message``: the state check, and its predicate kept up to date per message event.

The state check reads the channel as it stands, seeded messages included (the reference:
set ``from`` "so starter history cannot match"); a long seeded history is read without
building its messages. As a predicate (``before``, ``within``, world rules) it tracks what
happens during the trial: seeded messages never make it hold. A failed check names the
closest miss, the messages that met the most conditions, and what kept them from matching.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ancha.world.kernel.bus import DomainEvent
from ancha.world.kernel.predicate import CompiledPredicate
from ancha.world.kernel.tool import StateOutcome
from ancha.world.tools.slack.check_bodies import SlackMessageStateFile
from ancha.world.tools.slack.history import SeededView
from ancha.world.tools.slack.models import Message, SlackState

if TYPE_CHECKING:
    from ancha.world.kernel.port import WorldPort
    from ancha.world.tools.slack.replica import SlackReplica

SNIPPET = 80
Read = Message | SeededView
"""A message as the check reads it: built, or a seeded one nobody touched."""
MESSAGE_EVENTS = frozenset({"message_posted", "message_changed", "message_deleted"})


def evaluate(body: dict[str, Any], replica: SlackReplica | None, world: WorldPort) -> StateOutcome:
    """``slack.message`` graded on ``replica`` (None: the world has no Slack, and it fails)."""
    return evaluate_slack_message(SlackMessageStateFile.model_validate(body), replica, world)


def evaluate_slack_message(spec: SlackMessageStateFile, replica: SlackReplica | None, world: WorldPort) -> StateOutcome:
    """Count the channel's messages (seeded ones included) that meet every condition given."""
    expected = _expected(spec)
    if replica is None:
        return _failed(expected, "the world has no Slack", [])
    try:
        channel_id = world.ref_id(spec.channel, "channel")
        author = world.ref_id(spec.from_, "user") if spec.from_ else None
        parent = replica.message_ref(spec.in_thread_of) if spec.in_thread_of else None
    except LookupError as exc:
        return _failed(expected, str(exc), [])

    match = _Conditions(spec, author, parent)
    present = replica.messages_as_read(channel_id)
    matching = [m for m in present if not match.misses(m)]
    where = _channel_label(replica.state, channel_id)
    if len(matching) >= spec.count_gte:
        actual = f"{_count(matching, 'matching message')} in {where}"
        return _outcome(True, expected, actual, _creating_calls(world, matching))
    if matching:
        actual = f"only {_count(matching, 'matching message')} in {where}, {spec.count_gte} needed"
        return _outcome(False, expected, actual, _creating_calls(world, matching))
    elsewhere = [] if any(not m.seeded for m in present) else _elsewhere(replica.state, channel_id, match)
    went = (f"{_count(elsewhere, 'message')} {match.describe()} went to " + ", ".join(
        sorted({_channel_label(replica.state, m.channel) for m in elsewhere})) + " instead") if elsewhere else ""
    if not present:
        actual = f"there is no message in {where}" + (f"; {went}" if went else "")
        return _outcome(False, expected, actual, _creating_calls(world, elsewhere))
    group, missed = _closest(present, match)
    met = match.describe(exclude=missed)
    reasons = " and ".join(match.explain_miss(name, group, replica.state) for name in missed)
    actual = f"{_count(group, 'message')}{' ' + met if met else ''} in {where}, but {reasons}"
    if went:  # nothing was written here during the trial: say where the agent's messages went
        actual += f"; {went}"
    return _outcome(False, expected, actual, _creating_calls(world, group + elsewhere))


class _Conditions:
    """The conditions of one slack.message check, other than the channel."""

    ORDER = ("from", "in_thread_of", "text_contains")

    def __init__(self, spec: SlackMessageStateFile, author: str | None, parent: tuple[str, str] | None) -> None:
        self.spec = spec
        self.author = author
        self.parent = parent
        self.needle = spec.text_contains.lower() if spec.text_contains else None

    def misses(self, message: Read) -> list[str]:
        """The names of the conditions ``message`` does not meet, in ``ORDER``."""
        missed: list[str] = []
        if self.author is not None and message.user != self.author:
            missed.append("from")
        if self.parent is not None and not (
            message.channel == self.parent[0] and message.thread_ts == self.parent[1]
            and message.ts != self.parent[1]
        ):
            missed.append("in_thread_of")
        if self.needle is not None and self.needle not in message_text(message).lower():
            missed.append("text_contains")
        return missed

    def describe(self, exclude: list[str] | tuple[str, ...] = ()) -> str:
        phrases = []
        if self.spec.from_ and "from" not in exclude:
            phrases.append(f"from ${self.spec.from_}")
        if self.spec.in_thread_of and "in_thread_of" not in exclude:
            phrases.append(f"in the thread of ${self.spec.in_thread_of}")
        if self.spec.text_contains is not None and "text_contains" not in exclude:
            phrases.append(f"containing {self.spec.text_contains!r}")
        return " ".join(phrases)

    def explain_miss(self, name: str, group: list[Read], state: SlackState) -> str:
        if name == "from":
            authors = ", ".join(dict.fromkeys(_user_label(state, m.user) for m in group))
            return f"not from ${self.spec.from_} (written by {authors})"
        if name == "in_thread_of":
            places = []
            for m in group:
                if m.thread_ts is not None and m.thread_ts != m.ts:
                    places.append(f"thread {m.thread_ts}")
                elif self.parent is not None and m.ts == self.parent[1]:
                    places.append("the thread parent itself")
                else:
                    places.append("the top level of the channel")
            went = ", ".join(dict.fromkeys(places))
            return f"not in the thread of ${self.spec.in_thread_of} (it went to {went})"
        latest = message_text(group[-1])
        snippet = latest if len(latest) <= SNIPPET else latest[: SNIPPET - 1] + "…"
        if len(group) == 1:
            return f"it did not contain {self.spec.text_contains!r} (it said {snippet!r})"
        return f"no message contained {self.spec.text_contains!r} (the latest said {snippet!r})"


def message_text(message: Read) -> str:
    """The text a reader sees: ``text`` plus the text of its blocks and attachments."""
    parts = [message.text or ""]
    for extra in (message.blocks, message.attachments):
        if extra:
            parts.extend(_strings(extra))
    return "\n".join(parts)


def _strings(value: Any) -> list[str]:
    found: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if key in ("text", "fallback", "pretext", "title", "value") and isinstance(item, str):
                found.append(item)
            else:
                found.extend(_strings(item))
    elif isinstance(value, list):
        for item in value:
            found.extend(_strings(item))
    return found


def _closest(present: list[Read], match: _Conditions) -> tuple[list[Read], list[str]]:
    """The messages that missed the fewest conditions (the latest one's set), and those conditions."""
    misses = [(m, match.misses(m)) for m in present]
    fewest = min(len(missed) for _, missed in misses)
    best = [missed for _, missed in misses if len(missed) == fewest][-1]
    return [m for m, missed in misses if missed == best], best


def _elsewhere(state: SlackState, channel_id: str, match: _Conditions) -> list[Read]:
    """Messages written during the trial in other conversations that meet every other condition."""
    found: list[Read] = []
    for other in state.channels:
        if other == channel_id:
            continue
        found.extend(m for m in state.messages_written(other) if not match.misses(m))
    return found


def _creating_calls(world: WorldPort, messages: list[Read]) -> list[int]:
    """Seqs of the calls that created ``messages``: the first call that answered with
    the message's channel and ts (chat.postMessage; a later chat.update echoes them too)."""
    wanted = {(m.channel, m.ts) for m in messages}
    found: dict[tuple[str, str], int] = {}
    for entry in world.trace:
        if len(found) == len(wanted):
            break
        if entry.tool != "slack" or not entry.worked or b'"ts"' not in entry.response:
            continue
        try:
            body = json.loads(entry.response)
        except ValueError:
            continue
        if not isinstance(body, dict):
            continue
        key = (str(body.get("channel")), str(body.get("ts")))
        if key in wanted and key not in found:
            found[key] = entry.seq
    return sorted(found.values())


def _channel_label(state: SlackState, channel_id: str) -> str:
    channel = state.channels.get(channel_id)
    if channel is None:
        return channel_id
    if channel.is_im:
        return f"the DM {channel_id}"
    return f"#{channel.name}"


def _user_label(state: SlackState, user_id: str) -> str:
    user = state.users.get(user_id)
    return f"@{user.name} ({user_id})" if user is not None else user_id


def _expected(spec: SlackMessageStateFile) -> str:
    conditions = _Conditions(spec, None, None).describe()
    noun = "message" if spec.count_gte == 1 else "messages"
    amount = "a" if spec.count_gte == 1 else f"at least {spec.count_gte}"
    return f"{amount} {noun} in ${spec.channel}{' ' + conditions if conditions else ''}"


def _count(items: list[Any], noun: str) -> str:
    return f"{len(items)} {noun}{'' if len(items) == 1 else 's'}"


def _outcome(passed: bool, expected: str, actual: str, evidence: list[int]) -> StateOutcome:
    if passed:
        explanation = f"Passed: expected {expected}, and found {actual}."
    else:
        explanation = f"Failed: expected {expected}; actually {actual}."
    return StateOutcome(passed, expected, actual, explanation, evidence)


def _failed(expected: str, actual: str, evidence: list[int]) -> StateOutcome:
    return _outcome(False, expected, actual, evidence)


class SlackMessageHeld(CompiledPredicate):
    """``slack.message`` as a predicate: the set of matching messages, kept per event."""

    events = MESSAGE_EVENTS
    monotonic = False

    def __init__(self, key: str, body: dict[str, Any], replica: SlackReplica | None, world: WorldPort) -> None:
        super().__init__(key)
        self.world = world
        spec = SlackMessageStateFile.model_validate(body)
        self.count = spec.count_gte
        if replica is None:
            raise LookupError("the world has no Slack")
        self.state = replica.state
        self.channel = world.ref_id(spec.channel, "channel")
        author = world.ref_id(spec.from_, "user") if spec.from_ else None
        parent = replica.message_ref(spec.in_thread_of) if spec.in_thread_of else None
        self.conditions = _Conditions(spec, author, parent)
        self.matching: dict[str, int] = {}
        """ts -> creating trace seq (0 until known)."""
        for message in self.state.messages_in(self.channel):
            if self._matches(message):
                self.matching[message.ts] = 0
        if len(self.matching) >= self.count:
            self._set(True, world.clock.peek())

    def _matches(self, message: Message) -> bool:
        return not message.seeded and not self.conditions.misses(message)

    def on_event(self, event: DomainEvent) -> bool:
        data = event.data
        if data.get("channel") != self.channel:
            return self.holds
        ts = str(data.get("ts"))
        if event.type == "message_deleted":
            self.matching.pop(ts, None)
        else:
            message = self.state.message(self.channel, ts)
            if message is not None and self._matches(message):
                self.matching.setdefault(ts, len(self.world.trace) + 1)
            else:
                self.matching.pop(ts, None)
        holds = len(self.matching) >= self.count
        if holds and self.first_held is None:
            self._set(True, event.at, (seq for seq in self.matching.values() if seq))
        else:
            self.holds = holds
        return holds
