"""A defence against keys crafted to share one hash value.

Building a set or dict of n distinct keys with equal hashes takes n²/2 comparisons.
String hashes are salted per process, but numbers and tuples hash predictably: every
multiple of 2**61 - 1 hashes to 0, so ``{i * (2**61 - 1) for i in range(100000)}``
would run for minutes. Before an expression builds a set or dict, its keys are grouped
by hash in linear time and the build is refused if any hash is shared by more than a
few distinct keys. Duplicates (many equal keys) are fine: they cost nothing extra.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from agentos.evals.errors import ExpressionError

MAX_SHARED_HASH = 8
"""Most distinct keys of one set or dict that may share a hash value."""


def check_key_spread(keys: list[Any]) -> None:
    """Refuse ``keys`` if more than :data:`MAX_SHARED_HASH` distinct ones share a hash."""
    if len(keys) <= MAX_SHARED_HASH:
        return
    counts = Counter(map(hash, keys))
    # Hash values are ints below 2**61 that hash to themselves, so this set is safe.
    crowded = {h for h, count in counts.items() if count > MAX_SHARED_HASH}
    if not crowded:
        return
    groups: dict[int, list[Any]] = {}
    for key in keys:
        if type(key) is not str:  # salted: equal string hashes mean equal strings
            h = hash(key)
            if h in crowded:
                groups.setdefault(h, []).append(key)
    for members in groups.values():
        _check_distinct(members)


def _check_distinct(members: list[Any]) -> None:
    # Each pass removes every copy of one value: linear per distinct value found.
    for _ in range(MAX_SHARED_HASH):
        if not members:
            return
        first = members[0]
        members = [m for m in members if not (m is first or m == first)]
    if members:
        raise ExpressionError(
            f"Too many distinct keys share one hash value (more than {MAX_SHARED_HASH}); "
            "a set or dict of them would take quadratic time"
        )
