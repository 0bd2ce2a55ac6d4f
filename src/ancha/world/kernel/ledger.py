"""Coverage ledgers: every operation a vendor publishes, and how far a tool's replica serves it.

A tool's ``coverage.py`` declares a ``CoverageLedger`` (where the vendor's operations come
from, what the replica serves, which per-operation table rides along, e.g. documentation
URLs) and this module does the rest: the status of each operation, the generated
``*_ledger.py`` text, and the ``--regenerate`` / ``--check`` command line.

Tool folders import this module; it imports none of them (nor the registry in
``ancha.world.registry``), so the served routes reach it only through the declaration.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from ancha.world.kernel import vendor_data

IMPLEMENTED = "implemented"
PARTIAL = "partial"
NOT_IMPLEMENTED = "not_implemented"
STATUSES = (IMPLEMENTED, PARTIAL, NOT_IMPLEMENTED)
"""The statuses a ledger entry can have, in the order the generated summary counts them."""

VERBS = ("get", "post", "put", "patch", "delete")
"""The OpenAPI path-item keys that name an operation (the ledgers list no HEAD or OPTIONS)."""

Ledger = dict[str, tuple[str, str]]
"""Operation -> (status, partial note); the note is '' unless the status is ``partial``."""


def listed_operations(lines: Iterable[str]) -> list[str]:
    """The vendor's ``METHOD /template`` list (its ``endpoints.txt``), deduplicated and sorted."""
    return sorted({line.strip() for line in lines if line.strip()})


