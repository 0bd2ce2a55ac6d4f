"""Errors a user can cause: printed without a traceback, each with its exit code."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class Problem:
    """One thing wrong in a user's file: where, what, and how to fix it."""

    path: str
    """Dotted path inside the file, e.g. ``agent.bogus`` or ``checks[2].trace.called``."""
    message: str
    hint: str | None = None
    line: int | None = None
    file: str | None = None


class AnchaUserError(Exception):
    """Base class of every error caused by the user's input; ``render()`` is what they see."""

    exit_code = 2

    def render(self) -> str:
        return str(self)


class RunFailed(AnchaUserError):
    """The run could not be carried out at all (exit 3)."""

    exit_code = 3
