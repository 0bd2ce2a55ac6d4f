"""The coverage ledger: every HTTP operation Datadog publishes (v1 and v2), and how far this
replica serves it.

The ledger (``coverage_ledger.py``) is derived, not copied: ``METHOD /template`` lines of
the vendor's ``endpoints.txt`` (built from its v1 and v2 OpenAPI descriptions), each with
our status: implemented, partial (with what is missing), not_implemented. Regenerate
after serving a new route:

    python -m ancha.world.tools.datadog.coverage --regenerate

``--check`` exits 1 when the committed ledger differs from what would be generated.
"""

from __future__ import annotations

from ancha.world.kernel.ledger import CoverageLedger, rest_operations, served_routes


def vendor_endpoints() -> list[str]:
    """Datadog's operations (v1 and v2) as ``METHOD /template``, sorted."""
    return rest_operations("datadog")


def served() -> dict[str, str]:
    """Served ``METHOD /template`` -> partial note ('' when complete); the world's own
    ``/ancha/`` routes are not Datadog's and stay out."""
    from ancha.world.tools.datadog.router import registered
    from ancha.world.tools.datadog.routes import load_all

    load_all()
    return served_routes(registered(), skip=lambda template: template.startswith("/ancha/"))


COVERAGE = CoverageLedger.of_tool(__file__, title="Datadog API coverage ledger", operations=vendor_endpoints,
                                  served=served, listing="Datadog's list", about=__doc__)

if __name__ == "__main__":
    raise SystemExit(COVERAGE.main())
