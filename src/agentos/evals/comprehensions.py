"""Comprehensions: list, set and dict comprehensions and generator expressions.

Every iteration of every ``for`` clause is charged to the evaluation's budget, so
nested loops over large ranges stop at the budget instead of running for hours.
Comprehension variables live in a child scope's ``local`` dictionary; the compiler
knows statically which names they are. The loops are plain closures (no generator
per item) because comprehensions are where an expression spends its time.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from itertools import islice
from typing import Any

from agentos.evals.budget import ITERATION_COST, Budget
from agentos.evals.errors import ExpressionError
from agentos.evals.scope import Assign, Bound, Compile, Fn, Scope, check_identifier

Visit = Callable[[Scope], None]
Clause = tuple[Fn, Assign, str | None, list[Fn]]


def _target(node: ast.expr) -> tuple[Assign, Bound]:
    if isinstance(node, ast.Name):
        name = node.id
        check_identifier(name)

        def assign(local: dict[str, Any], item: Any) -> None:
            local[name] = item

        return assign, frozenset({name})
    if isinstance(node, ast.Tuple | ast.List):
        parts = [_target(e) for e in node.elts]
        subs = [assign for assign, _ in parts]
        names: Bound = frozenset().union(*(bound for _, bound in parts))
        flat = tuple(e.id for e in node.elts if isinstance(e, ast.Name))
        count = len(subs)

        def unpack(local: dict[str, Any], item: Any) -> None:
            values = item if type(item) in (tuple, list, str) else tuple(islice(item, count + 1))
            if len(values) != count:
                raise ExpressionError(f"cannot unpack {len(values)} values into {count} names")
            if len(flat) == count:
                local.update(zip(flat, values, strict=False))  # lengths already checked
            else:
                for sub, value in zip(subs, values, strict=True):
                    sub(local, value)

        return unpack, names
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
        simple = gen.target.id if isinstance(gen.target, ast.Name) else None
        bound = bound | names
        clauses.append((source, assign, simple, [compile(c, bound) for c in gen.ifs]))
    return clauses, bound


def _loop(clause: Clause, inner: Visit) -> Visit:
    source, assign, simple, conditions = clause

    def loop(s: Scope) -> None:
        budget, local = s.budget, s.local
        for item in source(s):
            budget.used += ITERATION_COST
            if budget.used > budget.limit:
                budget.exceeded()
            if simple is not None:
                local[simple] = item
            else:
                assign(local, item)
            for condition in conditions:
                if not condition(s):
                    break
            else:
                inner(s)

    return loop


def _nest(clauses: list[Clause], visit: Visit) -> Visit:
    """One function running every clause, innermost last, calling ``visit`` per binding."""
    run = visit
    for clause in reversed(clauses):
        run = _loop(clause, run)
    return run


class _Sink(Scope):
    """A comprehension's scope: its own locals, plus the collection being built."""

    __slots__ = ("out",)

    def __init__(self, parent: Scope, out: Any) -> None:
        super().__init__(parent.names, dict(parent.local), parent.budget)
        self.out = out


def collection(kind: type) -> Callable[[Any, Bound, Compile], Fn]:
    """A list or set comprehension, built whole."""

    def compile_comprehension(node: Any, bound: Bound, compile: Compile) -> Fn:
        clauses, inner = _clauses(node.generators, bound, compile)
        element = compile(node.elt, inner)
        run = _nest(clauses, lambda s: s.out.append(element(s)))  # type: ignore[attr-defined]

        def build(s: Scope) -> Any:
            sink = _Sink(s, [])
            run(sink)
            if kind is set:  # collected as a list first, so the keys can be checked
                return s.budget.charge_value(set(s.budget.charge_keys(sink.out)))
            return s.budget.charge_value(sink.out)

        return build

    return compile_comprehension


def dictionary(node: Any, bound: Bound, compile: Compile) -> Fn:
    """A dict comprehension; the key is evaluated before the value, as in Python."""
    clauses, inner = _clauses(node.generators, bound, compile)
    key, value = compile(node.key, inner), compile(node.value, inner)

    def visit(s: Any) -> None:
        k = key(s)
        s.out.append((k, value(s)))

    run = _nest(clauses, visit)

    def build(s: Scope) -> dict[Any, Any]:
        sink = _Sink(s, [])
        run(sink)
        s.budget.charge_keys([k for k, _ in sink.out])
        return s.budget.charge_value(dict(sink.out))  # type: ignore[no-any-return]

    return build


def generator(node: Any, bound: Bound, compile: Compile) -> Fn:
    """A generator expression: lazy, so ``any(...)`` can stop early; iterations still charged."""
    clauses, inner = _clauses(node.generators, bound, compile)
    element = compile(node.elt, inner)

    def lazy(s: Scope) -> Iterator[Any]:
        return _walk(clauses, 0, Scope(s.names, dict(s.local), s.budget), element)

    return lazy


def _walk(clauses: list[Clause], index: int, scope: Scope, element: Fn) -> Iterator[Any]:
    """Yield the element once per binding that passes every filter."""
    source, assign, simple, conditions = clauses[index]
    last = index == len(clauses) - 1
    budget: Budget = scope.budget
    local = scope.local
    for item in source(scope):
        budget.used += ITERATION_COST
        if budget.used > budget.limit:
            budget.exceeded()
        if simple is not None:
            local[simple] = item
        else:
            assign(local, item)
        for condition in conditions:
            if not condition(scope):
                break
        else:
            if last:
                yield element(scope)
            else:
                yield from _walk(clauses, index + 1, scope, element)
