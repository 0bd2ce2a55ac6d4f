"""The coverage ledger: every Web API method Slack has, and how far this replica serves it.

The ledger (``coverage_ledger.py``) is derived, not copied: method names from the
vendor's lists (``web_api_rate_limit_tiers.json`` keys, the current 326-method
universe, and ``endpoints.txt``) with our status beside each. Regenerate it after
serving a new method:

    python -m ancha.world.tools.slack.coverage --regenerate

``--check`` exits 1 when the committed ledger differs from what would be generated.
Both lists come from the packaged ``vendor/`` data (``python -m ancha.vendor regenerate``).
"""

from __future__ import annotations

from ancha.world.kernel import vendor_data
from ancha.world.kernel.ledger import CoverageLedger
from ancha.world.tools.slack.router import APP_LEVEL, PARTIAL, ROUTES, UNAUTHENTICATED


def vendor_methods() -> set[str]:
    """Slack's method names: the SDK's rate-limit tiers (current) plus the OpenAPI list."""
    tiers = vendor_data.read("slack", "rate_tiers")["tiers"]
    listed = vendor_data.read("slack", "web_api")["methods"]
    return set(tiers) | set(listed)


def served_methods() -> set[str]:
    """The methods this replica answers, with or without a token."""
    return set(ROUTES) | UNAUTHENTICATED | APP_LEVEL


def _served() -> dict[str, str]:
    # Slack keeps its partial notes apart from the routes; a note makes a method partial.
    return {**dict.fromkeys(served_methods(), ""), **PARTIAL}


COVERAGE = CoverageLedger.of_tool(__file__, title="Slack Web API coverage ledger", operations=vendor_methods,
                                  served=_served, noun="methods", about=__doc__)

if __name__ == "__main__":
    raise SystemExit(COVERAGE.main())
