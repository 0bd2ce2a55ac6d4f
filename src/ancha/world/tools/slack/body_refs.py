"""The refs of a Slack check or action body, resolved to bare names."""

from __future__ import annotations

from typing import Any

from ancha.config.validation import join
from ancha.scene.predicates import Resolver

TOOL = "slack"


def resolve_refs(body: dict[str, Any], path: str, resolver: Resolver, fields: tuple[tuple[str, str], ...]) -> \
        dict[str, Any] | None:
    """``fields`` ((attribute, kind), ...) of ``body`` resolved to bare refs; None if one is wrong."""
    resolved: dict[str, Any] = {}
    ok = True
    for field, kind in fields:
        if body.get(field) is None:
            continue
        name = resolver.refs.resolve(body[field], kind, resolver.source.reporter(join(path, field.rstrip("_"))),
                                     tool=None if kind == "message" else TOOL)
        ok = ok and name is not None
        resolved[field] = name
    return resolved if ok else None
