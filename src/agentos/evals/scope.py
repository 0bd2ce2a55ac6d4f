"""What compiled expression code runs against: the scope, and the shapes of compiled nodes."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from agentos.evals.budget import Budget
from agentos.evals.errors import ExpressionError


class Scope:
    """The variables one evaluation reads, its comprehension locals, and its budget."""

    __slots__ = ("names", "local", "budget")

    def __init__(self, names: Mapping[str, Any], local: dict[str, Any], budget: Budget) -> None:
        self.names = names
        self.local = local
        self.budget = budget


Fn = Callable[[Scope], Any]
"""A compiled node: evaluates to its value in a scope."""
Assign = Callable[[dict[str, Any], Any], None]
"""Binds a comprehension target in a locals dictionary."""
Bound = frozenset[str]
"""Names bound by enclosing comprehensions, known when compiling."""
Compile = Callable[[Any, Bound], Fn]


def check_identifier(name: str) -> None:
    """Refuse names and attributes starting with an underscore (``__class__`` and friends)."""
    if name.startswith("_"):
        raise ExpressionError(f"Access to '{name}' is not allowed")
