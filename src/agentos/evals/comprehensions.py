"""Comprehensions: list, set and dict comprehensions and generator expressions.

Every iteration of every ``for`` clause is charged to the evaluation's budget, so
nested loops over large ranges stop at the budget instead of running for hours.
Comprehension variables live in a child scope's ``local`` dictionary; the compiler
knows statically which names they are.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from itertools import islice
from typing import Any

from agentos.evals.budget import ITERATION_COST
from agentos.evals.errors import ExpressionError
from agentos.evals.scope import Assign, Bound, Compile, Fn, Scope, check_identifier

Clause = tuple[Fn, Assign, list[Fn]]


def _target(node: ast.expr) -> tuple[Assign, Bound]:
    if isinstance(node, ast.Name):
        name = node.id
        check_identifier(name)

        def assign(local: dict[str, Any], item: Any) -> None:
            local[name] = item

        return assign, frozenset({name})
    if isinstance(node, ast.Tuple | ast.List):
        subs = [_target(e) for e in node.elts]
        count = len(subs)

        def unpack(local: dict[str, Any], item: Any) -> None:
            values = list(islice(item, count + 1))
            if len(values) != count:
                raise ExpressionError(f"cannot unpack {len(values)} values into {count} names")
            for (sub, _), value in zip(subs, values, strict=True):
                sub(local, value)

        return unpack, frozenset().union(*(names for _, names in subs))
    raise ExpressionError("Comprehension targets must be names")


def _clauses(
    generators: list[ast.comprehension], bound: Bound, compile: Compile
) -> tuple[list[Clause], Bound]:
    clauses: list[Clause] = []
    for gen in generators:
        if gen.is_async:
            raise ExpressionError("'async for' is not allowed")
        source = compile(gen.iter, bound)
        assign, names = _target(gen.target)
        bound = bound | names
        clauses.append((source, assign, [compile(c, bound) for c in gen.ifs]))
    return clauses, bound


def _walk(clauses: list[Clause], index: int, scope: Scope) -> Iterator[None]:
    """Yield once per combination that passes every filter, with its names bound in scope."""
    source, assign, conditions = clauses[index]
    last = index == len(clauses) - 1
    budget, local = scope.budget, scope.local
    for item in source(scope):
        budget.charge(ITERATION_COST)
        assign(local, item)
        if all(c(scope) for c in conditions):
            if last:
                yield None
            else:
                yield from _walk(clauses, index + 1, scope)


def _child(s: Scope) -> Scope:
    return Scope(s.names, dict(s.local), s.budget)


def collection(kind: type) -> Callable[[Any, Bound, Compile], Fn]:
    """A list or set comprehension, built whole."""

    def compile_comprehension(node: Any, bound: Bound, compile: Compile) -> Fn:
        clauses, inner = _clauses(node.generators, bound, compile)
        element = compile(node.elt, inner)

        def build(s: Scope) -> Any:
            child = _child(s)
            return s.budget.charge_value(kind(element(child) for _ in _walk(clauses, 0, child)))

        return build

    return compile_comprehension


def generator(node: Any, bound: Bound, compile: Compile) -> Fn:
    """A generator expression: lazy, each item charged as it is drawn."""

    clauses, inner = _clauses(node.generators, bound, compile)
    element = compile(node.elt, inner)

    def lazy(s: Scope) -> Iterator[Any]:
        child = _child(s)
        return (element(child) for _ in _walk(clauses, 0, child))

    return lazy


def dictionary(node: Any, bound: Bound, compile: Compile) -> Fn:
    clauses, inner = _clauses(node.generators, bound, compile)
    key, value = compile(node.key, inner), compile(node.value, inner)

    def build(s: Scope) -> dict[Any, Any]:
        child = _child(s)
        return s.budget.charge_value({key(child): value(child) for _ in _walk(clauses, 0, child)})  # type: ignore[no-any-return]

    return build
