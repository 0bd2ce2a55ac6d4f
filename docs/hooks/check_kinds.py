"""MkDocs hook: the checks page's tables of check kinds, generated from the kinds themselves.

A page writes ``<!-- check-kinds: fields -->`` (the common fields of a check),
``<!-- check-kinds: process -->`` (each process check's value and when it passes) or
``<!-- check-kinds: where -->`` (where each kind works: scene files, hosted console tasks,
playground task files) where a table goes, and ``generated_tables.py`` writes the table below
it, into the Markdown. At build time this hook renders it again: it reads every
``CheckKind`` of the build (``ancha.checks.kinds.check_kinds()``) and renders the table
from its form, so a kind added, or allowed in one more place, shows up without anyone
copying it.
"""

from __future__ import annotations

from typing import Any

import generated_tables  # (beside this file: MkDocs puts the hooks' folder on sys.path to load them)

ID_ROW = ["`id`", "string", "Unique name of the check. Results and `pass` refer to it."]


def _forms() -> list[Any]:
    from ancha.checks.kinds import check_kinds

    return [kind.form for kind in check_kinds().values()]


def _families() -> list[tuple[Any, list[Any]]]:
    """Each family of kinds, in the reference's order, with its kinds in theirs."""
    from ancha.scene.check_kinds import FAMILIES

    forms = _forms()
    return [(family, [f for f in forms if f.family is family]) for family in FAMILIES]


def _table(head: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def fields() -> str:
    """``Common fields``: ``id``, then one row per family of kinds."""
    rows = [[", ".join(f"`{f.key}`" for f in forms), family.value_type, family.meaning]
            for family, forms in _families() if forms]
    return _table(["Field", "Type", "Meaning"], [ID_ROW, *rows])


def process() -> str:
    """``Process checks``: each process kind's value and when it passes."""
    from ancha.scene.check_kinds import PROCESS_CHECKS

    rows = [[f"`{f.key}`", f.value, f.passes_when] for f in _forms() if f.family is PROCESS_CHECKS]
    return _table(["Kind", "Value", "Passes when"], rows)


def where() -> str:
    """``Where each kind works``: one row per family, Yes or No per place."""
    from ancha.scene.check_kinds import PLACES

    rows = []
    for family, forms in _families():
        places = {f.works_in for f in forms}
        if len(places) != 1:
            raise ValueError(f"the kinds of {family.row} do not work in the same places: the table has one row for them")
        (works_in,) = places
        rows.append([family.row, *("Yes" if place in works_in else "No" for place in PLACES)])
    return _table(["Kind", *PLACES.values()], rows)


TABLES = {"fields": fields, "process": process, "where": where}


def render(table: str) -> str:
    if table not in TABLES:
        raise ValueError(f"no check-kinds table {table!r}; tables: {', '.join(TABLES)}")
    return TABLES[table]()


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    return generated_tables.expand(markdown, "check-kinds", render)
