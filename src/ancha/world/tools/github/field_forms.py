"""One scene-model field with two forms: as a scene file writes it, and as it resolves.

``world.github`` has one set of models (``scene_file``): the file walker checks a scene
file against them, and ``build_world`` validates the resolved seed with the same classes.
Where a field's written and resolved values really differ (a time written as ``-3d`` and
kept as a UTC datetime, a label written as its name and kept as a ``LabelFile``), the
field is typed as it resolves and carries ``Written``, the form a file writes.

The file walker validates every value strictly and pydantic validates the resolved seed
laxly, so ``Written`` answers the written form in strict mode and the resolved one in lax
mode. The JSON Schema (``ancha schema scene``, the tool's docs page) shows the written
form; a dump (the scene's resolved JSON) serializes the resolved one. As an ``Expect``,
it says in problems what the written form reads as.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import core_schema

from ancha.config.validation import Expect, describe


@dataclass(frozen=True, slots=True)
class Written(Expect):
    """Annotated marker: the field is typed as it is resolved; a scene file writes ``form``."""

    form: Any = None

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        resolved = handler(source)
        return core_schema.lax_or_strict_schema(
            lax_schema=resolved, strict_schema=handler.generate_schema(self.form),
            # dumped as resolved (a lax-or-strict schema otherwise dumps by its strict side)
            serialization=core_schema.wrap_serializer_function_ser_schema(lambda value, dump: dump(value),
                                                                           schema=resolved))

    def __get_pydantic_json_schema__(self, schema: core_schema.CoreSchema,
                                     handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        assert schema["type"] == "lax-or-strict"
        return handler(schema["strict_schema"])


def written(form: Any) -> Written:
    """The ``Written`` marker of ``form``, read in problems as ``form`` would be."""
    return Written(describe(form, []), form)
