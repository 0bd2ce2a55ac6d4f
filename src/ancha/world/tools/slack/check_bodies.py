"""The ``slack.message`` state check's body (also a predicate), and how it resolves: one
model, written with refs (``$support``), resolved with bare ref names."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import ConfigDict, Field

from ancha.config.validation import FileModel
from ancha.scene.file_model import Ref
from ancha.scene.predicates import Resolver
from ancha.world.tools.slack.body_refs import resolve_refs


class _File(FileModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class SlackMessageStateFile(_File):
    channel: Ref
    from_: Ref | None = Field(default=None, alias="from")
    text_contains: str | None = None
    in_thread_of: Ref | None = None
    count_gte: Annotated[int, Field(gt=0)] = 1


def resolve_message_state(body: dict[str, Any], path: str, resolver: Resolver) -> SlackMessageStateFile | None:
    """A ``slack.message`` state body with its refs resolved."""
    resolved = resolve_refs(body, path, resolver,
                            (("channel", "channel"), ("from_", "user"), ("in_thread_of", "message")))
    if resolved is None or resolved.get("channel") is None:
        return None
    return SlackMessageStateFile.model_validate({**resolved, "count_gte": body.get("count_gte", 1),
                                                 "text_contains": body.get("text_contains")})