def openapi_operations(paths: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """``("METHOD /template", operation)`` for each operation of an OpenAPI ``paths`` object.

    ``prefix`` is put before each template, for a description whose paths are mounted
    below the vendor's root (PagerDuty's Events API under ``/v2``).
    """
    for template, item in paths.items():
        for verb in VERBS:
            operation = item.get(verb)
            if operation:
                yield f"{verb.upper()} {prefix}{template}", operation


def rest_operations(tool: str) -> list[str]:
    """``tool``'s operations as ``METHOD /template``, sorted: the endpoint list of its packaged
    ``rest`` data."""
    return listed_operations(vendor_data.read(tool, "rest")["endpoints"])


def operation_values(tool: str, pick: Callable[[dict[str, Any]], str | None],
                     descriptions: tuple[tuple[str, str], ...] = (("openapi", ""),)) -> dict[str, str]:
    """``METHOD /template`` -> what ``pick`` reads of each operation (an ``operationId``, a docs
    URL) in ``tool``'s packaged OpenAPI ``descriptions`` (name, path prefix); None leaves it out."""
    data = vendor_data.read(tool, "rest")
    found: dict[str, str] = {}
    for name, prefix in descriptions:
        for key, operation in openapi_operations(data[name]["paths"], prefix):
            value = pick(operation)
            if value:
                found[key] = value
    return found


class Extras(NamedTuple):
    """A per-operation table the generated ledger carries after ``LEDGER`` (e.g. ``DOCS``)."""

    name: str
    """The table's name in the generated module."""
    read: Callable[[], Mapping[str, str]]
    """Reads operation -> value from the vendor's files (operations it lacks are left out)."""


class Served(Protocol):
    """A served route as a tool's router keeps it."""

    @property
    def method(self) -> str: ...

    @property
    def template(self) -> str: ...

    @property
    def partial(self) -> str:
        """What of the vendor's behaviour it leaves out ('' when complete)."""
        ...


def served_routes(routes: Iterable[Served], skip: Callable[[str], bool] = lambda template: False) -> dict[str, str]:
    """``METHOD /template`` -> partial note ('' when complete) of ``routes`` (leaving out the
    templates ``skip`` names: the world's own routes a tool serves beside the vendor's)."""
    return {f"{r.method} {r.template}": r.partial for r in routes if not skip(r.template)}


@dataclass(frozen=True)
class CoverageLedger:
    """What one tool declares about its ledger; the methods generate and check it.

    ``operations`` and ``served`` are called only when a ledger is built: the vendor
    folder may be absent at import time, and a tool's routes import far more than its
    coverage command needs.
    """

    title: str
    """The generated docstring's first sentence, e.g. ``GitHub REST coverage ledger``."""
    module: str
    """The coverage module to run to regenerate (``__name__`` is ``__main__`` under ``-m``)."""
    path: Path
    """The generated ``*_ledger.py``."""
    operations: Callable[[], Iterable[str]]
    """Reads every operation the vendor publishes."""
    served: Callable[[], Mapping[str, str]]
    """Served operation -> partial note ('' when served completely)."""
    noun: str = "operations"
    """What the summary line counts (Slack's are ``methods``)."""
    extras: Extras | None = None
    """The per-operation table written after ``LEDGER``, if any."""
    listing: str | None = None
    """How the served-but-unlisted warning names the vendor's list (``GitHub's REST list``);
    None skips the warning."""
    about: str | None = None
    """The coverage module's docstring; its first line describes the command line."""

    @classmethod
    def of_tool(cls, coverage_file: str, *, title: str, operations: Callable[[], Iterable[str]],
                served: Callable[[], Mapping[str, str]], noun: str = "operations", extras: Extras | None = None,
                listing: str | None = None, about: str | None = None) -> CoverageLedger:
        """The ledger a tool's ``coverage.py`` (``coverage_file``: its ``__file__``) declares: run as
        ``python -m ancha.world.tools.<tool>.coverage``, generating ``coverage_ledger.py`` beside it."""
        here = Path(coverage_file)
        return cls(title=title, module=f"ancha.world.tools.{here.parent.name}.{here.stem}",
                   path=here.with_name("coverage_ledger.py"), operations=operations, served=served, noun=noun,
                   extras=extras, listing=listing, about=about)

    def build_ledger(self, operations: Iterable[str]) -> Ledger:
        """Each of ``operations`` (sorted) with its status against what the tool serves."""
        routes = self.served()
        ledger: Ledger = {}
        for key in sorted(operations):
            if key not in routes:
                ledger[key] = (NOT_IMPLEMENTED, "")
            elif routes[key]:
                ledger[key] = (PARTIAL, routes[key])
            else:
                ledger[key] = (IMPLEMENTED, "")
        return ledger

    def extra_routes(self, operations: Iterable[str]) -> list[str]:
        """Served operations the vendor's list lacks (a typo in a template shows up here)."""
        known = set(operations)
        return sorted(key for key in self.served() if key not in known)

    def render(self, ledger: Ledger, extras: Mapping[str, str] | None = None) -> str:
        """The generated module's text; ``extras`` are the values of the declared table."""
        counts = {s: sum(1 for v in ledger.values() if v[0] == s) for s in STATUSES}
        lines = [
            f'"""{self.title}. Generated; do not edit.',
            "",
            f"Regenerate with: python -m {self.module} --regenerate",
            f"{len(ledger)} {self.noun}: {counts[IMPLEMENTED]} implemented, {counts[PARTIAL]} partial, "
            f"{counts[NOT_IMPLEMENTED]} not implemented.",
            '"""',
            "",
            "LEDGER: dict[str, tuple[str, str]] = {",
        ]
        lines += [f"    {key!r}: ({status!r}, {note!r})," for key, (status, note) in ledger.items()]
        lines.append("}")
        if self.extras is not None:
            # A missing table would render as an empty one and pass for a current ledger.
            if extras is None:
                raise TypeError(f"{self.title}: render needs the {self.extras.name} values")
            lines += ["", f"{self.extras.name}: dict[str, str] = {{"]
            lines += [f"    {key!r}: {extras[key]!r}," for key in ledger if key in extras]
            lines.append("}")
        return "\n".join(lines) + "\n"

    def generate(self) -> str:
        """The ledger as it should be committed, from the vendor's files and the served routes."""
        extras = self.extras.read() if self.extras is not None else None
        return self.render(self.build_ledger(self.operations()), extras)

    def main(self, argv: list[str] | None = None) -> int:
        """The command line: print the ledger, ``--regenerate`` it, or ``--check`` it (1 if stale)."""
        name = self.path.name
        parser = argparse.ArgumentParser(description=self.about.splitlines()[0] if self.about else None)
        parser.add_argument("--regenerate", action="store_true", help=f"rewrite {name}")
        parser.add_argument("--check", action="store_true", help=f"exit 1 if {name} is stale")
        args = parser.parse_args(argv)
        text = self.generate()
        if self.listing is not None:
            extra = self.extra_routes(self.operations())
            if extra:
                print(f"served routes {self.listing} does not have: " + ", ".join(extra), file=sys.stderr)
        if args.regenerate:
            self.path.write_text(text)
            print(f"wrote {self.path}")
            return 0
        if args.check:
            stale = self.path.read_text() != text
            print(f"{name} is stale: run --regenerate" if stale else f"{name} is current")
            return 1 if stale else 0
        sys.stdout.write(text)
        return 0
