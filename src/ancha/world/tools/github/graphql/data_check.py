"""``ancha doctor``'s check of GitHub's packaged GraphQL data: the schema builds from its file."""

from __future__ import annotations

from ancha.world.kernel.vendor_data import VendorDataMissing
from ancha.world.tools.github.graphql.schema import SchemaUnavailable, build_schema


def schema_builds() -> str:
    """Build the schema afresh and say so, with its size, as doctor's ``data`` line reads; a
    schema that cannot be built raises ``VendorDataMissing`` with why."""
    try:
        built = build_schema()
    except SchemaUnavailable as exc:
        raise VendorDataMissing(str(exc)) from exc
    return f"GitHub's GraphQL schema builds ({len(built.type_map):,} types)"
