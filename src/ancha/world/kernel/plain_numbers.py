"""Whole numbers as agents write them in paths, queries and cursors.

``str.isdigit()`` is true for ``"²"`` and for a 5,000-digit string, and ``int()`` then
raises on both (a superscript is no decimal digit; Python refuses to convert more than
4,300 digits). Ids, page cursors and numbers in paths are read through here instead:
ASCII digits, and few enough of them to be an id.
"""

from __future__ import annotations

MAX_DIGITS = 20
"""Enough for any id or microsecond timestamp a replica hands out (2**64 has 20 digits)."""


def is_plain_int(text: str, max_digits: int = MAX_DIGITS) -> bool:
    """Whether ``text`` is 1 to ``max_digits`` ASCII digits."""
    return 0 < len(text) <= max_digits and text.isascii() and text.isdigit()


def plain_int(text: str, max_digits: int = MAX_DIGITS) -> int | None:
    """``int(text)`` when ``is_plain_int(text)``, else None."""
    return int(text) if is_plain_int(text, max_digits) else None
