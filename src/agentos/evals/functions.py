"""The functions and methods an expression may call, each bounded by the evaluation's budget.

Nothing outside these tables is callable. Methods are looked up on the value's base type
(``str``, ``dict``, ``list``, ``tuple``) and called unbound, so a subclass cannot swap in
its own behaviour, and only read-only methods are listed: an expression cannot change
the state it reads.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterator, Sized
from typing import Any

from agentos.evals.budget import (
    ITEM_COST,
    MAX_RANGE,
    Budget,
    check_size,
    text_size_estimate,
)
from agentos.evals.errors import ExpressionError

Function = Callable[..., Any]
"""An implementation: called as ``impl(budget, *args, **kwargs)``."""

_INT_TEXT_LIMIT = 4300  # CPython's own default guard against quadratic int(str)
_ROUND_LIMIT = 1000
_NUMBERS = (int, float)


def to_text(b: Budget, value: Any) -> str:
    """``str(value)``, refusing values whose text would be too large to build."""
    if type(value) is str:
        return value
    if isinstance(value, list | tuple | dict | set | frozenset):
        b.charge_scan(value)  # the estimate walks it, as str() would
        check_size(text_size_estimate(value), "Text")
    return b.charge_value(builtins.str(value))  # type: ignore[no-any-return]


def to_repr(b: Budget, value: Any) -> str:
    """``repr(value)``, with the same bound as :func:`to_text`."""
    b.charge_scan(value)
    check_size(text_size_estimate(value), "Text")
    return b.charge_value(builtins.repr(value))  # type: ignore[no-any-return]


def to_ascii(b: Budget, value: Any) -> str:
    """``ascii(value)``, for ``!a`` in f-strings; escapes at most quadruple the estimate."""
    b.charge_scan(value)
    check_size(4 * text_size_estimate(value), "Text")
    return b.charge_value(builtins.ascii(value))  # type: ignore[no-any-return]


def _len(b: Budget, value: Any) -> int:
    return builtins.len(value)


def _str(b: Budget, value: Any = "") -> str:
    return to_text(b, value)


def _int(b: Budget, value: Any = 0, *base: Any) -> int:
    if isinstance(value, str) and builtins.len(value) > _INT_TEXT_LIMIT:
        raise ExpressionError(f"int() argument is too long (more than {_INT_TEXT_LIMIT:,} characters)")
    return builtins.int(value, *base)


def _float(b: Budget, value: Any = 0.0) -> float:
    return builtins.float(value)


def _bool(b: Budget, value: Any = False) -> bool:
    return builtins.bool(value)


def _abs(b: Budget, value: Any) -> Any:
    return builtins.abs(value)


def _round(b: Budget, value: Any, ndigits: Any = None) -> Any:
    # round(5, -10**18) computes 10**(10**18): bound ndigits first.
    if isinstance(ndigits, builtins.int) and builtins.abs(ndigits) > _ROUND_LIMIT:
        raise ExpressionError(f"round() ndigits must be between -{_ROUND_LIMIT} and {_ROUND_LIMIT}")
    return builtins.round(value, ndigits)


def _extreme(pick: Function) -> Function:
    def apply(b: Budget, *args: Any, **kwargs: Any) -> Any:
        if builtins.len(args) == 1:
            items = b.consume(args[0])
            b.charge_scan(items)
            return pick(items, **kwargs)
        b.charge_scan(args)
        return pick(*args, **kwargs)

    return apply


def _sum(b: Budget, iterable: Any, start: Any = 0) -> Any:
    # A list or string start would make sum() a quadratic concatenation.
    if not isinstance(start, _NUMBERS):
        raise ExpressionError("sum() start must be a number")
    return builtins.sum(b.consume(iterable), start)


# Sized values are charged by length up front; generators charge their own iterations,
# and zip/enumerate/reversed charge for the sized values they walk when they are made.
def _any(b: Budget, iterable: Any) -> bool:
    b.charge_sized(iterable)
    return builtins.any(iterable)


def _all(b: Budget, iterable: Any) -> bool:
    b.charge_sized(iterable)
    return builtins.all(iterable)


def _sorted(b: Budget, iterable: Any, reverse: Any = False) -> list[Any]:
    items = builtins.list(b.consume(iterable))
    before = b.used
    b.charge_scan(items)
    # Sorting compares each item about log2(n) times.
    b.charge((b.used - before) * builtins.len(items).bit_length())
    items.sort(reverse=builtins.bool(reverse))
    return b.charge_value(items)  # type: ignore[no-any-return]


def _builder(kind: type) -> Function:
    def build(b: Budget, *args: Any, **kwargs: Any) -> Any:
        if builtins.len(args) > 1:
            raise ExpressionError(f"{kind.__name__}() takes at most 1 argument")
        if not args:
            return b.charge_value(kind(**kwargs))
        source = b.consume(args[0])
        if kind is set:
            return b.charge_value(set(b.charge_keys(builtins.list(source))))
        if kind is dict and not isinstance(source, dict):
            pairs = builtins.list(source)
            b.charge_keys([p[0] for p in pairs if isinstance(p, list | tuple) and builtins.len(p) == 2])
            source = pairs
        return b.charge_value(kind(source, **kwargs))

    return build


def _range(b: Budget, *args: Any) -> range:
    span = builtins.range(*args)
    try:
        size = builtins.len(span)
    except OverflowError:
        size = MAX_RANGE + 1
    if size > MAX_RANGE:
        raise ExpressionError(f"range() is limited to {MAX_RANGE:,} items")
    return span


def _enumerate(b: Budget, iterable: Any, start: Any = 0) -> Iterator[tuple[int, Any]]:
    b.charge_sized(iterable)
    return builtins.enumerate(iterable, start)


def _zip(b: Budget, *iterables: Any) -> Iterator[tuple[Any, ...]]:
    sizes = [builtins.len(i) for i in iterables if isinstance(i, Sized)]
    if sizes:
        b.charge(ITEM_COST * builtins.min(sizes))
    return builtins.zip(*iterables, strict=False)


def _reversed(b: Budget, sequence: Any) -> Iterator[Any]:
    b.charge_sized(sequence)
    return builtins.reversed(sequence)


FUNCTIONS: dict[str, tuple[Function, frozenset[str]]] = {
    # name: (implementation, keyword arguments it accepts)
    "len": (_len, frozenset()),
    "str": (_str, frozenset()),
    "int": (_int, frozenset()),
    "float": (_float, frozenset()),
    "bool": (_bool, frozenset()),
    "abs": (_abs, frozenset()),
    "round": (_round, frozenset({"ndigits"})),
    "min": (_extreme(builtins.min), frozenset({"default"})),
    "max": (_extreme(builtins.max), frozenset({"default"})),
    "sum": (_sum, frozenset({"start"})),
    "any": (_any, frozenset()),
    "all": (_all, frozenset()),
    "sorted": (_sorted, frozenset({"reverse"})),
    "list": (_builder(list), frozenset()),
    "tuple": (_builder(tuple), frozenset()),
    "set": (_builder(set), frozenset()),
    "dict": (_builder(dict), frozenset({"*"})),  # dict(a=1): any keyword is a key
    "range": (_range, frozenset()),
    "enumerate": (_enumerate, frozenset({"start"})),
    "zip": (_zip, frozenset()),
    "reversed": (_reversed, frozenset()),
}

_STR_METHODS = frozenset({
    "lower", "upper", "casefold", "title", "capitalize", "swapcase", "strip", "lstrip", "rstrip",
    "startswith", "endswith", "split", "rsplit", "splitlines", "partition", "rpartition", "replace",
    "join", "count", "find", "rfind", "index", "rindex", "removeprefix", "removesuffix", "isdigit",
    "isalpha", "isalnum", "isspace", "islower", "isupper", "isnumeric", "isdecimal", "istitle",
})  # fmt: skip
_STR_BUILDERS = frozenset({
    "lower", "upper", "casefold", "title", "capitalize", "swapcase", "strip", "lstrip", "rstrip",
    "split", "rsplit", "splitlines", "partition", "rpartition", "replace", "removeprefix", "removesuffix",
})  # fmt: skip
"""Methods that copy the whole string: refused on strings over the size limit."""
_DICT_METHODS = frozenset({"get", "keys", "values", "items"})
_SEQUENCE_METHODS = frozenset({"count", "index"})
_METHODS: dict[type, frozenset[str]] = {
    str: _STR_METHODS,
    dict: _DICT_METHODS,
    list: _SEQUENCE_METHODS,
    tuple: _SEQUENCE_METHODS,
}
METHOD_NAMES = _STR_METHODS | _DICT_METHODS | _SEQUENCE_METHODS
"""Every method name an expression may call on some type."""


def _base_type(value: Any) -> type | None:
    for kind in _METHODS:
        if isinstance(value, kind):
            return kind
    return None


def call_method(b: Budget, obj: Any, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``obj.name(*args, **kwargs)`` for a whitelisted method of ``obj``'s base type."""
    kind = _base_type(obj)
    if kind is None or name not in _METHODS[kind]:
        raise ExpressionError(f"'{type(obj).__name__}' has no method '{name}'")
    for arg in (*args, *kwargs.values()):
        b.charge_scan(arg)  # str.startswith(tuple), list.count(x) and dict.get(t) walk their arguments
    if kind is str:
        b.charge(builtins.len(obj))
        if name in _STR_BUILDERS:
            check_size(builtins.len(obj))
        if name == "replace":
            _check_replace(b, obj, args, kwargs)
        elif name == "join" and args:
            args = (builtins.list(b.consume(args[0])), *args[1:])
            _check_join(obj, args[0])
    elif kind is not dict:
        b.charge_scan(obj)
    result = getattr(kind, name)(obj, *args, **kwargs)
    if isinstance(result, str):
        b.charge_value(result)
    elif isinstance(result, list | tuple):
        b.charge(ITEM_COST * builtins.len(result))
        b.charge_value(result)
    return result


def _check_replace(b: Budget, text: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    if builtins.len(args) < 2 or not isinstance(args[0], str) or not isinstance(args[1], str):
        return  # str.replace raises its own TypeError
    old, new = args[0], args[1]
    count = args[2] if builtins.len(args) > 2 else kwargs.get("count", -1)
    hits = builtins.len(text) + 1 if old == "" else text.count(old)
    if isinstance(count, builtins.int) and count >= 0:
        hits = min(hits, count)
    check_size(builtins.len(text) + hits * (builtins.len(new) - builtins.len(old)))


def _check_join(separator: str, items: list[Any]) -> None:
    size = builtins.len(separator) * max(builtins.len(items) - 1, 0)
    size += builtins.sum(builtins.len(item) for item in items if isinstance(item, str))
    check_size(size)
