"""MkDocs hook: each tool page's table of scene-file fields, generated from the tool's file model.

A page writes ``<!-- seed: github -->`` where the tables go, and ``generated_tables.py``
writes them below it, into the Markdown. At build time this hook renders them again: it takes
the ``world.<tool>`` section's file model from the tool registry (the model that validates
scene files and that ``ancha schema scene`` prints) and renders one table per part of the
section: every field with its type, its default (or "required") and the model's own
description where it has one. A field added to a seed shows up here without anyone
copying it.
"""

from __future__ import annotations

import json
from typing import Any

import generated_tables  # (beside this file: MkDocs puts the hooks' folder on sys.path to load them)


def schema(tool: str) -> dict[str, Any]:
    from ancha.world.registry import registry

    model = registry().tools[tool].world.file_model
    return model.model_json_schema(by_alias=True)


def _def_name(ref: str) -> str:
    return ref.rsplit("/", 1)[-1]


def _enum(values: list[Any]) -> str:
    return ", ".join(f"`{v}`" for v in values)


class _Tables:
    def __init__(self, root: dict[str, Any], tool: str) -> None:
        self.defs: dict[str, Any] = root.get("$defs", {})
        self.tool = tool
        self.paths: dict[str, str] = {}
        """def name -> the path it is first reached at (``world.github.repos[]``)."""
        self.order: list[tuple[str, dict[str, Any]]] = []

    def walk(self, path: str, node: dict[str, Any]) -> None:
        self.order.append((path, node))
        for key, prop in node.get("properties", {}).items():
            for sub, name in self._nested(f"{path}.{key}", prop):
                if name not in self.paths:
                    self.paths[name] = sub
                    self.walk(sub, self.defs[name])

    def _nested(self, path: str, prop: dict[str, Any]) -> list[tuple[str, str]]:
        """(path, def name) of the models a property holds: itself, list items, mapping values."""
        if "$ref" in prop:
            return [(path, _def_name(prop["$ref"]))]
        found: list[tuple[str, str]] = []
        for option in prop.get("anyOf", []):
            found += self._nested(path, option)
        if prop.get("type") == "array" and isinstance(prop.get("items"), dict):
            found += self._nested(f"{path}[]", prop["items"])
        extra = prop.get("additionalProperties")
        if prop.get("type") == "object" and isinstance(extra, dict):
            found += self._nested(f"{path}.<name>", extra)
        return found

    def type_of(self, prop: dict[str, Any]) -> str:
        if "$ref" in prop:
            return f"mapping (`{self.paths.get(_def_name(prop['$ref']), _def_name(prop['$ref']))}`)"
        if "anyOf" in prop:
            kinds = [self.type_of(o) for o in prop["anyOf"] if o.get("type") != "null"]
            unique = list(dict.fromkeys(kinds))
            if unique == ["time", "string"]:
                return "time (ISO, or an offset from `clock.start` such as `-3d`)"
            return " or ".join(unique)
        if "enum" in prop:
            return _enum(prop["enum"])
        if "const" in prop:
            return f"`{prop['const']}`"
        kind = prop.get("type")
        if kind == "array":
            return f"list of {self.type_of(prop.get('items', {}))}"
        if kind == "object":
            extra = prop.get("additionalProperties")
            if isinstance(extra, dict):
                return f"mapping of names to {self.type_of(extra)}"
            return "mapping"
        if kind == "string" and prop.get("format") == "date-time":
            return "time"
        return {"string": "string", "boolean": "boolean", "integer": "integer", "number": "number"}.get(
            kind or "", "any")

    def table(self, path: str, node: dict[str, Any]) -> list[str]:
        required = set(node.get("required", []))
        notes = any(p.get("description") for p in node.get("properties", {}).values())
        head = ["Field", "Type", "Default", *(["Notes"] if notes else [])]
        rows = [f"**`{path}`**" + (f": {node['description']}" if node.get("description") else ""), "",
                "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for key, prop in node.get("properties", {}).items():
            if key in required:
                default = "required"
            elif "default" in prop and prop["default"] not in (None, [], {}):
                default = f"`{json.dumps(prop['default'])}`"
            else:
                default = "—"
            cells = [f"`{key}`", self.type_of(prop), default]
            if notes:
                cells.append((prop.get("description") or "").replace("|", "\\|"))
            rows.append("| " + " | ".join(cells) + " |")
        return [*rows, ""]


def render(tool: str) -> str:
    """The Markdown that replaces ``<!-- seed: tool -->``."""
    root = schema(tool)
    tables = _Tables(root, tool)
    tables.walk(f"world.{tool}", root)
    out: list[str] = []
    for path, node in tables.order:
        out += tables.table(path, node)
    return "\n".join(out)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    return generated_tables.expand(markdown, "seed", render)
