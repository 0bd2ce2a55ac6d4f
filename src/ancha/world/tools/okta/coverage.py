"""The coverage ledger: every Management API operation Okta has, and how far this replica serves it.

The ledger (``endpoints_ledger.py``) is derived, not copied: ``METHOD /template`` lines from
the vendor's ``endpoints.txt`` (checked against ``management-minimal.yaml``'s paths, whose
``operationId`` names each operation), and our status beside each: implemented, partial
(with what is missing), not_implemented. Regenerate after serving a new route:

    python -m ancha.world.tools.okta.coverage --regenerate

``--check`` exits 1 when the committed ledger differs from what would be generated.
The vendor folder is ``$ANCHA_VENDOR_DIR`` or ``../shared/vendor`` from the repository root.
"""

from __future__ import annotations

import re
from pathlib import Path

from ancha.world.tools.ledger import CoverageLedger, Extras, listed_operations
from ancha.world.tools.vendor import vendor_dir as vendor_folder


def vendor_dir() -> Path:
    """Okta's folder of vendor descriptions."""
    return vendor_folder("okta")


def vendor_endpoints(folder: Path | None = None) -> list[str]:
    """Okta's operations as ``METHOD /template``, sorted."""
    return listed_operations(folder or vendor_dir())


def vendor_operation_ids(folder: Path | None = None) -> dict[str, str]:
    """``METHOD /template`` -> operationId, read from the OpenAPI description's path items
    without parsing the whole 3 MB document (a line scan of ``paths:``)."""
    folder = folder or vendor_dir()
    ids: dict[str, str] = {}
    template = verb = None
    in_paths = False
    for line in (folder / "management-minimal.yaml").read_text().splitlines():
        if line.startswith("paths:"):
            in_paths = True
            continue
        if in_paths and line and not line.startswith(" "):
            break
        if not in_paths:
            continue
        if re.match(r"^  /", line):
            template, verb = line.strip().rstrip(":").strip("'\""), None
        elif re.match(r"^    (get|post|put|patch|delete):", line):
            verb = line.strip().rstrip(":")
        elif verb and template and line.startswith("      operationId:"):
            ids[f"{verb.upper()} {template}"] = line.split(":", 1)[1].strip()
    return ids


def served() -> dict[str, str]:
    """Served ``METHOD /template`` -> partial note ('' when complete)."""
    from ancha.world.tools.okta.router import registered
    from ancha.world.tools.okta.routes import load_all

    load_all()
    return {f"{r.method} {r.template}": r.partial for r in registered()}


COVERAGE = CoverageLedger(
    title="Okta Management API coverage ledger",
    module="ancha.world.tools.okta.coverage",
    path=Path(__file__).with_name("endpoints_ledger.py"),
    operations=vendor_endpoints,
    served=served,
    extras=Extras("OPERATION_IDS", vendor_operation_ids),
    listing="Okta's list",
    about=__doc__,
)
LEDGER_PATH = COVERAGE.path
extra_routes = COVERAGE.extra_routes
generate = COVERAGE.generate
main = COVERAGE.main


if __name__ == "__main__":
    raise SystemExit(main())
