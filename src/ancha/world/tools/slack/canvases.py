"""Canvases (``canvases.*``, ``conversations.canvases.create``): markdown documents kept
as sections, the way Slack's API edits them.

Each block of the markdown (a heading, a paragraph, a list item) is one section with its
own ``temp:C:...`` id: ``canvases.sections.lookup`` finds sections by heading level and
text, and ``canvases.edit`` inserts, replaces, deletes or renames by section. A channel
canvas belongs to its channel (one each).
"""

from __future__ import annotations

from dataclasses import dataclass, field

SECTION_TYPES = ("h1", "h2", "h3", "any_header")
"""``criteria.section_types`` values."""


@dataclass(slots=True)
class Section:
    id: str
    markdown: str

    @property
    def kind(self) -> str:
        """``h1``..``h3`` for a heading, else ``text``."""
        level = len(self.markdown) - len(self.markdown.lstrip("#"))
        return f"h{level}" if 1 <= level <= 3 and self.markdown[level : level + 1] == " " else "text"

    def matches(self, types: list[str], text: str | None) -> bool:
        kind = self.kind
        if types and not (kind in types or ("any_header" in types and kind != "text")):
            return False
        return text is None or text.lower() in self.markdown.lower()


@dataclass(slots=True)
class Canvas:
    id: str
    owner: str
    created: int
    title: str = ""
    channel: str | None = None
    """The channel it is the canvas of (``conversations.canvases.create``), if any."""
    sections: list[Section] = field(default_factory=list)
    access: dict[str, str] = field(default_factory=dict)
    """User or channel id -> ``read``, ``write`` or ``owner``."""

    @property
    def markdown(self) -> str:
        return "\n\n".join(section.markdown for section in self.sections)


def blocks_of(markdown: str) -> list[str]:
    """The sections a markdown text splits into: each heading, list item and paragraph."""
    blocks: list[str] = []
    paragraph: list[str] = []
    for line in markdown.splitlines():
        stripped = line.strip()
        if (
            not stripped
            or stripped.startswith("#")
            or stripped[:2] in ("- ", "* ", "+ ")
            or stripped[:1].isdigit()
        ):
            if paragraph:
                blocks.append(" ".join(paragraph))
                paragraph = []
            if stripped:
                blocks.append(stripped)
        else:
            paragraph.append(stripped)
    if paragraph:
        blocks.append(" ".join(paragraph))
    return blocks
