"""The coverage ledger: every REST operation GitHub has, and how far this replica serves it.

The ledger (``coverage_ledger.py``) is derived, not copied: ``METHOD /template`` lines from
the vendor's ``endpoints.txt``, each operation's documentation URL from the vendor's
OpenAPI description (``externalDocs``; error bodies cite it, as GitHub's do), and our
status beside each: implemented, partial (with what is missing), not_implemented.
Regenerate after serving a new route:

    python -m ancha.world.tools.github.coverage --regenerate

``--check`` exits 1 when the committed ledger differs from what would be generated.
The vendor's list and URLs are the packaged ``vendor/rest.json.gz`` (``python -m ancha.vendor
regenerate`` rebuilds it, and this ledger, from the vendor's descriptions).
"""

from __future__ import annotations

from ancha.world.kernel.ledger import CoverageLedger, Extras, operation_values, rest_operations, served_routes


def vendor_endpoints() -> list[str]:
    """GitHub's operations as ``METHOD /template``, sorted."""
    return rest_operations("github")


def vendor_docs() -> dict[str, str]:
    """``METHOD /template`` -> the operation's documentation URL."""
    return operation_values("github", lambda operation: operation.get("externalDocs", {}).get("url"))


def served() -> dict[str, str]:
    """Served ``METHOD /template`` -> partial note ('' when complete)."""
    from ancha.world.tools.github.router import registered
    from ancha.world.tools.github.routes import load_all

    load_all()
    return served_routes(registered())


COVERAGE = CoverageLedger.of_tool(__file__, title="GitHub REST coverage ledger", operations=vendor_endpoints,
                                  served=served, extras=Extras("DOCS", vendor_docs), listing="GitHub's REST list",
                                  about=__doc__)

if __name__ == "__main__":
    raise SystemExit(COVERAGE.main())
