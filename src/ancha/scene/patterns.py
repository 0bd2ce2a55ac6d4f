"""Text patterns people react to: case-insensitive substrings, or ``/regex/``.

Facts' ``asked_by`` and ``match`` and decisions' ``asked_by`` use them. Regexes are
user input run against every message a person sees, so they compile with RE2 (linear
time, no catastrophic backtracking); the loader refuses one RE2 cannot compile.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import re2

_OPTIONS = re2.Options()
_OPTIONS.case_sensitive = False
_OPTIONS.log_errors = False  # RE2 would otherwise print every rejected pattern to stderr
_OPTIONS.never_capture = True


@dataclass(frozen=True, slots=True)
class TextPattern:
    """One compiled pattern; ``matches(text)`` ignores case."""

    text: str
    regex: re2._Regexp | None
    needle: str

    def matches(self, text: str) -> bool:
        if self.regex is not None:
            return self.regex.search(text) is not None
        return self.needle in text.casefold()


def is_regex(text: str) -> bool:
    return len(text) >= 2 and text.startswith("/") and text.endswith("/")


def compile_text_pattern(text: str) -> TextPattern:
    """``text`` as a pattern; raises ``ValueError`` (with RE2's reason) for a bad ``/regex/``."""
    if not is_regex(text):
        return TextPattern(text, None, text.casefold())
    body = text[1:-1]
    try:
        re.compile(body)
    except (re.error, RecursionError, OverflowError) as error:
        raise ValueError(str(error)) from None
    try:
        return TextPattern(text, re2.compile(body, _OPTIONS), "")
    except re2.error as error:
        reason = error.args[0] if error.args else "unsupported pattern"
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        raise ValueError(f"{reason} (patterns use RE2 syntax)") from None
