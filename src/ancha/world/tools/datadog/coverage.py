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

import argparse
import sys
from pathlib import Path

from ancha.world.tools.vendor import vendor_dir as vendor_folder

LEDGER_PATH = Path(__file__).with_name("endpoints_ledger.py")

IMPLEMENTED = "implemented"
PARTIAL = "partial"
NOT_IMPLEMENTED = "not_implemented"


def vendor_dir() -> Path:
    return vendor_folder("datadog")


def vendor_endpoints(folder: Path | None = None) -> list[str]:
    """Datadog's operations as ``METHOD /template``, sorted."""
    folder = folder or vendor_dir()
    lines = (folder / "endpoints.txt").read_text().splitlines()
    return sorted({line.strip() for line in lines if line.strip()})


def served() -> dict[str, str]:
    """Served ``METHOD /template`` -> partial note ('' when complete); the world's own
    ``/ancha/`` routes are not Datadog's and stay out."""
    from ancha.world.tools.datadog.router import registered
    from ancha.world.tools.datadog.routes import load_all

    load_all()
    return {f"{r.method} {r.template}": r.partial for r in registered() if not r.template.startswith("/ancha/")}


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
    """Served routes Datadog's list lacks (a typo in a template shows up here)."""
    known = set(endpoints)
    return sorted(key for key in served() if key not in known)


def counts(ledger: dict[str, tuple[str, str]]) -> dict[str, int]:
    return {s: sum(1 for v in ledger.values() if v[0] == s) for s in (IMPLEMENTED, PARTIAL, NOT_IMPLEMENTED)}


def render(ledger: dict[str, tuple[str, str]]) -> str:
    n = counts(ledger)
    lines = [
        '"""Datadog API coverage ledger. Generated; do not edit.',
        "",
        "Regenerate with: python -m ancha.world.tools.datadog.coverage --regenerate",
        f"{len(ledger)} operations: {n[IMPLEMENTED]} implemented, {n[PARTIAL]} partial, "
        f"{n[NOT_IMPLEMENTED]} not implemented.",
        '"""',
        "",
        "LEDGER: dict[str, tuple[str, str]] = {",
    ]
    lines += [f"    {key!r}: ({status!r}, {note!r})," for key, (status, note) in ledger.items()]
    lines.append("}")
    return "\n".join(lines) + "\n"


def generate() -> str:
    return render(build_ledger(vendor_endpoints()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--regenerate", action="store_true", help="rewrite endpoints_ledger.py")
    parser.add_argument("--check", action="store_true", help="exit 1 if endpoints_ledger.py is stale")
    args = parser.parse_args(argv)
    text = generate()
    extra = extra_routes(vendor_endpoints())
    if extra:
        print("served routes Datadog's list does not have: " + ", ".join(extra), file=sys.stderr)
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
