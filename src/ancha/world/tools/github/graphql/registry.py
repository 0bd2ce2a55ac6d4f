"""The resolver map: which ``Type.field`` of GitHub's schema this replica answers, and how.

Every served field is registered here, either with a function (``@resolver``) or as a
plain attribute read (``plain``). The map is the single source of truth for coverage:
a field of a served type that is not in it answers ``NOT_IMPLEMENTED`` before anything
runs (``coverage.py``), so an unresolved field never comes back as a silent ``null``.

A resolver is called as ``fn(parent, info, **args)`` with graphql-core's coerced
arguments (camelCase names, as the schema spells them). ``args`` lists the arguments
it honours; any other argument given a non-null value is a coverage gap.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from graphql import GraphQLResolveInfo

Resolver = Callable[..., Any]


@dataclass(frozen=True, slots=True)
class FieldSpec:
    resolve: Resolver
    args: frozenset[str]
    """Arguments the resolver honours; the others must be absent or null."""


FIELDS: dict[str, FieldSpec] = {}


def resolver(key: str, *, args: Iterable[str] = ()) -> Callable[[Resolver], Resolver]:
    """Register ``fn`` for ``"Type.field"`` (several keys: ``"A.x B.x"``)."""

    def register(fn: Resolver) -> Resolver:
        for one in key.split():
            if one in FIELDS:
                raise ValueError(f"{one} is registered twice")
            FIELDS[one] = FieldSpec(fn, frozenset(args))
        return fn

    return register


def plain(type_names: str, **attributes: str | Callable[[Any], Any]) -> None:
    """Fields read straight off the parent: ``plain("Issue", title="title", createdAt=iso_of("created_at"))``.

    A value is an attribute name (dict key for dict parents) or a one-argument function.
    """
    for type_name in type_names.split():
        for field_name, source in attributes.items():
            read = source if callable(source) else _attribute(source)
            resolver(f"{type_name}.{field_name}")(_ignore_info(read))


def served_types() -> set[str]:
    """Types with at least one served field: the types this replica can return."""
    return {key.partition(".")[0] for key in FIELDS}


def _attribute(name: str) -> Callable[[Any], Any]:
    def read(parent: Any) -> Any:
        if isinstance(parent, dict):
            return parent.get(name)
        return getattr(parent, name, None)

    return read


def _ignore_info(read: Callable[[Any], Any]) -> Resolver:
    def resolve(parent: Any, info: GraphQLResolveInfo, **_: Any) -> Any:
        return read(parent)

    return resolve
