"""World-rule actions on Slack: ``slack.message`` (chat.postMessage as ``from``, in the
thread of ``thread_of`` when given) and ``slack.reaction`` (reactions.add as ``from``),
made through the Web API with a token of that user, traced with actor ``world``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ancha.world.tools.slack.action_bodies import SlackMessageActionFile, SlackReactionActionFile

if TYPE_CHECKING:
    from ancha.world.kernel.port import WorldPort
    from ancha.world.tools.slack.replica import SlackReplica

ACTOR = "world"


def _id(world: WorldPort, ref: str) -> str:
    """The id a ref names (an id written as it is stays as it is: scenes built by hand)."""
    record = world.refs.get(ref.removeprefix("$").rpartition(".")[2])
    return record.id if record is not None else ref


def post_message(body: dict[str, Any], replica: SlackReplica, world: WorldPort) -> str | None:
    spec = SlackMessageActionFile.model_validate(body)
    actor = replica.world_actor
    channel, thread_ts = _id(world, spec.channel), None
    if spec.thread_of:
        channel, thread_ts = replica.message_ref(spec.thread_of)
    answer = actor.call(_id(world, spec.from_), ACTOR, "chat.postMessage", channel=channel, text=spec.text,
                        thread_ts=thread_ts)
    return None if answer.get("ok") else f"slack.message: {answer.get('error')}"


def add_reaction(body: dict[str, Any], replica: SlackReplica, world: WorldPort) -> str | None:
    spec = SlackReactionActionFile.model_validate(body)
    channel, ts = replica.message_ref(spec.message)
    answer = replica.world_actor.call(_id(world, spec.from_), ACTOR, "reactions.add", channel=channel,
                                      timestamp=ts, name=spec.name.strip(":"))
    return None if answer.get("ok") else f"slack.reaction: {answer.get('error')}"
