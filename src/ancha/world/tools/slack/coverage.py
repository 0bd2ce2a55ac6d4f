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

import argparse
import json
import sys
from pathlib import Path

from ancha.world.tools.slack.routes import PARTIAL, ROUTES, UNAUTHENTICATED
from ancha.world.tools.vendor import vendor_dir as vendor_folder

LEDGER_PATH = Path(__file__).with_name("methods_ledger.py")

IMPLEMENTED = "implemented"
PARTIAL_STATUS = "partial"
NOT_IMPLEMENTED = "not_implemented"


def vendor_dir() -> Path:
    return vendor_folder("slack")


def vendor_methods(folder: Path | None = None) -> set[str]:
    """Slack's method names: the SDK's rate-limit tiers (current) plus the OpenAPI list."""
    folder = folder or vendor_dir()
    tiers = json.loads((folder / "web_api_rate_limit_tiers.json").read_text())
    listed = (folder / "endpoints.txt").read_text().split()
    return set(tiers) | {line.strip() for line in listed if line.strip()}


def served_methods() -> set[str]:
    return set(ROUTES) | UNAUTHENTICATED


def build_ledger(methods: set[str]) -> dict[str, tuple[str, str]]:
    served = served_methods()
    ledger: dict[str, tuple[str, str]] = {}
    for method in sorted(methods):
        if method in PARTIAL:
            ledger[method] = (PARTIAL_STATUS, PARTIAL[method])
        elif method in served:
            ledger[method] = (IMPLEMENTED, "")
        else:
            ledger[method] = (NOT_IMPLEMENTED, "")
    return ledger


def render(ledger: dict[str, tuple[str, str]]) -> str:
    counts = {s: sum(1 for v in ledger.values() if v[0] == s) for s in (IMPLEMENTED, PARTIAL_STATUS, NOT_IMPLEMENTED)}
    lines = [
        '"""Slack Web API coverage ledger. Generated; do not edit.',
        "",
        "Regenerate with: python -m ancha.world.tools.slack.coverage --regenerate",
        f"{len(ledger)} methods: {counts[IMPLEMENTED]} implemented, {counts[PARTIAL_STATUS]} partial, "
        f"{counts[NOT_IMPLEMENTED]} not implemented.",
        '"""',
        "",
        "LEDGER: dict[str, tuple[str, str]] = {",
    ]
    lines += [f"    {method!r}: ({status!r}, {note!r})," for method, (status, note) in ledger.items()]
    lines.append("}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--regenerate", action="store_true", help="rewrite methods_ledger.py")
    parser.add_argument("--check", action="store_true", help="exit 1 if methods_ledger.py is stale")
    args = parser.parse_args(argv)
    text = render(build_ledger(vendor_methods()))
    if args.regenerate:
        LEDGER_PATH.write_text(text)
        print(f"wrote {LEDGER_PATH}")
        return 0
    if args.check:
        stale = LEDGER_PATH.read_text() != text
        print("methods_ledger.py is stale: run --regenerate" if stale else "methods_ledger.py is current")
        return 1 if stale else 0
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
