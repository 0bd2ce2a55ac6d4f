"""The bodies of Slack's world-rule actions, ``slack.message`` and ``slack.reaction``, and how
they resolve: one model each, written with refs (``$support``), resolved with bare ref names."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import ConfigDict, Field

from ancha.config.validation import Expect, FileModel, join
from ancha.scene.file_model import Ref
from ancha.scene.predicates import Resolver
from ancha.world.tools.slack.body_refs import resolve_refs


class _File(FileModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class SlackMessageActionFile(_File):
    channel: Ref
    from_: Ref = Field(alias="from")
    text: str
    thread_of: Ref | None = None


class SlackReactionActionFile(_File):
    channel: Ref
    message: Ref
    """Resolved: the bare message ref."""
    from_: Ref = Field(alias="from")
    name: Annotated[str, Expect("an emoji name such as eyes")]
    """Resolved: without colons (``eyes``, written ``:eyes:`` or ``eyes``)."""


def _in_channel(fields: dict[str, Any], names: tuple[str, ...], path: str, resolver: Resolver) -> bool:
    for field in names:
        target = fields.get(field)
        where = resolver.refs.records[target].extra.get("channel") if target else None
        if where is not None and where != fields["channel"]:
            resolver.add(join(path, field), f"${target} is in channel ${where}, not ${fields['channel']}",
                         "the message must be in the action's channel")
            return False
    return True


def resolve_message_action(body: dict[str, Any], path: str, resolver: Resolver) -> SlackMessageActionFile | None:
    fields = resolve_refs(body, path, resolver, (("channel", "channel"), ("from_", "user"), ("thread_of", "message")))
    if fields is None or fields.get("channel") is None or fields.get("from_") is None or body.get("text") is None:
        return None
    if not _in_channel(fields, ("thread_of",), path, resolver):
        return None
    return SlackMessageActionFile.model_validate({"channel": fields["channel"], "from": fields["from_"],
                                                  "text": body["text"], "thread_of": fields.get("thread_of")})


def resolve_reaction_action(body: dict[str, Any], path: str, resolver: Resolver) -> SlackReactionActionFile | None:
    fields = resolve_refs(body, path, resolver, (("channel", "channel"), ("from_", "user"), ("message", "message")))
    if fields is None or fields.get("channel") is None or fields.get("from_") is None:
        return None
    if fields.get("message") is None or body.get("name") is None:
        return None
    if not _in_channel(fields, ("message",), path, resolver):
        return None
    return SlackReactionActionFile.model_validate({"channel": fields["channel"], "message": fields["message"],
                                                   "from": fields["from_"], "name": body["name"].strip(":")})
