"""Structure only: a vendor's API description with its prose and examples taken out.

What stays is what a replica or a test can check against: operations, parameters, request
and response bodies, schemas with their types, fields, ``required``, enums, formats,
patterns, bounds and defaults, and each operation's documentation URL (error bodies cite
it). What goes: every ``description``, ``summary``, ``title``, ``example``/``examples``,
``$comment``, tag text, contact and licence blocks, and vendor extensions (``x-*``).

The walk knows which objects are keyword objects (a schema, an operation) and which are
maps of names (``properties``, ``paths``, ``responses``, ``components.schemas``...): a
field *named* ``description`` or ``example`` in a payload is structure, and stays.
"""

from __future__ import annotations

from typing import Any

PROSE = frozenset({"description", "summary", "title", "example", "examples", "$comment",
                   "termsOfService", "contact", "license", "x-tagGroups"})
"""Keywords left out wherever they are keywords (never where they are names)."""

NAME_MAPS = frozenset({
    # JSON Schema
    "properties", "patternProperties", "definitions", "$defs", "dependentSchemas",
    # OpenAPI 3 (components and below) and Swagger 2
    "paths", "responses", "content", "headers", "schemas", "parameters", "requestBodies",
    "securitySchemes", "securityDefinitions", "links", "callbacks", "encoding", "variables",
    "webhooks",
})
"""Keywords whose value maps names to keyword objects (each value is walked, no key dropped)."""

VALUE_MAPS = frozenset({"mapping", "scopes"})
"""Keywords whose value maps names to plain strings: kept as they are, less prose values."""


def structure(document: Any) -> Any:
    """``document`` (an OpenAPI or JSON Schema document) with its prose and examples left out."""
    return _keywords(document)


def _keywords(node: Any) -> Any:
    if isinstance(node, list):
        return [_keywords(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in PROSE or key.startswith("x-"):
            continue
        if key == "externalDocs":
            if isinstance(value, dict) and isinstance(value.get("url"), str):
                out[key] = {"url": value["url"]}
            continue
        if key == "tags" and isinstance(value, list):  # an operation's tags are names; the root's carry prose
            out[key] = [_keywords(v) if isinstance(v, dict) else v for v in value]
            continue
        if key in NAME_MAPS and isinstance(value, dict):
            out[key] = {name: _keywords(item) for name, item in value.items()}
        elif key == "scopes" and isinstance(value, dict):
            out[key] = dict.fromkeys(value, "")  # OAuth scope -> its prose: the names are what matter
        elif key in VALUE_MAPS and isinstance(value, dict):
            out[key] = dict(value)
        else:
            out[key] = _keywords(value)
    return out


def shape(sample: Any) -> Any:
    """The JSON shape of a sample payload: its fields and their JSON types, with no values.

    ``{"type": "object", "properties": {...}}`` for objects, ``{"type": "array", "items": ...}``
    (the first item's shape) for arrays, ``{"type": "string"}`` and so on for the rest.
    """
    if isinstance(sample, dict):
        return {"type": "object", "properties": {key: shape(value) for key, value in sample.items()}}
    if isinstance(sample, list):
        return {"type": "array", "items": shape(sample[0])} if sample else {"type": "array"}
    if isinstance(sample, bool):
        return {"type": "boolean"}
    if isinstance(sample, int):
        return {"type": "integer"}
    if isinstance(sample, float):
        return {"type": "number"}
    if isinstance(sample, str):
        return {"type": "string"}
    return {"type": "null"}
