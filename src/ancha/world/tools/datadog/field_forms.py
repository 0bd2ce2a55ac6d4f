"""One scene-model field with two forms: as written in a scene file, and as resolved.

``world.datadog`` has one set of models (``scene_file``): the file walker checks a scene
file against them, and ``build_world`` validates the resolved seed with the same classes.
Where a field's written and resolved values really differ (a time written as ``-3d`` and
kept as epoch seconds, a metric point kept as a tuple, the seeded logs kept as plain dicts),
the field carries one of these ``Annotated`` markers:

- ``Written(T)`` on a field typed as its resolved value: a scene file must hold ``T``;
- ``Resolved(T)`` on a field typed as its written value: the resolved seed holds ``T``.

The file walker validates every value strictly and pydantic validates the resolved seed
laxly, so each marker answers the written form in strict mode and the resolved one in lax
mode. The JSON Schema (``ancha schema scene``, the tool's docs page) shows the written
form; a dump (the scene's resolved JSON) serializes the resolved one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import core_schema


def _forms(written: core_schema.CoreSchema, resolved: core_schema.CoreSchema) -> core_schema.CoreSchema:
    return core_schema.lax_or_strict_schema(
        lax_schema=resolved, strict_schema=written,
        serialization=core_schema.wrap_serializer_function_ser_schema(lambda value, dump: dump(value),
                                                                       schema=resolved))


def _written_schema(schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
    assert schema["type"] == "lax-or-strict"
    return handler(schema["strict_schema"])


@dataclass(frozen=True, slots=True)
class Written:
    """Annotated marker: the field is typed as it is resolved; a scene file writes ``annotation``."""

    annotation: Any

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return _forms(handler.generate_schema(self.annotation), handler(source))

    def __get_pydantic_json_schema__(self, schema: core_schema.CoreSchema,
                                     handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        return _written_schema(schema, handler)


@dataclass(frozen=True, slots=True)
class Resolved:
    """Annotated marker: the field is typed as a scene file writes it; the resolved seed holds
    ``annotation``."""

    annotation: Any

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return _forms(handler(source), handler.generate_schema(self.annotation))

    def __get_pydantic_json_schema__(self, schema: core_schema.CoreSchema,
                                     handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        return _written_schema(schema, handler)
