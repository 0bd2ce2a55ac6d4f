"""The coverage ledger: every operation PagerDuty has, and how far this replica serves it.

The ledger (``endpoints_ledger.py``) is derived, not copied: ``METHOD /template`` lines from
the vendor's ``endpoints.txt`` (REST API v2 and the Events API v2's ``/v2/...`` paths),
each operation's summary from the vendor's OpenAPI descriptions, and our status beside
each: implemented, partial (with what is missing), not_implemented. Regenerate after
serving a new route:

    python -m ancha.world.tools.pagerduty.coverage --regenerate

``--check`` exits 1 when the committed ledger differs from what would be generated.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ancha.world.tools.vendor import vendor_dir as vendor_folder

LEDGER_PATH = Path(__file__).with_name("endpoints_ledger.py")
IMPLEMENTED = "implemented"
PARTIAL = "partial"
NOT_IMPLEMENTED = "not_implemented"
_VERBS = ("get", "post", "put", "patch", "delete")
EVENTS = {"POST /v2/enqueue": "", "POST /v2/change/enqueue": "change events are accepted, not stored"}
"""Served by ``events_api.py`` (outside the REST router)."""


def vendor_dir() -> Path:
    return vendor_folder("pagerduty")


def vendor_endpoints(folder: Path | None = None) -> list[str]:
    folder = folder or vendor_dir()
    lines = (folder / "endpoints.txt").read_text().splitlines()
    return sorted({line.strip() for line in lines if line.strip()})


def vendor_summaries(folder: Path | None = None) -> dict[str, str]:
    """``METHOD /template`` -> the operation's summary (REST and Events API descriptions)."""
    folder = folder or vendor_dir()
    found: dict[str, str] = {}
    for name, prefix in (("rest-openapiv3.json", ""), ("events-v2-openapiv3.json", "/v2")):
        spec = json.loads((folder / name).read_text())
        for template, operations in spec["paths"].items():
            for verb in _VERBS:
                summary = (operations.get(verb) or {}).get("summary")
                if summary:
                    found[f"{verb.upper()} {prefix}{template}"] = summary
    return found


def served() -> dict[str, str]:
    from ancha.world.tools.pagerduty.routes import load_all

    return {**{f"{r.method} {r.template}": r.partial for r in load_all()}, **EVENTS}


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
    known = set(endpoints)
    return sorted(key for key in served() if key not in known)


def render(ledger: dict[str, tuple[str, str]], summaries: dict[str, str]) -> str:
    counts = {s: sum(1 for v in ledger.values() if v[0] == s) for s in (IMPLEMENTED, PARTIAL, NOT_IMPLEMENTED)}
    lines = [
        '"""PagerDuty coverage ledger (REST API v2 and Events API v2). Generated; do not edit.',
        "",
        "Regenerate with: python -m ancha.world.tools.pagerduty.coverage --regenerate",
        f"{len(ledger)} operations: {counts[IMPLEMENTED]} implemented, {counts[PARTIAL]} partial, "
        f"{counts[NOT_IMPLEMENTED]} not implemented.",
        '"""',
        "",
        "LEDGER: dict[str, tuple[str, str]] = {",
    ]
    lines += [f"    {key!r}: ({status!r}, {note!r})," for key, (status, note) in ledger.items()]
    lines += ["}", "", "SUMMARIES: dict[str, str] = {"]
    lines += [f"    {key!r}: {summaries[key]!r}," for key in ledger if key in summaries]
    lines.append("}")
    return "\n".join(lines) + "\n"


def generate() -> str:
    return render(build_ledger(vendor_endpoints()), vendor_summaries())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--regenerate", action="store_true", help="rewrite endpoints_ledger.py")
    parser.add_argument("--check", action="store_true", help="exit 1 if endpoints_ledger.py is stale")
    args = parser.parse_args(argv)
    text = generate()
    extra = extra_routes(vendor_endpoints())
    if extra:
        print("served routes PagerDuty's list does not have: " + ", ".join(extra), file=sys.stderr)
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
