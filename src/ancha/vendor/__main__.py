"""``python -m ancha.vendor regenerate [--check] [--from DIR]``.

Reads the vendors' descriptions from ``--from`` (the only place they are read, and never at
run time) and writes each tool's ``vendor/*.json.gz``
and coverage ledger. ``--check`` writes nothing and exits 1 when anything committed is not
what regeneration would write. Exit 2: the descriptions are not there.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ancha.vendor.products import Inputs, VendorFolderError
from ancha.vendor.regenerate import Outcome, data_files, ledgers


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ancha.vendor",
                                     description="Regenerate the vendor data Ancha ships, from the vendors' descriptions")
    commands = parser.add_subparsers(dest="command", required=True)
    regenerate = commands.add_parser("regenerate", help="write each tool's vendor/*.json.gz and coverage ledger")
    regenerate.add_argument("--check", action="store_true",
                            help="write nothing; exit 1 if anything committed is stale")
    regenerate.add_argument("--from", dest="source", type=Path, default=None,
                            help="the vendors' descriptions (the folder holding slack/, github/, ...)")
    args = parser.parse_args(argv)
    folder = args.source
    if folder is None:
        print("error: say where the vendors' descriptions are: --from DIR (the folder holding slack/, "
              "github/, datadog/, pagerduty/, okta/)", file=sys.stderr)
        return 2
    if not folder.is_dir():
        print(f"error: no vendor descriptions at {folder}: pass --from DIR (the folder holding slack/, "
              "github/, datadog/, pagerduty/, okta/)", file=sys.stderr)
        return 2
    try:
        outcomes = data_files(Inputs(folder.resolve()), args.check)
    except VendorFolderError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    outcomes += ledgers(args.check)
    return report(outcomes, args.check)


def report(outcomes: list[Outcome], check: bool) -> int:
    root = Path.cwd()
    for outcome in outcomes:
        shown = outcome.path.relative_to(root) if outcome.path.is_relative_to(root) else outcome.path
        print(f"{outcome.status:8} {shown}" + (f"  {outcome.detail}" if outcome.detail else ""))
    stale = [o for o in outcomes if o.status == "stale"]
    if check:
        print(f"{len(outcomes) - len(stale)} of {len(outcomes)} generated files are current" +
              ("; run `python -m ancha.vendor regenerate`" if stale else ""))
    return 1 if stale else 0


if __name__ == "__main__":
    raise SystemExit(main())
