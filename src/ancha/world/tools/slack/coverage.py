"""The coverage ledger: every Web API method Slack has, and how far this replica serves it.

The ledger (``methods_ledger.py``) is derived, not copied: method names from the
vendor's lists (``web_api_rate_limit_tiers.json`` keys, the current 326-method
universe, and ``endpoints.txt``) with our status beside each. Regenerate it after
serving a new method:

    python -m ancha.world.tools.slack.coverage --regenerate

``--check`` exits 1 when the committed ledger differs from what would be generated.
The vendor folder is ``$ANCHA_VENDOR_DIR`` or ``../shared/vendor`` from the repository root.
"""

from __future__ import annotations

import json
from pathlib import Path

from ancha.world.tools.ledger import CoverageLedger
from ancha.world.tools.slack.routes import APP_LEVEL, PARTIAL, ROUTES, UNAUTHENTICATED
from ancha.world.tools.vendor import vendor_dir as vendor_folder


def vendor_dir() -> Path:
    """Slack's folder of vendor descriptions."""
    return vendor_folder("slack")


def vendor_methods(folder: Path | None = None) -> set[str]:
    """Slack's method names: the SDK's rate-limit tiers (current) plus the OpenAPI list."""
    folder = folder or vendor_dir()
    tiers = json.loads((folder / "web_api_rate_limit_tiers.json").read_text())
    listed = (folder / "endpoints.txt").read_text().split()
    return set(tiers) | {line.strip() for line in listed if line.strip()}


def served_methods() -> set[str]:
    """The methods this replica answers, with or without a token."""
    return set(ROUTES) | UNAUTHENTICATED | APP_LEVEL


def _served() -> dict[str, str]:
    # Slack keeps its partial notes apart from the routes; a note makes a method partial.
    return {**dict.fromkeys(served_methods(), ""), **PARTIAL}


COVERAGE = CoverageLedger(
    title="Slack Web API coverage ledger",
    module="ancha.world.tools.slack.coverage",
    path=Path(__file__).with_name("methods_ledger.py"),
    operations=vendor_methods,
    served=_served,
    noun="methods",
    about=__doc__,
)
LEDGER_PATH = COVERAGE.path
build_ledger = COVERAGE.build_ledger
render = COVERAGE.render
main = COVERAGE.main


if __name__ == "__main__":
    raise SystemExit(main())
