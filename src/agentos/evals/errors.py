"""The one error the expression language raises."""

from __future__ import annotations


class ExpressionError(Exception):
    """An expression was refused or failed to evaluate; ``str(e)`` is the user-facing message."""
