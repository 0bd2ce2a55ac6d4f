"""Arithmetic and comparison operators, bounded so hostile operands cannot explode.

Each function takes the evaluation's :class:`Budget` first. Sequence repetition and
concatenation are size-checked before they allocate, integer results are capped in
bits before they are computed, and ``%`` on strings (printf formatting) is refused.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Mapping
from collections.abc import Set as AbstractSet
from typing import Any

from agentos.evals.budget import MAX_INT_BITS, Budget, check_int_bits, check_size
from agentos.evals.errors import ExpressionError

_SEQUENCES = (str, list, tuple)


def _is_int(value: Any) -> bool:
    return isinstance(value, int)


def add(b: Budget, x: Any, y: Any) -> Any:
    if isinstance(x, _SEQUENCES) and isinstance(y, _SEQUENCES):
        check_size(len(x) + len(y))
        return b.charge_value(operator.add(x, y))
    return x + y


def sub(b: Budget, x: Any, y: Any) -> Any:
    if isinstance(x, AbstractSet) and isinstance(y, AbstractSet):
        b.charge_keys([*x, *y])
        return b.charge_value(x - y)
    return x - y


def mul(b: Budget, x: Any, y: Any) -> Any:
    if isinstance(x, _SEQUENCES) and _is_int(y):
        check_size(len(x) * max(y, 0))
        return b.charge_value(x * y)
    if _is_int(x) and isinstance(y, _SEQUENCES):
        check_size(len(y) * max(x, 0))
        return b.charge_value(x * y)
    if _is_int(x) and _is_int(y):
        check_int_bits(x.bit_length() + y.bit_length())
    return x * y


def truediv(b: Budget, x: Any, y: Any) -> Any:
    return x / y


def floordiv(b: Budget, x: Any, y: Any) -> Any:
    return x // y


def mod(b: Budget, x: Any, y: Any) -> Any:
    if isinstance(x, str | bytes):
        raise ExpressionError("String formatting with '%' is not allowed")
    return x % y


def power(b: Budget, x: Any, y: Any) -> Any:
    if _is_int(x) and _is_int(y) and y > 0 and abs(x) > 1:
        # Check the size of the result before computing it: 4000000 ** 4000000
        # would otherwise run for minutes and take gigabytes.
        check_int_bits(y if y > MAX_INT_BITS else int(y * math.log2(abs(x))))
    return x**y


def lshift(b: Budget, x: Any, y: Any) -> Any:
    if _is_int(x) and _is_int(y) and x and y > 0:
        check_int_bits(x.bit_length() + y)
    return x << y


def rshift(b: Budget, x: Any, y: Any) -> Any:
    return x >> y


def _collection_op(op: Callable[[Any, Any], Any]) -> Callable[[Budget, Any, Any], Any]:
    def apply(b: Budget, x: Any, y: Any) -> Any:
        if isinstance(x, AbstractSet | Mapping) and isinstance(y, AbstractSet | Mapping):
            check_size(len(x) + len(y))
            b.charge_keys([*x, *y])
            return b.charge_value(op(x, y))
        return op(x, y)

    return apply


bit_or = _collection_op(operator.or_)
bit_and = _collection_op(operator.and_)
bit_xor = _collection_op(operator.xor)


_PLAIN = frozenset({int, float, bool, type(None)})


def _compared(op: Callable[[Any, Any], Any]) -> Callable[[Budget, Any, Any], Any]:
    """Comparisons of strings and containers cost their length; charge it first."""

    def apply(b: Budget, x: Any, y: Any) -> Any:
        tx, ty = type(x), type(y)
        if tx in _PLAIN and ty in _PLAIN:
            return op(x, y)
        if tx is str and ty is str:
            b.charge(min(len(x), len(y)))
        else:
            b.charge_scan(x)
            b.charge_scan(y)
        return op(x, y)

    return apply


eq = _compared(operator.eq)
ne = _compared(operator.ne)
lt = _compared(operator.lt)
le = _compared(operator.le)
gt = _compared(operator.gt)
ge = _compared(operator.ge)


def contains(b: Budget, x: Any, y: Any) -> bool:
    """``x in y``."""
    if type(y) is str:
        b.charge(len(y))
    elif isinstance(y, dict | set | frozenset):
        b.charge_scan(x)
    else:
        b.charge_scan(y)
        b.charge_scan(x)
    return x in y


def not_contains(b: Budget, x: Any, y: Any) -> bool:
    return not contains(b, x, y)


def is_(b: Budget, x: Any, y: Any) -> bool:
    return x is y


def is_not(b: Budget, x: Any, y: Any) -> bool:
    return x is not y
