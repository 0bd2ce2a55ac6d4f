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

import argparse
import re
import sys
from pathlib import Path

from ancha.world.tools.vendor import vendor_dir as vendor_folder

LEDGER_PATH = Path(__file__).with_name("endpoints_ledger.py")
IMPLEMENTED = "implemented"
PARTIAL = "partial"
NOT_IMPLEMENTED = "not_implemented"
_VERBS = ("get", "post", "put", "patch", "delete")


def vendor_dir() -> Path:
    return vendor_folder("okta")


def vendor_endpoints(folder: Path | None = None) -> list[str]:
    """Okta's operations as ``METHOD /template``, sorted."""
    folder = folder or vendor_dir()
    lines = (folder / "endpoints.txt").read_text().splitlines()
    return sorted({line.strip() for line in lines if line.strip()})


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


def build_ledger(endpoints: list[str]) -> dict[str, tuple[str, str]]:
    routes = served()
    ledger: dict[str, tuple[str, str]] = {}
    for key in endpoints:
        if key not in routes:
            ledger[key] = (NOT_IMPLEMENTED, "")
        elif routes[key]:
            ledger[key] = (PARTIAL, routes[key])
        else:
            ledger[key] = (IMPLEMENTED, "")
    return ledger


def extra_routes(endpoints: list[str]) -> list[str]:
    """Served routes Okta's list lacks (a typo in a template shows up here)."""
    known = set(endpoints)
    return sorted(key for key in served() if key not in known)


def render(ledger: dict[str, tuple[str, str]], operation_ids: dict[str, str]) -> str:
    counts = {s: sum(1 for v in ledger.values() if v[0] == s) for s in (IMPLEMENTED, PARTIAL, NOT_IMPLEMENTED)}
    lines = [
        '"""Okta Management API coverage ledger. Generated; do not edit.',
        "",
        "Regenerate with: python -m ancha.world.tools.okta.coverage --regenerate",
        f"{len(ledger)} operations: {counts[IMPLEMENTED]} implemented, {counts[PARTIAL]} partial, "
        f"{counts[NOT_IMPLEMENTED]} not implemented.",
        '"""',
        "",
        "LEDGER: dict[str, tuple[str, str]] = {",
    ]
    lines += [f"    {key!r}: ({status!r}, {note!r})," for key, (status, note) in ledger.items()]
    lines += ["}", "", "OPERATION_IDS: dict[str, str] = {"]
    lines += [f"    {key!r}: {operation_ids[key]!r}," for key in ledger if key in operation_ids]
    lines.append("}")
    return "\n".join(lines) + "\n"


def generate() -> str:
    return render(build_ledger(vendor_endpoints()), vendor_operation_ids())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--regenerate", action="store_true", help="rewrite endpoints_ledger.py")
    parser.add_argument("--check", action="store_true", help="exit 1 if endpoints_ledger.py is stale")
    args = parser.parse_args(argv)
    text = generate()
    extra = extra_routes(vendor_endpoints())
    if extra:
        print("served routes Okta's list does not have: " + ", ".join(extra), file=sys.stderr)
    if args.regenerate:
        LEDGER_PATH.write_text(text)
        print(f"wrote {LEDGER_PATH}")
        return 0
    if args.check:
        stale = LEDGER_PATH.read_text() != text
        print("endpoints_ledger.py is stale: run --regenerate" if stale else "endpoints_ledger.py is current")
        return 1 if stale else 0
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
