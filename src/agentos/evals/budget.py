"""Limits that keep one expression evaluation small, and the budget that enforces them.

Every evaluation gets a fresh :class:`Budget`. Operations charge it roughly in bytes
touched or allocated, so time and memory stay bounded together: a comprehension
iteration, a scan over a string, a list built from an iterable, a new string. Single
results are also capped in size *before* they are built, so one operation can never
allocate more than :data:`MAX_SIZE` items.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sized
from itertools import islice
from typing import Any, NoReturn

from agentos.evals.errors import ExpressionError
from agentos.evals.hashing import check_key_spread

MAX_SOURCE = 10_000
"""Longest expression source, in characters."""
MAX_DEPTH = 100
"""Deepest expression tree accepted."""
MAX_SIZE = 1_000_000
"""Most characters or items any single value built by an expression may have."""
MAX_RANGE = 100_000
"""Most items a ``range()`` may have."""
MAX_INT_BITS = 10_000
"""Largest integer (in bits) arithmetic may produce; about 3,000 decimal digits."""
MAX_COST = 25_000_000
"""Budget units (about bytes touched or allocated) one evaluation may spend."""
ITERATION_COST = 250
"""Charge for one comprehension iteration: at most 100,000 iterations per evaluation."""
ITEM_COST = 100
"""Charge for each item an operation walks over or creates (a new tuple and int is about 100 bytes)."""
MAX_SCORING_COST = 4 * MAX_COST
"""Budget units all the checks of one run may spend together: four expressions at their limit.
Checks past it fail with a detail saying so (50 near-limit expressions took 25 s without it)."""

_EXPRESSION_EXHAUSTED = "Expression exceeded its evaluation budget (too much work or memory)"
_SCORING_EXHAUSTED = (
    f"the run's scoring budget ({MAX_SCORING_COST:,} units, shared by all its checks) ran out during this check"
)

_CONTAINERS = (list, tuple, set, frozenset, dict)
_SCALARS = frozenset({int, float, bool, type(None)})


class Budget:
    """The units one evaluation may still spend; not shared between evaluations.

    `limit` is :data:`MAX_COST`, or less when the run's scoring budget has less left;
    `exhausted` is the message raised past it.
    """

    __slots__ = ("used", "limit", "exhausted")

    def __init__(self, limit: int = MAX_COST, exhausted: str = _EXPRESSION_EXHAUSTED) -> None:
        self.used = 0
        self.limit = limit
        self.exhausted = exhausted

    def charge(self, units: int) -> None:
        self.used += units
        if self.used > self.limit:
            self.exceeded()

    def exceeded(self) -> NoReturn:
        raise ExpressionError(self.exhausted)

    def charge_value(self, value: Any) -> Any:
        """Charge for a freshly built value by its size in memory, and refuse it when it has more
        than :data:`MAX_SIZE` items or characters (some operations grow their input: ``'ﬃ'.upper()``
        is three characters); returns it."""
        self.charge(sys.getsizeof(value))
        if isinstance(value, Sized) and not isinstance(value, bytes | bytearray) and len(value) > MAX_SIZE:
            check_size(len(value))
        return value

    def charge_scan(self, value: Any) -> None:
        """Charge for comparing or searching ``value``, nested items included."""
        t = type(value)
        if t is str:
            self.charge(len(value))
        elif t in _CONTAINERS or isinstance(value, _CONTAINERS):
            self._charge_walk(value)

    def _charge_walk(self, value: Any) -> None:
        # Iterative, and charged before expanding, so shared references
        # ([[s] * 1000] * 1000) cannot make the walk itself expensive.
        room = self.limit - self.used
        total = 0
        stack = [value]
        pop, extend = stack.pop, stack.extend
        while stack:
            item = pop()
            t = type(item)
            if t in _SCALARS:
                continue
            if t is str or isinstance(item, str):
                total += len(item)
            elif t is dict or isinstance(item, dict):
                total += ITEM_COST * len(item)
                if total > room:
                    break
                extend(item.keys())
                extend(item.values())
            elif t in _CONTAINERS or isinstance(item, _CONTAINERS):
                total += ITEM_COST * len(item)
                if total > room:
                    break
                extend(item)
            if total > room:
                break
        self.charge(total)

    def consume(self, iterable: Any) -> Iterable[Any]:
        """Charge for drawing every item of ``iterable``; returns something safe to iterate again.

        Sized values are charged by their length. Lazy iterables (generators, ``zip``,
        ``enumerate``, dict views) are drawn into a list, never more items than the
        budget still pays for.
        """
        if isinstance(iterable, Sized):  # containers, ranges, dict views
            self.charge(ITEM_COST * len(iterable))
            return iterable  # type: ignore[no-any-return,return-value]
        room = (self.limit - self.used) // ITEM_COST
        items = list(islice(iterable, room + 1))
        self.charge(ITEM_COST * len(items))
        return items

    def charge_sized(self, value: Any) -> None:
        """Charge for iterating ``value`` once, if it has a length (lazy iterables charge themselves)."""
        if isinstance(value, Sized):
            self.charge(ITEM_COST * len(value))

    def charge_keys(self, keys: list[Any]) -> list[Any]:
        """Charge for hashing ``keys`` into a set or dict, and refuse crafted collisions."""
        tuples = [key for key in keys if type(key) is tuple]
        if tuples:  # tuples do not cache their hash: each hash walks them
            self._charge_walk(tuples)
        check_key_spread(keys)
        return keys


class ScoringBudget:
    """What all the checks of one run may still spend (:data:`MAX_SCORING_COST`)."""

    __slots__ = ("left",)

    def __init__(self, total: int = MAX_SCORING_COST) -> None:
        self.left = total

    @property
    def spent(self) -> bool:
        return self.left <= 0

    def for_expression(self) -> Budget:
        """The budget of the next expression: its own limit, or what the run has left if less."""
        if self.left >= MAX_COST:
            return Budget()
        return Budget(max(self.left, 0), _SCORING_EXHAUSTED)

    def spend(self, units: int) -> None:
        self.left -= units

    def refusal(self) -> str:
        """The detail of a check not evaluated because the budget is spent."""
        return (
            f"not evaluated: the run's scoring budget ({MAX_SCORING_COST:,} units, shared by all its checks) "
            "was spent by earlier checks; make the expensive expression checks cheaper or fewer"
        )


def check_size(size: int, what: str = "Result") -> None:
    """Refuse to build a value with more than :data:`MAX_SIZE` items or characters."""
    if size > MAX_SIZE:
        raise ExpressionError(f"{what} too large (more than {MAX_SIZE:,} items or characters)")


def check_int_bits(bits: int) -> None:
    if bits > MAX_INT_BITS:
        raise ExpressionError(f"Number too large (more than {MAX_INT_BITS:,} bits)")


def text_size_estimate(value: Any, limit: int = MAX_SIZE) -> int:
    """An estimate of ``len(str(value))``, walking containers; stops once past ``limit``."""
    total = 0
    stack = [value]
    while stack and total <= limit:
        item = stack.pop()
        t = type(item)
        if t is str:
            total += len(item) + 2
        elif t is dict:
            total += 2 + 4 * len(item)
            if total <= limit:
                stack.extend(item.keys())
                stack.extend(item.values())
        elif t in _CONTAINERS:
            total += 2 + 2 * len(item)
            if total <= limit:
                stack.extend(item)
        elif t is int:
            total += item.bit_length() // 3 + 2
        else:
            total += 24
    return total
