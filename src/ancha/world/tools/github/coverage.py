"""The coverage ledger: every REST operation GitHub has, and how far this replica serves it.

The ledger (``routes_ledger.py``) is derived, not copied: ``METHOD /template`` lines from
the vendor's ``endpoints.txt``, each operation's documentation URL from the vendor's
OpenAPI description (``externalDocs``; error bodies cite it, as GitHub's do), and our
status beside each: implemented, partial (with what is missing), not_implemented.
Regenerate after serving a new route:

    python -m ancha.world.tools.github.coverage --regenerate

``--check`` exits 1 when the committed ledger differs from what would be generated.
The vendor folder is ``$ANCHA_VENDOR_DIR`` or ``../shared/vendor`` from the repository root.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ancha.world.tools.vendor import vendor_dir as vendor_folder

LEDGER_PATH = Path(__file__).with_name("routes_ledger.py")

IMPLEMENTED = "implemented"
PARTIAL = "partial"
NOT_IMPLEMENTED = "not_implemented"
_VERBS = ("get", "post", "put", "patch", "delete")


def vendor_dir() -> Path:
    return vendor_folder("github")


def vendor_endpoints(folder: Path | None = None) -> list[str]:
    """GitHub's operations as ``METHOD /template``, sorted."""
    folder = folder or vendor_dir()
    lines = (folder / "endpoints.txt").read_text().splitlines()
    return sorted({line.strip() for line in lines if line.strip()})


def vendor_docs(folder: Path | None = None) -> dict[str, str]:
    """``METHOD /template`` -> the operation's documentation URL."""
    folder = folder or vendor_dir()
    spec = json.loads((folder / "api.github.com.json").read_text())
    docs: dict[str, str] = {}
    for template, operations in spec["paths"].items():
        for verb in _VERBS:
            url = (operations.get(verb) or {}).get("externalDocs", {}).get("url")
            if url:
                docs[f"{verb.upper()} {template}"] = url
    return docs


def served() -> dict[str, str]:
    """Served ``METHOD /template`` -> partial note ('' when complete)."""
    from ancha.world.tools.github.router import registered
    from ancha.world.tools.github.routes import load_all

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
    """Served routes GitHub's REST list lacks (a typo in a template shows up here)."""
    known = set(endpoints)
    return sorted(key for key in served() if key not in known)


def render(ledger: dict[str, tuple[str, str]], docs: dict[str, str]) -> str:
    counts = {s: sum(1 for v in ledger.values() if v[0] == s) for s in (IMPLEMENTED, PARTIAL, NOT_IMPLEMENTED)}
    lines = [
        '"""GitHub REST coverage ledger. Generated; do not edit.',
        "",
        "Regenerate with: python -m ancha.world.tools.github.coverage --regenerate",
        f"{len(ledger)} operations: {counts[IMPLEMENTED]} implemented, {counts[PARTIAL]} partial, "
        f"{counts[NOT_IMPLEMENTED]} not implemented.",
        '"""',
        "",
        "LEDGER: dict[str, tuple[str, str]] = {",
    ]
    lines += [f"    {key!r}: ({status!r}, {note!r})," for key, (status, note) in ledger.items()]
    lines += ["}", "", "DOCS: dict[str, str] = {"]
    lines += [f"    {key!r}: {docs[key]!r}," for key in ledger if key in docs]
    lines.append("}")
    return "\n".join(lines) + "\n"


def generate() -> str:
    endpoints = vendor_endpoints()
    return render(build_ledger(endpoints), vendor_docs())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--regenerate", action="store_true", help="rewrite routes_ledger.py")
    parser.add_argument("--check", action="store_true", help="exit 1 if routes_ledger.py is stale")
    args = parser.parse_args(argv)
    text = generate()
    extra = extra_routes(vendor_endpoints())
    if extra:
        print("served routes GitHub's REST list does not have: " + ", ".join(extra), file=sys.stderr)
    if args.regenerate:
        LEDGER_PATH.write_text(text)
        print(f"wrote {LEDGER_PATH}")
        return 0
    if args.check:
        stale = LEDGER_PATH.read_text() != text
        print("routes_ledger.py is stale: run --regenerate" if stale else "routes_ledger.py is current")
        return 1 if stale else 0
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
