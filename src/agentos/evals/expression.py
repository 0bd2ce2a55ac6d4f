"""The safe expression language of expression checks and of condition and set nodes.

Python syntax, read-only and bounded: literals, names, arithmetic, comparisons, boolean
logic, conditional expressions, subscripts and slices, displays, comprehensions, and
calls to a short list of functions and read-only ``str``/``dict``/``list`` methods.
Everything else (attribute access, other calls, lambdas, ``:=``, names starting with
``_``) is refused when compiling. Evaluation is bounded by :mod:`agentos.evals.budget`,
so hostile input is refused or finishes quickly in little memory.

>>> compile_expression("len(draft_reply) > 40").evaluate({"draft_reply": "short"})
False
"""

from __future__ import annotations

import ast
from collections.abc import ItemsView, Iterator, KeysView, Mapping, ValuesView
from functools import lru_cache
from typing import Any

from agentos.evals.budget import MAX_DEPTH, MAX_SOURCE, Budget
from agentos.evals.compiler import Fn, Scope, compile_tree
from agentos.evals.errors import ExpressionError

__all__ = ["Expression", "ExpressionError", "compile_expression"]

_MESSAGE_LIMIT = 300


class Expression:
    """A compiled expression; immutable, so one instance may be evaluated from many threads."""

    __slots__ = ("source", "_fn")

    def __init__(self, source: str, fn: Fn) -> None:
        self.source = source
        self._fn = fn

    def __repr__(self) -> str:
        return f"Expression({self.source!r})"

    def evaluate(self, names: Mapping[str, Any], budget: Budget | None = None) -> Any:
        """Evaluate over ``names`` within ``budget`` (a fresh one by default); any failure is
        raised as :class:`ExpressionError`."""
        scope = Scope(names, {}, budget or Budget())
        try:
            result = self._fn(scope)
            if isinstance(result, Iterator | KeysView | ValuesView | ItemsView):
                # Lazy results would run after the budget is gone; settle them now.
                result = list(scope.budget.consume(result))
            return result
        except ExpressionError:
            raise
        except RecursionError:
            raise ExpressionError("Expression is nested too deeply to evaluate") from None
        except MemoryError:
            raise ExpressionError("Expression ran out of memory") from None
        except Exception as error:  # every failure of user code becomes an ExpressionError
            raise ExpressionError(_describe(error)) from None


def compile_expression(source: str) -> Expression:
    """Parse and check ``source``; raises :class:`ExpressionError` naming what was refused."""
    if not isinstance(source, str):
        raise ExpressionError("Expression must be a string")
    return _compile_cached(source)


@lru_cache(maxsize=1024)
def _compile_cached(source: str) -> Expression:
    if not source.strip():
        raise ExpressionError("Expression is empty")
    if len(source) > MAX_SOURCE:
        raise ExpressionError(f"Expression is too long (more than {MAX_SOURCE:,} characters)")
    tree = _parse(source)
    _check_depth(tree)
    return Expression(source, compile_tree(tree))


def _parse(source: str) -> ast.expr:
    try:
        return ast.parse(source.strip(), mode="eval").body
    except SyntaxError as error:
        where = f" (column {error.offset})" if error.offset else ""
        raise ExpressionError(f"Syntax error: {error.msg}{where}") from None
    except (RecursionError, MemoryError):
        raise ExpressionError(f"Expression is nested too deeply (more than {MAX_DEPTH} levels)") from None
    except ValueError as error:
        raise ExpressionError(f"Syntax error: {error}") from None


def _check_depth(tree: ast.expr) -> None:
    # Iterative, because a recursive walk is exactly what a deep tree would break.
    stack: list[tuple[ast.AST, int]] = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise ExpressionError(f"Expression is nested too deeply (more than {MAX_DEPTH} levels)")
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))


def _describe(error: Exception) -> str:
    if isinstance(error, KeyError) and error.args:
        message = f"Key {error.args[0]!r} not found"
    else:
        message = str(error) or type(error).__name__
    if len(message) > _MESSAGE_LIMIT:
        message = message[: _MESSAGE_LIMIT - 3] + "..."
    return message
