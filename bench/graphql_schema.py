"""How soon GitHub's GraphQL schema is ready in a new process (issue 24: <= 0.2 s).

    .venv/bin/python bench/graphql_schema.py [--sdl PATH/TO/schema.graphql] [--runs N]

Each run is a new Python process that imports the GitHub replica's GraphQL modules, then
builds the schema from the packaged ``github/vendor/graphql.json.gz`` and validates one
query. Two figures: the schema alone (build + first validation: what the first GraphQL
request of a new server waited for, the issue's target), and everything from before the
imports (those modules are loaded by any server process anyway). With ``--sdl`` (the
vendor's SDL, e.g. ``../shared/vendor/github/schema.graphql``), the same process parses the
SDL and builds from its AST instead, as before issue 24, and the ratios are printed.
Medians of N runs. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

QUERY = '{ repository(owner: "o", name: "r") { issues(first: 5) { nodes { title author { login } } } } }'

PACKAGED = f"""
import json, time
started = time.perf_counter()
from graphql import parse, validate
from ancha.world.tools.github.graphql.schema import build_schema
imported = time.perf_counter()
built = build_schema()
assert not validate(built, parse({QUERY!r}))
done = time.perf_counter()
print(json.dumps({{"ready": done - started, "build": done - imported}}))
"""

FROM_SDL = f"""
import json, sys, time
started = time.perf_counter()
from graphql import build_ast_schema, parse, validate
from ancha.world.tools.github.graphql.schema import build_schema
imported = time.perf_counter()
built = build_ast_schema(parse(open(sys.argv[1], encoding="utf-8").read(), no_location=True), assume_valid_sdl=True)
built._validation_errors = []
assert not validate(built, parse({QUERY!r}))
done = time.perf_counter()
print(json.dumps({{"ready": done - started, "build": done - imported}}))
"""


def measure(script: str, runs: int, *args: str) -> dict[str, float]:
    samples = [json.loads(subprocess.run([sys.executable, "-c", script, *args], check=True, capture_output=True,
                                         text=True).stdout) for _ in range(runs)]
    return {key: statistics.median(s[key] for s in samples) for key in ("ready", "build")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sdl", type=Path, help="the vendor's schema.graphql, for the before figure")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    packaged = measure(PACKAGED, args.runs)
    print(f"GitHub GraphQL schema in a new process, median of {args.runs}\n")
    print("| schema from | schema ready: build + first validation (s) | with the modules' imports (s) | target |")
    print("|---|---:|---:|---|")
    met = "met" if packaged["build"] <= 0.2 else "MISSED"
    print(f"| packaged compact structure | {packaged['build']:.3f} | {packaged['ready']:.3f} | <= 0.2 s: {met} |")
    if args.sdl:
        sdl = measure(FROM_SDL, args.runs, str(args.sdl))
        print(f"| vendor SDL, parsed and built (before) | {sdl['build']:.3f} | {sdl['ready']:.3f} | |")
        print(f"\nschema ready {sdl['build'] / packaged['build']:.1f}x sooner; "
              f"with the imports {sdl['ready'] / packaged['ready']:.1f}x")


if __name__ == "__main__":
    main()
