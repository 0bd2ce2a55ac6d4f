"""The generated tables of the docs pages, written into the Markdown itself.

A page marks where a generated table goes with a comment: ``<!-- seed: github -->`` (the
scene-file fields of a tool, ``seed.py``), ``<!-- coverage: datadog -->`` (a tool's coverage
ledger, ``coverage.py``), ``<!-- check-kinds: where -->`` (``check_kinds.py``). The table is
written below it, up to a closing ``<!-- /seed: github -->``, so that a reader of docs/ in
the repository sees it too, not only a reader of the built site:

    python docs/hooks/generated_tables.py           # writes every page's tables afresh
    python docs/hooks/generated_tables.py --check   # exits 1, naming the pages, when one is stale

At build time each hook renders its tables again (``expand``), so the site is current even
when a page is not; the docs tests fail on a stale page.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

HOOKS = Path(__file__).resolve().parent
DOCS = HOOKS.parent
COMMAND = "python docs/hooks/generated_tables.py"

Render = Callable[[str], str]


def _block(kind: str) -> re.Pattern[str]:
    """A marker of ``kind`` with the table generated below it, if any, up to its closing marker."""
    return re.compile(rf"<!--\s*{kind}:\s*(?P<name>[a-z-]+)\s*-->"
                      rf"(?:\n(?:(?!<!--\s*{kind}:).)*?<!--\s*/{kind}:\s*(?P=name)\s*-->)?", re.DOTALL)


def block(kind: str, name: str, table: str) -> str:
    """A marker, its table and its closing marker (blank lines around the table, so that an
    admonition or a list at its end does not take in the closing comment)."""
    return f"<!-- {kind}: {name} -->\n\n{table.strip()}\n\n<!-- /{kind}: {name} -->"


def expand(markdown: str, kind: str, render: Render) -> str:
    """``markdown`` with every ``kind`` table rendered afresh by ``render(name)``."""
    return _block(kind).sub(lambda m: block(kind, m["name"], render(m["name"])), markdown)


def _hook(stem: str) -> ModuleType:
    """The hook ``docs/hooks/<stem>.py``, loaded from its file (``coverage`` is also a package's
    name, which ``import coverage`` could find first)."""
    name = f"ancha_docs_hook_{stem}"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, HOOKS / f"{stem}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def renderers() -> dict[str, Render]:
    """Each kind of generated table, and what renders it (the hooks beside this file)."""
    return {"seed": _hook("seed").render, "coverage": _hook("coverage").table,
            "check-kinds": _hook("check_kinds").render}


def current(markdown: str) -> str:
    """``markdown`` with all its generated tables as the code renders them now."""
    for kind, render in renderers().items():
        markdown = expand(markdown, kind, render)
    return markdown


def stale_pages() -> list[Path]:
    """The pages whose generated tables differ from what the code renders now."""
    return [page for page in sorted(DOCS.rglob("*.md"))
            if current(text := page.read_text(encoding="utf-8")) != text]


def main(argv: list[str]) -> int:
    if argv == ["--check"]:
        stale = stale_pages()
        for page in stale:
            print(f"{page.relative_to(DOCS.parent)}: its generated tables are stale; run {COMMAND}", file=sys.stderr)
        return 1 if stale else 0
    if argv:
        print(f"usage: {COMMAND} [--check]", file=sys.stderr)
        return 2
    for page in sorted(DOCS.rglob("*.md")):
        text = page.read_text(encoding="utf-8")
        fresh = current(text)
        if fresh != text:
            page.write_text(fresh, encoding="utf-8")
            print(f"wrote {page.relative_to(DOCS.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
