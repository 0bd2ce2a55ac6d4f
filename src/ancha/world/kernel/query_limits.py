"""The one bound every replica's query languages share.

Datadog's log, event, monitor, monitor-search and metric queries, Okta's ``filter`` and
``search``, GitHub's search ``q``, Slack's ``search.*`` query and PagerDuty's ``query``
filter all refuse a query longer than ``MAX_QUERY_LENGTH`` characters, and the nesting
parsers (Datadog's log and event syntax, Okta's expressions) one that nests deeper than
``MAX_QUERY_DEPTH`` (a parenthesis or a negation is one level). Each tool answers that
with its vendor's own error for a bad query; this module only says where the line is,
so the tools (which never import each other) agree on it.

Why these numbers: every real query we have seen fits in a few hundred characters and a
handful of levels, while the bound keeps each recursive parser (about three Python frames
a level) far below Python's recursion limit, and each parser's work linear in a text of
known size. A vendor whose own documented bound is tighter keeps it (GitHub's 256
characters).
"""

from __future__ import annotations

MAX_QUERY_LENGTH = 4096
"""Characters (code points) of one query string."""
MAX_QUERY_DEPTH = 32
"""Levels of nesting: each open parenthesis and each negation (``NOT``, ``-``, ``not``)."""

TOO_LONG = f"the query is longer than {MAX_QUERY_LENGTH} characters"
TOO_DEEP = f"the query nests deeper than {MAX_QUERY_DEPTH} levels"
"""The reasons, for the vendors whose error carries a sentence."""


def too_long(text: str) -> bool:
    """Whether ``text`` is past the shared length bound."""
    return len(text) > MAX_QUERY_LENGTH
