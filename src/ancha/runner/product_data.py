"""Whether this install's own data is intact: every packaged vendor file reads, and GitHub's
GraphQL schema builds from its file (``ancha doctor``'s ``data`` line)."""

from __future__ import annotations

import time
from dataclasses import dataclass

from ancha.world.kernel import vendor_data
from ancha.world.tools.github.graphql.schema import SchemaUnavailable, build_schema

REINSTALL = ("reinstall Ancha (`pip install --force-reinstall ancha`); in a checkout, "
             "`git checkout -- src/ancha/world/tools` restores the committed data")


@dataclass(frozen=True, slots=True)
class DataCheck:
    """``problem`` is None when every file read and the schema built."""

    files: int
    graphql_types: int
    seconds: float
    problem: str | None = None


def check_product_data() -> DataCheck:
    """Read every packaged vendor file afresh and build the GraphQL schema from its file."""
    started = time.perf_counter()
    for tool, name in vendor_data.PACKAGED:
        try:
            vendor_data.load(tool, name)  # afresh: a file damaged since it was first read counts
        except vendor_data.VendorDataMissing as exc:
            return DataCheck(0, 0, time.perf_counter() - started, str(exc))
    try:
        built = build_schema()
    except SchemaUnavailable as exc:
        return DataCheck(len(vendor_data.PACKAGED), 0, time.perf_counter() - started, str(exc))
    return DataCheck(len(vendor_data.PACKAGED), len(built.type_map), time.perf_counter() - started)
