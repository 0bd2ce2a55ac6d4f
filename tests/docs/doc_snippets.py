"""The fenced code blocks of the docs pages, so that every example a page shows runs as a test."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>```+|~~~+)(?P<info>[^\n`]*)$")


@dataclass(frozen=True)
class Block:
    """One fenced block: its page, the line its fence opens on, the info string and the text."""

    page: Path
    line: int
    lang: str
    """The info string's first word (``yaml``, ``json``, ``python``, ``js``, ``sh``...)."""
    info: str
    """The whole info string, e.g. ``yaml title="scene.yaml"``: a page marks a block's role in it."""
    text: str

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(DOCS)}:{self.line}"


def fenced_blocks(page: Path) -> list[Block]:
    """Every fenced block of one Markdown page, in order (indented fences, as in admonitions, too)."""
    blocks: list[Block] = []
    lines = page.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        indent, fence, info = opening["indent"], opening["fence"], opening["info"].strip()
        body: list[str] = []
        j = i + 1
        while j < len(lines) and lines[j].strip() != fence:
            body.append(lines[j][len(indent) :] if lines[j].startswith(indent) else lines[j])
            j += 1
        lang = info.split()[0] if info else ""
        blocks.append(Block(page, i + 1, lang, info, "\n".join(body) + "\n"))
        i = j + 1
    return blocks


def all_blocks(*langs: str, under: str = "") -> list[Block]:
    """The blocks of every page below ``docs/under`` whose language is one of ``langs``."""
    found: list[Block] = []
    for page in sorted((DOCS / under).rglob("*.md")):
        found.extend(b for b in fenced_blocks(page) if not langs or b.lang in langs)
    return found
