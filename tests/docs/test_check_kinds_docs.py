"""The checks page's tables of check kinds (common fields, process checks, where each kind
works) are generated from the ``CheckKind`` objects by ``docs/hooks/check_kinds.py``, and
render exactly the tables the reference has."""

from __future__ import annotations

import sys

from doc_snippets import DOCS

from ancha.scene.check_kinds import CHECK_FORMS, CHECK_KEYS

sys.path.insert(0, str(DOCS / "hooks"))
import check_kinds as hook  # noqa: E402  (docs/hooks is not a package)

WHERE = """| Kind | Scene files (`ancha run`, `ancha check`) | Hosted console tasks | Playground task files |
|---|---|---|---|
| `state` | Yes | Yes | Yes |
| `trace` | Yes | Yes | Yes |
| `judge` | Yes | No | No |
| Process checks | Yes | No | No |"""


def test_docs__the_check_kinds_tables_are_rendered_from_the_kinds() -> None:
    page = (DOCS / "checks.md").read_text(encoding="utf-8")
    for table in hook.TABLES:
        assert f"<!-- check-kinds: {table} -->" in page
    assert all(f"| `{f.key}` |" in hook.render("process") for f in CHECK_FORMS if f.family.name == "process")
    assert all(f"`{key}`" in hook.render("fields") for key in CHECK_KEYS)
    assert "| `judge` | Yes | No | No |" in hook.render("where")
    assert "| Process checks | Yes | No | No |" in hook.render("where")


def test_docs__where_each_kind_works_is_the_references_table() -> None:
    assert hook.render("where") == WHERE
