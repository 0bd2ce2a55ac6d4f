"""The docs pages hold their generated tables (scene-file fields, coverage, check kinds) in
the Markdown itself, as the code renders them now, so a reader of docs/ in the repository
sees them; ``python docs/hooks/generated_tables.py`` writes them."""

from __future__ import annotations

import subprocess
import sys

import pytest
from doc_snippets import DOCS

sys.path.insert(0, str(DOCS / "hooks"))
import generated_tables  # noqa: E402  (docs/hooks is not a package)

from ancha.world.registry import registry  # noqa: E402


def test_docs__every_generated_table_in_the_markdown_is_current() -> None:
    stale = [str(page.relative_to(DOCS)) for page in generated_tables.stale_pages()]
    assert not stale, f"stale generated tables in {', '.join(stale)}: run {generated_tables.COMMAND}"


@pytest.mark.parametrize("tool", tuple(registry().tools))
def test_docs__a_tool_pages_markdown_holds_its_seed_and_coverage_tables(tool: str) -> None:
    text = (DOCS / "tools" / f"{tool}.md").read_text(encoding="utf-8")
    for kind, render in generated_tables.renderers().items():
        if kind != "check-kinds":
            assert generated_tables.block(kind, tool, render(tool)) in text, f"tools/{tool}.md: no {kind} table"


def test_docs__the_github_pages_markdown_says_seeded_pull_requests_take_assignees() -> None:
    text = (DOCS / "tools" / "github.md").read_text(encoding="utf-8")
    pulls = text.index("**`world.github.repos[].pulls[]`**")
    assert "| `assignees` |" in text[pulls:text.index("\n\n**", pulls + 1)]


def test_generated_tables__a_bare_marker_gets_its_table_and_a_filled_one_is_rendered_again() -> None:
    def render(name: str) -> str:
        return f"| {name} |"

    bare = "Intro\n\n<!-- seed: okta -->\n\nOutro\n"
    filled = generated_tables.expand(bare, "seed", render)
    assert filled == "Intro\n\n<!-- seed: okta -->\n\n| okta |\n\n<!-- /seed: okta -->\n\nOutro\n"
    assert generated_tables.expand(filled, "seed", render) == filled
    stale = filled.replace("| okta |", "| old |")
    assert generated_tables.expand(stale, "seed", render) == filled


def test_generated_tables__two_blocks_on_a_page_are_each_rendered_alone() -> None:
    page = "<!-- coverage: a -->\n\nx\n\n<!-- /coverage: a -->\n\n<!-- coverage: b -->\n"
    assert generated_tables.expand(page, "coverage", str.upper) == (
        "<!-- coverage: a -->\n\nA\n\n<!-- /coverage: a -->\n\n<!-- coverage: b -->\n\nB\n\n<!-- /coverage: b -->\n")


def test_generated_tables__the_check_command_names_a_stale_page(tmp_path, monkeypatch) -> None:
    page = tmp_path / "tools" / "okta.md"
    page.parent.mkdir()
    page.write_text("<!-- seed: okta -->\n\n| stale |\n\n<!-- /seed: okta -->\n", encoding="utf-8")
    monkeypatch.setattr(generated_tables, "DOCS", tmp_path)
    assert [p.name for p in generated_tables.stale_pages()] == ["okta.md"]
    assert generated_tables.main(["--check"]) == 1
    assert generated_tables.main([]) == 0
    assert generated_tables.main(["--check"]) == 0
    assert "| `login` |" in page.read_text(encoding="utf-8")


def test_generated_tables__the_command_runs_from_the_repository() -> None:
    done = subprocess.run([sys.executable, "docs/hooks/generated_tables.py", "--check"], cwd=DOCS.parent,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
