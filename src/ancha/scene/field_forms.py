"""One scene-model field with two forms: as a scene file writes it, and as it resolves.

A tool keeps one set of scene models (its ``scene_file``): the file walker checks a scene
file against them, and the tool's ``build_world`` validates the resolved seed with the same
classes. Where a field's written and resolved values really differ (a time written as
``-3d`` and kept as a UTC datetime or epoch seconds, a duration written as ``1w`` and kept
as seconds, a label written as its name and kept as its model, a metric point kept as a
tuple), the field carries one of these ``Annotated`` markers:

- ``written(T)`` (a ``Written``) on a field typed as its resolved value: a scene file must
  hold ``T``, and a problem with the field reads as one with a ``T`` would (``Written`` is
  an ``Expect`` that describes ``T``);
- ``Resolved(T)`` on a field typed as its written value: the resolved seed holds ``T``.

The file walker validates every value strictly and pydantic validates the resolved seed
laxly, so each marker answers the written form in strict mode and the resolved one in lax
mode. The JSON Schema (``ancha schema scene``, a tool's docs page) shows the written form;
a dump (the scene's resolved JSON) serializes the resolved one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import core_schema

from ancha.config.validation import Expect, describe


def _forms(written: core_schema.CoreSchema, resolved: core_schema.CoreSchema) -> core_schema.CoreSchema:
    return core_schema.lax_or_strict_schema(
        lax_schema=resolved, strict_schema=written,
        # dumped as resolved (a lax-or-strict schema otherwise dumps by its strict side)
        serialization=core_schema.plain_serializer_function_ser_schema(lambda value: value,
                                                                        return_schema=resolved))


def _written_schema(schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
    assert schema["type"] == "lax-or-strict"
    return handler(schema["strict_schema"])


@dataclass(frozen=True, slots=True)
class Written(Expect):
    """Annotated marker: the field is typed as it is resolved; a scene file writes ``form``,
    and a problem with the field expects ``text`` (``written(form)`` describes ``form``)."""

    form: Any = None

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return _forms(handler.generate_schema(self.form), handler(source))

    def __get_pydantic_json_schema__(self, schema: core_schema.CoreSchema,
                                     handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        return _written_schema(schema, handler)


def written(form: Any) -> Written:
    """The ``Written`` marker of ``form``, read in problems as ``form`` would be."""
    return Written(describe(form, []), form)


@dataclass(frozen=True, slots=True)
class Resolved:
    """Annotated marker: the field is typed as a scene file writes it; the resolved seed holds
    ``form``."""

    form: Any

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return _forms(handler(source), handler.generate_schema(self.form))

    def __get_pydantic_json_schema__(self, schema: core_schema.CoreSchema,
                                     handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        return _written_schema(schema, handler)
