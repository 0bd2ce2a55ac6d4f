"""``expect_unchanged:``, what a scene says the agent must not change (ours, not in the
reference): refs (``$github_orders``) and tool sections (``okta``, ``github.repos``).

The checks layer grades it after the trial (``ancha.checks.collateral``); here it is only
read and validated, so that a wrong entry is a scene error with its line.
"""

from __future__ import annotations

from ancha.scene.model import EXPECT_UNCHANGED_CHECK
from ancha.scene.refs import RefTable, parse_pointer
from ancha.scene.sections import Catalog
from ancha.scene.sources import Source

FIELD = "expect_unchanged"


def build_expect_unchanged(written: list[str], source: Source, refs: RefTable, catalog: Catalog,
                           tools: list[str], check_ids: list[str]) -> list[str]:
    """The entries of ``expect_unchanged`` as the scene keeps them (``$ref``, ``tool`` or
    ``tool.section``, each once), reporting every one that names nothing in this scene's world."""
    if written and EXPECT_UNCHANGED_CHECK in check_ids:
        source.add(FIELD, f"a check is named {EXPECT_UNCHANGED_CHECK}, the id of the check expect_unchanged adds",
                   "rename that check")
    out: list[str] = []
    for j, entry in enumerate(written):
        path = f"{FIELD}[{j}]"
        kept = _ref(entry, path, source, refs) if entry.startswith("$") else _section(entry, path, source, catalog,
                                                                                       tools)
        if kept is not None and kept not in out:
            out.append(kept)
    return out


def _ref(entry: str, path: str, source: Source, refs: RefTable) -> str | None:
    pointer = parse_pointer(entry)
    if pointer is None:
        source.add(path, f"expected a ref such as $slack_general, got {entry!r}", _ref_hint(refs))
        return None
    record = refs.records.get(pointer[1])
    if record is None:
        source.add(path, f"unknown ref {entry}", _ref_hint(refs))
        return None
    if record.tool is None or record.tool == "world":
        source.add(path, f"{entry} is a {record.kind}, not something of a tool's world",
                   "name a ref declared in world: (a channel, a repo, a monitor, a user...) or a tool section")
        return None
    return "$" + pointer[1]


def _section(entry: str, path: str, source: Source, catalog: Catalog, tools: list[str]) -> str | None:
    tool, dot, section = entry.partition(".")
    if tool not in catalog.worlds:
        source.add(path, f"unknown tool {tool!r} in {entry!r}",
                   f"write a ref ($name) or a tool section; tools: {', '.join(catalog.tools)}")
        return None
    if tool not in tools:
        source.add(path, f"this scene has no {tool} world, so the agent cannot change it",
                   f"tools of this scene: {', '.join(tools) or 'none'}")
        return None
    if not dot:
        return tool
    sections = _sections(catalog, tool)
    if section not in sections:
        source.add(path, f"{tool} has no section {section!r}", f"{tool} sections: {', '.join(sections)}")
        return None
    return entry


def _sections(catalog: Catalog, tool: str) -> list[str]:
    """The sections of ``world.<tool>`` that hold records (not files they are read from)."""
    fields = catalog.worlds[tool].file_model.model_fields
    return [info.alias or name for name, info in fields.items() if not (info.alias or name).endswith("_file")]


def _ref_hint(refs: RefTable) -> str:
    names = [f"${name}" for name, record in refs.records.items() if record.tool not in (None, "world")]
    return f"refs of this scene's world: {', '.join(names)}" if names else "declare one with ref: NAME in world:"
