"""The coverage ledger: every Management API operation Okta has, and how far this replica serves it.

The ledger (``coverage_ledger.py``) is derived, not copied: ``METHOD /template`` lines from
the vendor's ``endpoints.txt`` (checked against ``management-minimal.yaml``'s paths, whose
``operationId`` names each operation), and our status beside each: implemented, partial
(with what is missing), not_implemented. Regenerate after serving a new route:

    python -m ancha.world.tools.okta.coverage --regenerate

``--check`` exits 1 when the committed ledger differs from what would be generated.
Both come from the packaged ``vendor/rest.json.gz`` (``python -m ancha.vendor regenerate``).
"""

from __future__ import annotations

from ancha.world.kernel.ledger import CoverageLedger, Extras, operation_values, rest_operations, served_routes


def vendor_endpoints() -> list[str]:
    """Okta's operations as ``METHOD /template``, sorted."""
    return rest_operations("okta")


def vendor_operation_ids() -> dict[str, str]:
    """``METHOD /template`` -> operationId, from the OpenAPI description's paths."""
    return operation_values("okta", lambda operation: operation.get("operationId"))


def served() -> dict[str, str]:
    """Served ``METHOD /template`` -> partial note ('' when complete)."""
    from ancha.world.tools.okta.router import registered
    from ancha.world.tools.okta.routes import load_all

    load_all()
    return served_routes(registered())


COVERAGE = CoverageLedger.of_tool(__file__, title="Okta Management API coverage ledger", operations=vendor_endpoints,
                                  served=served, extras=Extras("OPERATION_IDS", vendor_operation_ids),
                                  listing="Okta's list", about=__doc__)

if __name__ == "__main__":
    raise SystemExit(COVERAGE.main())
