"""Relay connections as GitHub pages them: ``first``/``after``/``last``/``before``.

GitHub refuses a connection without ``first`` or ``last`` and one asking for more than
100 records; its cursors are opaque base64 strings. Ours encode the position in the
ordered list (``cursor:v2:<index>``), which is stable for a list that only grows at
the end, the case for issues, comments and reviews in creation order.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ancha.world.kernel.plain_numbers import is_plain_int
from ancha.world.tools.github.graphql.errors import (
    ExcessivePagination,
    GitHubGraphQLError,
    MissingPaginationBoundaries,
)
from ancha.world.tools.github.graphql.registry import plain

MAX_PAGE = 100


class InvalidCursor(GitHubGraphQLError):
    type = "INVALID_CURSOR_ARGUMENTS"


@dataclass(frozen=True, slots=True)
class Edge:
    cursor: str
    node: Any


@dataclass(frozen=True, slots=True)
class Page:
    """One page of an ordered list; the parent of every ``*Connection`` field."""

    items: Sequence[Any]
    start: int
    end: int
    extra: dict[str, Any] | None = None
    """Connection-specific totals (``issueCount`` of a search)."""

    @property
    def nodes(self) -> list[Any]:
        return list(self.items[self.start:self.end])

    @property
    def edges(self) -> list[Edge]:
        return [Edge(encode_cursor(i), self.items[i]) for i in range(self.start, self.end)]

    @property
    def page_info(self) -> dict[str, Any]:
        empty = self.start >= self.end
        return {"hasNextPage": self.end < len(self.items), "hasPreviousPage": self.start > 0,
                "startCursor": None if empty else encode_cursor(self.start),
                "endCursor": None if empty else encode_cursor(self.end - 1)}


def encode_cursor(index: int) -> str:
    return base64.b64encode(f"cursor:v2:{index}".encode()).decode()


def decode_cursor(cursor: str) -> int:
    try:
        text = base64.b64decode(cursor.encode(), validate=True).decode()
        prefix, _, index = text.rpartition(":")
        if prefix == "cursor:v2" and is_plain_int(index):
            return int(index)
    except (binascii.Error, UnicodeError, ValueError):
        pass
    raise InvalidCursor(f"`{cursor}` does not appear to be a valid cursor.")


def paginate(items: Sequence[Any], name: str, *, first: int | None = None, after: str | None = None,
             last: int | None = None, before: str | None = None, required: bool = True,
             extra: dict[str, Any] | None = None) -> Page:
    """The page of ``items`` the arguments ask for, or GitHub's pagination error for ``name``."""
    if first is None and last is None:
        if required:
            raise MissingPaginationBoundaries(
                f"You must provide a `first` or `last` value to properly paginate the `{name}` connection.")
        first = MAX_PAGE
    if first is not None and last is not None:
        raise GitHubGraphQLError(f"Passing both `first` and `last` to paginate the `{name}` connection is "
                                 "not supported.")
    for label, value in (("first", first), ("last", last)):
        if value is not None and value > MAX_PAGE:
            raise ExcessivePagination(f"Requesting {value} records on the `{name}` connection exceeds the "
                                      f"`{label}` limit of {MAX_PAGE} records.")
        if value is not None and value < 0:
            raise GitHubGraphQLError(f"`{label}` on the `{name}` connection cannot be less than zero.")
    start, end = 0, len(items)
    if after is not None:
        start = min(max(decode_cursor(after) + 1, 0), end)
    if before is not None:
        end = max(min(decode_cursor(before), end), start)
    if first is not None:
        end = min(end, start + first)
    elif last is not None:
        start = max(start, end - last)
    return Page(items, start, end, extra)


def pagination_args(args: dict[str, Any]) -> dict[str, Any]:
    """The four paging arguments out of a resolver's keyword arguments."""
    return {key: args.get(key) for key in ("first", "after", "last", "before")}


CONNECTIONS = ("Issue", "PullRequest", "IssueComment", "Label", "User", "PullRequestReview", "ReviewRequest",
               "Ref", "Milestone", "Repository", "SearchResultItem")


def _register() -> None:
    for kind in CONNECTIONS:
        plain(f"{kind}Connection", nodes="nodes", edges="edges", pageInfo="page_info")
        if kind != "SearchResultItem":  # a search counts per kind (issueCount, ...) instead
            plain(f"{kind}Connection", totalCount=lambda page: len(page.items))
        plain(f"{kind}Edge", cursor="cursor", node="node")
    plain("PageInfo", hasNextPage="hasNextPage", hasPreviousPage="hasPreviousPage", startCursor="startCursor",
          endCursor="endCursor")


_register()
