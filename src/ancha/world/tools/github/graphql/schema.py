"""GitHub's public GraphQL schema, built once per process from the vendor's SDL.

The SDL (``schema.graphql``, ~1.2 MB) is read at run time from ``$ANCHA_VENDOR_DIR``
or ``../shared/vendor`` beside the repository root; it is never copied into the
project. Parsing and building it takes 0.55 s on a quiet machine (parse 0.4 s, build
0.16 s; about 1 s under load), so it happens once per process, on first use or in the
background via ``warm()``, and every environment shares the result (a schema is
immutable; resolvers are passed at execution, not attached).

A serialized cache was measured and rejected: unpickling the built schema takes as long
as building it (0.86 s vs 0.92 s, same machine and load), and unpickling the AST then
building is slower still.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from graphql import GraphQLSchema, build_ast_schema, parse

from ancha.world.tools.vendor import vendor_dir

_lock = threading.Lock()
_schema: GraphQLSchema | None = None
_build_seconds: float | None = None


class SchemaUnavailable(RuntimeError):
    """The vendor SDL is missing: the replica cannot validate GraphQL queries."""


def sdl_path() -> Path:
    """Where GitHub's SDL lives: ``$ANCHA_VENDOR_DIR[/github]/schema.graphql``."""
    return vendor_dir("github") / "schema.graphql"


def build_schema(path: Path | None = None) -> GraphQLSchema:
    """Build a schema from an SDL file (uncached; ``schema()`` is the shared one)."""
    path = path or sdl_path()
    try:
        source = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SchemaUnavailable(f"GitHub GraphQL schema not found at {path}: {exc}") from exc
    built = build_ast_schema(parse(source, no_location=True), assume_valid_sdl=True)
    # GitHub's own schema breaks a strict spec rule (deprecated implementations of
    # undeprecated interface fields); graphql-core would refuse every query over it.
    # Mark it as already validated with no errors, as GitHub's server treats it.
    built._validation_errors = []
    return built


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
