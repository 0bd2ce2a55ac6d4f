"""Global node ids: the legacy base64 form the REST core hands out as ``node_id``.

``models.wire.node_id("Issue", 42)`` is base64 of ``05:Issue42``; objects without an
integer id of their own (refs, commits, trees, blobs) add ``:<name or sha>`` after their
repository's id, as GitHub's legacy ids do (``03:Ref123:refs/heads/main``).
"""

from __future__ import annotations

import base64
import binascii
import re

from ancha.world.tools.github.models.wire import node_id

__all__ = ["decode_node_id", "node_id", "string_node_id"]

_LEGACY = re.compile(r"^(\d{2}):([A-Za-z]+)(\d+)(?::(.*))?$", re.DOTALL)


def string_node_id(kind: str, repo_id: int, name: str) -> str:
    return base64.b64encode(f"{len(kind):02d}:{kind}{repo_id}:{name}".encode()).decode()


def decode_node_id(global_id: str) -> tuple[str, int, str | None] | None:
    """``(kind, number, rest)`` of an id this replica made, or None for anything else."""
    try:
        text = base64.b64decode(global_id.encode(), validate=True).decode()
    except (binascii.Error, UnicodeError, ValueError):
        return None
    match = _LEGACY.match(text)
    if match is None or int(match.group(1)) != len(match.group(2)):
        return None
    return match.group(2), int(match.group(3)), match.group(4)
