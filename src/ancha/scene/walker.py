"""The config Walker, taught one more shape scene files use: a plain value or a section.

``within.of`` is ``start`` or a milestone (a mapping): the mapping is walked as a
section, so each problem inside it keeps its own path and line.
"""

from __future__ import annotations

import types
import typing
from typing import Any, Union

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from ancha.config.validation import INVALID, Walker


def _split(annotation: Any) -> tuple[type[BaseModel] | None, Any]:
    """For a union holding one model: the model and the union of the rest."""
    if typing.get_origin(annotation) not in (Union, types.UnionType):
        return None, annotation
    args = typing.get_args(annotation)
    models = [a for a in args if isinstance(a, type) and issubclass(a, BaseModel)]
    if len(models) != 1 or len(args) < 2:
        return None, annotation
    rest = [a for a in args if a is not models[0]]
    return models[0], rest[0] if len(rest) == 1 else Union[tuple(rest)]  # noqa: UP007 - built at run time


class SceneWalker(Walker):
    def value(self, value: Any, model: type[BaseModel], name: str, info: FieldInfo, path: str,
              line: int | None) -> Any:
        section, rest = _split(info.annotation)
        if section is None:
            return super().value(value, model, name, info, path, line)
        self.lines[path] = line or 0
        if isinstance(value, dict):
            return self.section(value, section, path, line)
        result = self.typed(value, rest, list(info.metadata), path, line)
        return INVALID if result is INVALID else result
