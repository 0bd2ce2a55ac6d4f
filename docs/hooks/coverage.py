"""MkDocs hook: each tool page's coverage table, generated from the tool's coverage ledger.

A page writes ``<!-- coverage: slack -->`` (or github, datadog, pagerduty, okta) where the
table goes, and ``generated_tables.py`` writes the table below it, into the Markdown. At build
time this hook renders it again: it imports the tool's generated ledger module (the one its
``coverage.py`` declares, e.g. ``coverage_ledger.py``) and puts in its place: the counts per
status, a table of every operation the replica serves (implemented or partial, with what a
partial one leaves out), and a collapsible list of the operations it does not serve. The
numbers are never copied by hand, so a page cannot fall behind its ledger.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

import generated_tables  # (beside this file: MkDocs puts the hooks' folder on sys.path to load them)

STATUSES = ("implemented", "partial", "not_implemented")
LABELS = {"implemented": "implemented", "partial": "partial", "not_implemented": "not implemented"}
EXTRA_COLUMNS = {"OPERATION_IDS": "Operation id"}
"""Per-operation tables some ledgers carry that read well beside an operation (GitHub's
``DOCS`` are vendor URLs: left out, the docs link nowhere outside the repository)."""


def ledger_module(tool: str) -> ModuleType:
    """The generated ledger module of ``tool``, found through its coverage declaration."""
    coverage = importlib.import_module(f"ancha.world.tools.{tool}.coverage")
    stem = coverage.COVERAGE.path.stem
    return importlib.import_module(f"ancha.world.tools.{tool}.{stem}")


def counts(ledger: dict[str, tuple[str, str]]) -> dict[str, int]:
    """How many operations have each status."""
    return {s: sum(1 for status, _ in ledger.values() if status == s) for s in STATUSES}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render(tool: str) -> str:
    """The Markdown that replaces ``<!-- coverage: tool -->``."""
    module = ledger_module(tool)
    coverage = importlib.import_module(f"ancha.world.tools.{tool}.coverage").COVERAGE
    ledger: dict[str, tuple[str, str]] = module.LEDGER
    noun = coverage.noun
    n = counts(ledger)
    extra_name = next((name for name in EXTRA_COLUMNS if hasattr(module, name)), None)
    extras: dict[str, str] = getattr(module, extra_name) if extra_name else {}
    out = [
        f"The ledger lists **{len(ledger)} {noun}**: "
        f"**{n['implemented']} implemented**, **{n['partial']} partial** and "
        f"**{n['not_implemented']} not implemented**.",
        "",
        f"| Status | {noun.capitalize()} |",
        "|---|---:|",
        *(f"| {LABELS[s]} | {n[s]} |" for s in STATUSES),
        "",
        f"**Served {noun}** (implemented or partial):",
        "",
    ]
    head = ["Method" if noun == "methods" else "Operation", "Status", "What is missing"]
    if extra_name:
        head.insert(1, EXTRA_COLUMNS[extra_name])
    out += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for key, (status, note) in ledger.items():
        if status == "not_implemented":
            continue
        row = [f"`{key}`", LABELS[status], _cell(note) or "—"]
        if extra_name:
            row.insert(1, _cell(extras.get(key, "")))
        out.append("| " + " | ".join(row) + " |")
    missing = [key for key, (status, _) in ledger.items() if status == "not_implemented"]
    out += ["", f'??? note "Not implemented ({len(missing)} {noun})"', ""]
    out += [f"    - `{key}`" for key in missing]
    out.append("")
    return "\n".join(out)


def render_graphql() -> str:
    """GitHub's served GraphQL root fields and object types, from the replica's resolver map
    (the full ledger needs GitHub's schema, which is not in the repository)."""
    importlib.import_module("ancha.world.tools.github.graphql.resolvers")  # registers the resolver map
    fields: dict[str, Any] = importlib.import_module("ancha.world.tools.github.graphql.registry").FIELDS
    roots = sorted(key for key in fields if key.split(".", 1)[0] in ("Query", "Mutation"))
    types = sorted({key.split(".", 1)[0] for key in fields} - {"Query", "Mutation"})
    out = [f"The GraphQL API serves **{len(roots)} root fields** and **{len(fields)} fields** in all, "
           f"on {len(types)} object types.", "", "| Root field | Kind |", "|---|---|"]
    out += [f"| `{key.split('.', 1)[1]}` | {key.split('.', 1)[0].lower()} |" for key in roots]
    out += ["", f'??? note "Object types with served fields ({len(types)})"', ""]
    out += [f"    - `{name}`: " + ", ".join(f"`{k.split('.', 1)[1]}`" for k in sorted(fields)
                                            if k.split(".", 1)[0] == name) for name in types]
    out.append("")
    return "\n".join(out)


def table(name: str) -> str:
    """The Markdown of ``<!-- coverage: name -->``: a tool's ledger, or ``github-graphql``."""
    return render_graphql() if name == "github-graphql" else render(name)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    return generated_tables.expand(markdown, "coverage", table)
