"""Turns a checked Python expression tree into nested closures.

Each node becomes a function of a :class:`Scope`; evaluation is a call of the root.
Names bound by comprehensions are resolved when compiling, so a name is read either
from the comprehension's locals or from the caller's variables, never guessed at run
time. Everything not handled here is refused while compiling, with a message that
names what was refused.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from functools import partial
from typing import Any

from agentos.evals import comprehensions
from agentos.evals import operators as ops
from agentos.evals.budget import Budget, check_size
from agentos.evals.errors import ExpressionError
from agentos.evals.functions import FUNCTIONS, METHOD_NAMES, call_method, to_ascii, to_repr, to_text
from agentos.evals.scope import Bound, Compile, Fn, Scope, check_identifier

__all__ = ["Fn", "Scope", "compile_tree"]

_BINARY = {
    ast.Add: ops.add, ast.Sub: ops.sub, ast.Mult: ops.mul, ast.Div: ops.truediv,
    ast.FloorDiv: ops.floordiv, ast.Mod: ops.mod, ast.Pow: ops.power,
    ast.LShift: ops.lshift, ast.RShift: ops.rshift,
    ast.BitOr: ops.bit_or, ast.BitAnd: ops.bit_and, ast.BitXor: ops.bit_xor,
}  # fmt: skip
_COMPARE = {
    ast.Eq: ops.eq, ast.NotEq: ops.ne, ast.Lt: ops.lt, ast.LtE: ops.le, ast.Gt: ops.gt,
    ast.GtE: ops.ge, ast.In: ops.contains, ast.NotIn: ops.not_contains,
    ast.Is: ops.is_, ast.IsNot: ops.is_not,
}  # fmt: skip
_REFUSED = {
    ast.Lambda: "Lambda expressions are not allowed",
    ast.NamedExpr: "Assignment expressions (:=) are not allowed",
    ast.Await: "'await' is not allowed",
    ast.Yield: "'yield' is not allowed",
    ast.YieldFrom: "'yield' is not allowed",
    ast.Starred: "Unpacking with '*' is not allowed",
}
_CONSTANT_TYPES = (str, int, float, bool, type(None))


def compile_tree(node: ast.expr) -> Fn:
    """Compile an already depth-checked expression tree; raises ExpressionError if refused."""
    return _compile(node, frozenset())


def _compile(node: ast.expr, bound: Bound) -> Fn:
    compiler = _COMPILERS.get(type(node))
    if compiler is None:
        message = _REFUSED.get(type(node), f"{type(node).__name__} expressions are not allowed")
        raise ExpressionError(message)
    return compiler(node, bound)


def _constant(node: Any, bound: Bound) -> Fn:
    value = node.value
    if not isinstance(value, _CONSTANT_TYPES):
        raise ExpressionError(f"Constants of type '{type(value).__name__}' are not allowed")
    return lambda s: value


def _name(node: Any, bound: Bound) -> Fn:
    name: str = node.id
    check_identifier(name)
    if name in bound:
        return lambda s: s.local[name]

    def load(s: Scope) -> Any:
        try:
            return s.names[name]
        except KeyError:
            raise ExpressionError(f"Unknown variable '{name}'") from None

    return load


def _bool_op(node: Any, bound: Bound) -> Fn:
    parts = [_compile(v, bound) for v in node.values]
    if isinstance(node.op, ast.And):

        def all_of(s: Scope) -> Any:
            value: Any = True
            for part in parts:
                value = part(s)
                if not value:
                    return value
            return value

        return all_of

    def any_of(s: Scope) -> Any:
        value: Any = False
        for part in parts:
            value = part(s)
            if value:
                return value
        return value

    return any_of


def _unary_op(node: Any, bound: Bound) -> Fn:
    op = node.op
    if isinstance(node.operand, ast.Constant) and isinstance(op, ast.USub | ast.UAdd):
        # Fold literal signs (`x == -1`) so the loop does not negate a constant each time.
        folded = _constant(node.operand, bound)(None)  # type: ignore[arg-type]
        if isinstance(folded, int | float) and not isinstance(folded, bool):
            value = -folded if isinstance(op, ast.USub) else +folded
            return lambda s: value
    operand = _compile(node.operand, bound)
    if isinstance(op, ast.Not):
        return lambda s: not operand(s)
    if isinstance(op, ast.USub):
        return lambda s: -operand(s)
    if isinstance(op, ast.UAdd):
        return lambda s: +operand(s)
    return lambda s: ~operand(s)


def _bin_op(node: Any, bound: Bound) -> Fn:
    op = _BINARY.get(type(node.op))
    if op is None:
        raise ExpressionError("Operator '@' is not allowed")
    left, right = _compile(node.left, bound), _compile(node.right, bound)
    return lambda s: op(s.budget, left(s), right(s))


def _compare(node: Any, bound: Bound) -> Fn:
    first = _compile(node.left, bound)
    rest = [(_COMPARE[type(o)], _compile(c, bound)) for o, c in zip(node.ops, node.comparators, strict=True)]
    if len(rest) == 1:
        op, right = rest[0]
        return lambda s: op(s.budget, first(s), right(s))

    def chain(s: Scope) -> bool:
        left = first(s)
        for op, comparator in rest:
            right = comparator(s)
            if not op(s.budget, left, right):
                return False
            left = right
        return True

    return chain


def _if_exp(node: Any, bound: Bound) -> Fn:
    test, body, orelse = (_compile(n, bound) for n in (node.test, node.body, node.orelse))
    return lambda s: body(s) if test(s) else orelse(s)


def _optional(node: ast.expr | None, bound: Bound) -> Fn:
    return (lambda s: None) if node is None else _compile(node, bound)


def _subscript(node: Any, bound: Bound) -> Fn:
    value = _compile(node.value, bound)
    if isinstance(node.slice, ast.Slice):
        lower, upper, step = (
            _optional(n, bound) for n in (node.slice.lower, node.slice.upper, node.slice.step)
        )

        def sliced(s: Scope) -> Any:
            target, bounds = value(s), slice(lower(s), upper(s), step(s))
            if isinstance(target, str | list | tuple):
                check_size(len(range(*bounds.indices(len(target)))))
            return s.budget.charge_value(target[bounds])

        return sliced
    key = _compile(node.slice, bound)

    def item(s: Scope) -> Any:
        target, k = value(s), key(s)
        if type(k) is tuple:  # hashing a tuple walks it
            s.budget.charge_scan(k)
        return target[k]

    return item


def _display(kind: type) -> Callable[[Any, Bound], Fn]:
    def compile_display(node: Any, bound: Bound) -> Fn:
        items = [_compile(e, bound) for e in node.elts]
        if kind is set:
            return lambda s: s.budget.charge_value(set(s.budget.charge_keys([item(s) for item in items])))
        return lambda s: s.budget.charge_value(kind([item(s) for item in items]))

    return compile_display


def _dict(node: Any, bound: Bound) -> Fn:
    if any(k is None for k in node.keys):
        raise ExpressionError("Unpacking with '**' is not allowed")
    keys = [_compile(k, bound) for k in node.keys]
    values = [_compile(v, bound) for v in node.values]

    def build(s: Scope) -> dict[Any, Any]:
        pairs = [(k(s), v(s)) for k, v in zip(keys, values, strict=True)]
        s.budget.charge_keys([k for k, _ in pairs])
        return s.budget.charge_value(dict(pairs))  # type: ignore[no-any-return]

    return build


def _joined_str(node: Any, bound: Bound) -> Fn:
    parts: list[Fn] = []
    for value in node.values:
        if isinstance(value, ast.Constant):
            parts.append(_constant(value, bound))
            continue
        if value.format_spec is not None:
            raise ExpressionError("Format specifications in f-strings are not allowed")
        convert = {ord("r"): to_repr, ord("a"): to_ascii}.get(value.conversion, to_text)
        parts.append(_formatted(_compile(value.value, bound), convert))

    def render(s: Scope) -> str:
        texts = [part(s) for part in parts]
        check_size(sum(len(t) for t in texts))
        return s.budget.charge_value("".join(texts))  # type: ignore[no-any-return]

    return render


def _formatted(inner: Fn, convert: Callable[[Budget, Any], str]) -> Fn:
    return lambda s: convert(s.budget, inner(s))


def _call(node: Any, bound: Bound) -> Fn:
    # Refuse in reading order: `open(...).read()` is refused for `open`, not `read`.
    func = node.func
    if isinstance(func, ast.Name):
        _check_function(func.id, [k.arg for k in node.keywords if k.arg is not None])
    elif isinstance(func, ast.Attribute):
        receiver = _compile(func.value, bound)
        _check_method(func.attr)
    else:
        _compile(func, bound)  # a lambda or := is refused for what it is
        raise ExpressionError("Only the allowed functions and methods can be called")
    if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
        raise ExpressionError("Unpacking arguments with '*' or '**' is not allowed")
    args = [_compile(a, bound) for a in node.args]
    kwargs = [(k.arg, _compile(k.value, bound)) for k in node.keywords]
    if isinstance(func, ast.Name):
        return _call_function(func.id, args, kwargs)
    return _call_method(receiver, func.attr, args, kwargs)


def _check_function(name: str, keywords: list[str]) -> None:
    check_identifier(name)
    if name not in FUNCTIONS:
        raise ExpressionError(f"Function '{name}' is not allowed")
    allowed = FUNCTIONS[name][1]
    for key in keywords:
        if key not in allowed and "*" not in allowed:
            raise ExpressionError(f"Keyword argument '{key}' is not allowed for {name}()")


def _call_function(name: str, args: list[Fn], kwargs: list[tuple[str, Fn]]) -> Fn:
    impl = FUNCTIONS[name][0]
    if not kwargs and len(args) == 1:
        only = args[0]
        return lambda s: impl(s.budget, only(s))
    return lambda s: impl(s.budget, *[a(s) for a in args], **{k: v(s) for k, v in kwargs})


def _check_method(name: str) -> None:
    check_identifier(name)
    if name not in METHOD_NAMES:
        raise ExpressionError(f"Attribute '{name}' is not allowed")


def _call_method(obj: Fn, name: str, args: list[Fn], kwargs: list[tuple[str, Fn]]) -> Fn:
    def call(s: Scope) -> Any:
        target = obj(s)
        values = tuple(a(s) for a in args)
        return call_method(s.budget, target, name, values, {k: v(s) for k, v in kwargs})

    return call


def _attribute(node: Any, bound: Bound) -> Fn:
    _compile(node.value, bound)  # so refusals come in reading order
    _check_method(node.attr)
    raise ExpressionError(f"Method '{node.attr}' must be called")


def _with_compile(compiler: Callable[[Any, Bound, Compile], Fn], node: Any, bound: Bound) -> Fn:
    return compiler(node, bound, _compile)


_COMPILERS: dict[type, Callable[[Any, Bound], Fn]] = {
    ast.Constant: _constant,
    ast.Name: _name,
    ast.BoolOp: _bool_op,
    ast.UnaryOp: _unary_op,
    ast.BinOp: _bin_op,
    ast.Compare: _compare,
    ast.IfExp: _if_exp,
    ast.Subscript: _subscript,
    ast.List: _display(list),
    ast.Tuple: _display(tuple),
    ast.Set: _display(set),
    ast.Dict: _dict,
    ast.JoinedStr: _joined_str,
    ast.Call: _call,
    ast.Attribute: _attribute,
    ast.ListComp: partial(_with_compile, comprehensions.collection(list)),
    ast.SetComp: partial(_with_compile, comprehensions.collection(set)),
    ast.GeneratorExp: partial(_with_compile, comprehensions.generator),
    ast.DictComp: partial(_with_compile, comprehensions.dictionary),
}
