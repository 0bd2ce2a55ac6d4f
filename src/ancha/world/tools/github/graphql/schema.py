"""GitHub's public GraphQL schema, built once per process from the packaged structure.

The schema ships with the product as ``github/vendor/graphql.json.gz`` (every type, field,
argument and directive of GitHub's SDL, no descriptions; ``compact.py`` says how). Building
from it makes the graphql-core types directly: about 45 ms in a new process, where parsing
the vendor's 1.2 MB SDL took 0.55 s. It still happens once per process, on first use or in
the background via ``warm()``, and every environment shares the result (a schema is
immutable; resolvers are passed at execution, not attached).
"""

from __future__ import annotations

import threading
import time

from graphql import GraphQLSchema

from ancha.world.kernel import vendor_data
from ancha.world.tools.github.graphql.compact import decode

_lock = threading.Lock()
_schema: GraphQLSchema | None = None
_build_seconds: float | None = None


class SchemaUnavailable(RuntimeError):
    """The packaged schema is missing or damaged: the replica cannot validate GraphQL queries."""


def build_schema() -> GraphQLSchema:
    """Build the schema from the packaged structure (uncached; ``schema()`` is the shared one)."""
    try:
        data = vendor_data.read("github", "graphql")
        return decode(data["schema"])
    except (vendor_data.VendorDataMissing, KeyError, ValueError, TypeError) as exc:
        raise SchemaUnavailable(f"GitHub's GraphQL schema could not be loaded: {exc}") from exc


def root_fields() -> list[tuple[str, str]]:
    """``(operation, field)`` for every root field GitHub lists (``query repository``, ...)."""
    pairs: list[tuple[str, str]] = []
    for line in vendor_data.read("github", "graphql")["root_fields"]:
        operation, _, name = line.partition(" ")
        if operation in ("query", "mutation") and name:
            pairs.append((operation, name))
    return pairs


def schema() -> GraphQLSchema:
    """The process-wide schema; the first caller builds it, concurrent callers wait."""
    global _schema, _build_seconds
    if _schema is not None:
        return _schema
    with _lock:
        if _schema is None:
            started = time.perf_counter()
            _schema = build_schema()
            _build_seconds = time.perf_counter() - started
    return _schema


def build_seconds() -> float | None:
    """How long the shared build took, once it has happened."""
    return _build_seconds


def warm() -> None:
    """Start building the shared schema in a background thread (no-op once built).

    A replica calls this when it is created, so the first ``POST /graphql`` of a
    trial finds the schema ready instead of paying for the build.
    """
    if _schema is not None:
        return

    def build() -> None:
        try:
            schema()
        except SchemaUnavailable:
            pass  # reported to the first GraphQL request instead

    threading.Thread(target=build, name="github-graphql-schema", daemon=True).start()
