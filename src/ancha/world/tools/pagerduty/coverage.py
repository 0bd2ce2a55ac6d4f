"""The coverage ledger: every operation PagerDuty has, and how far this replica serves it.

The ledger (``coverage_ledger.py``) is derived, not copied: ``METHOD /template`` lines from
the vendor's ``endpoints.txt`` (REST API v2 and the Events API v2's ``/v2/...`` paths),
each operation's ``operationId`` from the vendor's OpenAPI descriptions, and our status
beside each: implemented, partial (with what is missing), not_implemented. Both come from the
packaged ``vendor/rest.json.gz`` (``python -m ancha.vendor regenerate``). Regenerate after
serving a new route:

    python -m ancha.world.tools.pagerduty.coverage --regenerate

``--check`` exits 1 when the committed ledger differs from what would be generated.
"""

from __future__ import annotations

from ancha.world.kernel.ledger import CoverageLedger, Extras, operation_values, rest_operations, served_routes

EVENTS = {"POST /v2/enqueue": "", "POST /v2/change/enqueue": "change events are accepted, not stored"}
"""Served by ``events_api.py`` (outside the REST router)."""


def vendor_endpoints() -> list[str]:
    """PagerDuty's operations as ``METHOD /template``, sorted."""
    return rest_operations("pagerduty")


def vendor_operation_ids() -> dict[str, str]:
    """``METHOD /template`` -> the operation's ``operationId`` (REST and Events API descriptions)."""
    return operation_values("pagerduty", lambda operation: operation.get("operationId"),
                            (("openapi", ""), ("events_v2", "/v2")))


def served() -> dict[str, str]:
    """Served ``METHOD /template`` -> partial note ('' when complete), Events API included."""
    from ancha.world.tools.pagerduty.routes import load_all

    return {**served_routes(load_all()), **EVENTS}


COVERAGE = CoverageLedger.of_tool(__file__, title="PagerDuty coverage ledger (REST API v2 and Events API v2)",
                                  operations=vendor_endpoints, served=served,
                                  extras=Extras("OPERATION_IDS", vendor_operation_ids), listing="PagerDuty's list",
                                  about=__doc__)

if __name__ == "__main__":
    raise SystemExit(COVERAGE.main())
