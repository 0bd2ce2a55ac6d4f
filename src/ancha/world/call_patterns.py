"""Trace patterns: ``"<METHOD> <PATH>"`` or ``"*"``, matched against the agent's calls.

The method ignores case and ``*`` accepts any method. The path is exact, relative to
the tool's base URL, without the query string; ``*`` in it matches any run of
characters, ``/`` included. Each pattern is compiled once into a regular expression
built from its escaped literal parts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

AGENT = "agent"

_METHOD = re.compile(r"[A-Za-z]+|\*")


class Call(Protocol):
    """What a pattern looks at: a trace entry, or anything with its actor, method and path."""

    actor: str
    method: str
    path: str


@dataclass(frozen=True, slots=True)
class TracePattern:
    text: str
    method: str | None
    """Upper-case method, or None for any."""
    path: re.Pattern[str]

    def matches(self, method: str, path: str) -> bool:
        if self.method is not None and method.upper() != self.method:
            return False
        return self.path.fullmatch(path) is not None

    def matches_call(self, call: Call) -> bool:
        """Whether ``call`` is the agent's own and matches; other actors never count."""
        return call.actor == AGENT and self.matches(call.method, call.path)

    def __str__(self) -> str:
        return self.text


@lru_cache(maxsize=1024)
def compile_pattern(text: str) -> TracePattern:
    """Compile ``text``; raise ``ValueError`` with a hint when it is not a pattern."""
    stripped = text.strip()
    if stripped == "*":
        return TracePattern(text=stripped, method=None, path=re.compile(r".*", re.DOTALL))
    method, sep, path = stripped.partition(" ")
    path = path.strip()
    if not sep or not path:
        raise ValueError(f"trace pattern {text!r} is not \"<METHOD> <PATH>\" or \"*\" "
                         "(for example \"POST /api/chat.postMessage\" or \"* /repos/*\")")
    if not _METHOD.fullmatch(method):
        raise ValueError(f"trace pattern {text!r}: {method!r} is not an HTTP method or *")
    if " " in path:
        raise ValueError(f"trace pattern {text!r}: the path has a space in it")
    if "?" in path:
        raise ValueError(f"trace pattern {text!r}: patterns match the path without its query string; "
                         f"drop {path[path.index('?'):]!r}")
    if not path.startswith(("/", "*")):
        raise ValueError(f"trace pattern {text!r}: the path is relative to the tool's base URL and "
                         f"starts with '/', e.g. \"{method} /{path}\"")
    regex = ".*".join(re.escape(part) for part in path.split("*"))
    return TracePattern(
        text=f"{method.upper()} {path}",
        method=None if method == "*" else method.upper(),
        path=re.compile(regex, re.DOTALL),
    )


def compile_patterns(texts: str | list[str]) -> list[TracePattern]:
    return [compile_pattern(t) for t in ([texts] if isinstance(texts, str) else texts)]
