"""The GraphQL coverage ledger: every root field GitHub has, and how far this replica serves it.

Derived at run time, never stored: the vendor's root-field list (packaged with the
schema: ``query repository``, ``mutation createIssue``, ...) against
the resolver map. A root field is ``implemented`` when served with all its arguments,
``partial`` (naming the arguments left out) when some are not honoured, and
``not_implemented`` otherwise. Below the roots, ``type_coverage`` counts served fields
per object type. Print both with::

    python -m ancha.world.tools.github.graphql.ledger
"""

from __future__ import annotations

import sys

from ancha.world.tools.github.graphql import resolvers  # noqa: F401  (registers the resolver map)
from ancha.world.tools.github.graphql.registry import FIELDS
from ancha.world.tools.github.graphql.schema import root_fields, schema

IMPLEMENTED = "implemented"
PARTIAL = "partial"
NOT_IMPLEMENTED = "not_implemented"
_ROOTS = {"query": "Query", "mutation": "Mutation"}


def ledger() -> dict[str, tuple[str, str]]:
    """``"query repository"`` -> (status, note) for every root field GitHub has."""
    built = schema()
    out: dict[str, tuple[str, str]] = {}
    for operation, name in root_fields():
        type_name = _ROOTS[operation]
        spec = FIELDS.get(f"{type_name}.{name}")
        if spec is None:
            out[f"{operation} {name}"] = (NOT_IMPLEMENTED, "")
            continue
        owner = built.get_type(type_name)
        declared = set(owner.fields[name].args) if owner is not None and hasattr(owner, "fields") else set()
        missing = sorted(declared - spec.args)
        out[f"{operation} {name}"] = (PARTIAL, "arguments not honoured: " + ", ".join(missing)) if missing \
            else (IMPLEMENTED, "")
    return out


def type_coverage() -> dict[str, tuple[int, int]]:
    """Served object type -> (fields served, fields GitHub has)."""
    built = schema()
    counts: dict[str, tuple[int, int]] = {}
    for key in FIELDS:
        type_name = key.partition(".")[0]
        owner = built.get_type(type_name)
        total = len(owner.fields) if owner is not None and hasattr(owner, "fields") else 0
        served, _ = counts.get(type_name, (0, total))
        counts[type_name] = (served + 1, total)
    return dict(sorted(counts.items()))


def main() -> int:
    entries = ledger()
    for key, (status, note) in entries.items():
        if status != NOT_IMPLEMENTED:
            print(f"{status:16} {key}" + (f"  ({note})" if note else ""))
    totals = {s: sum(1 for v in entries.values() if v[0] == s) for s in (IMPLEMENTED, PARTIAL, NOT_IMPLEMENTED)}
    print(f"\n{len(entries)} root fields: {totals[IMPLEMENTED]} implemented, {totals[PARTIAL]} partial, "
          f"{totals[NOT_IMPLEMENTED]} not implemented\n")
    for type_name, (served, total) in type_coverage().items():
        print(f"{type_name:40} {served:3}/{total}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
