"""The coverage ledger: every HTTP operation Datadog publishes (v1 and v2), and how far this
replica serves it.

The ledger (``endpoints_ledger.py``) is derived, not copied: ``METHOD /template`` lines of
the vendor's ``endpoints.txt`` (built from its v1 and v2 OpenAPI descriptions), each with
our status: implemented, partial (with what is missing), not_implemented. Regenerate
after serving a new route:

    python -m ancha.world.tools.datadog.coverage --regenerate

``--check`` exits 1 when the committed ledger differs from what would be generated.
"""

from __future__ import annotations

from pathlib import Path

from ancha.world.kernel import vendor_data
from ancha.world.kernel.ledger import CoverageLedger, listed_operations


def vendor_endpoints() -> list[str]:
    """Datadog's operations (v1 and v2) as ``METHOD /template``, sorted."""
    return listed_operations(vendor_data.read("datadog", "rest")["endpoints"])


def served() -> dict[str, str]:
    """Served ``METHOD /template`` -> partial note ('' when complete); the world's own
    ``/ancha/`` routes are not Datadog's and stay out."""
    from ancha.world.tools.datadog.router import registered
    from ancha.world.tools.datadog.routes import load_all

    load_all()
    return {f"{r.method} {r.template}": r.partial for r in registered() if not r.template.startswith("/ancha/")}


COVERAGE = CoverageLedger(
    title="Datadog API coverage ledger",
    module="ancha.world.tools.datadog.coverage",
    path=Path(__file__).with_name("endpoints_ledger.py"),
    operations=vendor_endpoints,
    served=served,
    listing="Datadog's list",
    about=__doc__,
)
LEDGER_PATH = COVERAGE.path
extra_routes = COVERAGE.extra_routes
generate = COVERAGE.generate
main = COVERAGE.main


if __name__ == "__main__":
    raise SystemExit(main())
