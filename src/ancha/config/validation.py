"""Checking a YAML tree against pydantic models, collecting every problem at once.

Pydantic's own errors are close but not the product's wording ("expected a positive
integer, got 0", "did you mean agent.execution? Put it under agent:"), and a single
bad field must not hide the others, so the tree is walked field by field: each value
is validated alone (strictly, so ``"5"`` is not a number and ``8080`` is not a
string), unknown keys get "did you mean" hints, and the walk yields the valid part as
plain data plus the line of every path it saw.
"""

from __future__ import annotations

import difflib
import math
import types
import typing
from dataclasses import dataclass
from functools import cache
from typing import Any, ClassVar, Literal, Union

import annotated_types
from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic.fields import FieldInfo

from ancha.config.yaml_source import key_line, plain, show
from ancha.durations import EXAMPLES, DurationTooLong, format_duration, parse_duration
from ancha.errors import Problem


@dataclass(frozen=True, slots=True)
class Expect:
    """Annotated marker: how a field's expected value reads in a problem ("a positive integer")."""

    text: str


@dataclass(frozen=True, slots=True)
class DurationText:
    """Annotated marker: the file must hold a duration string such as ``10s``; ``above`` and
    ``at_most`` (seconds) narrow the range every duration has (at most ``MAX_SECONDS``)."""

    above: float | None = None
    at_most: float | None = None


DURATION_EXPECTED = f"a duration such as {EXAMPLES}"
INVALID: Any = object()


class FileModel(BaseModel):
    """Base of models that describe a file's sections: keys they refuse for now, with why."""

    unsupported_fields: ClassVar[dict[str, str]] = {}


def join(path: str, key: object) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else str(key)


def parent(path: str) -> str:
    return path.rsplit(".", 1)[0] if "." in path else ""


def file_fields(model: type[BaseModel]) -> dict[str, tuple[str, FieldInfo]]:
    """Keys a file may use for ``model``, in declaration order: alias -> (attribute, field)."""
    out: dict[str, tuple[str, FieldInfo]] = {}
    for name, info in model.model_fields.items():
        if info.exclude:
            continue
        out[info.alias or name] = (name, info)
    return out


def _unwrap_optional(annotation: Any) -> tuple[Any, bool]:
    origin = typing.get_origin(annotation)
    if origin in (Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        optional = len(args) < len(typing.get_args(annotation))
        if len(args) == 1:
            return args[0], optional
        return Union[tuple(args)], optional  # noqa: UP007 - built at run time
    return annotation, False


def _model_of(annotation: Any) -> type[BaseModel] | None:
    return annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None


def section_paths(model: type[BaseModel], path: str = "") -> list[str]:
    """Dotted paths of every field of ``model`` and of its nested (mapping) sections."""
    out: list[str] = []
    for key, (_, info) in file_fields(model).items():
        sub = join(path, key)
        out.append(sub)
        inner, _ = _unwrap_optional(info.annotation)
        nested = _model_of(inner)
        if nested is not None:
            out.extend(section_paths(nested, sub))
    return out


def suggest(key: str, path: str, known: list[str], everywhere: list[str]) -> str:
    """The hint for an unknown ``key`` in the section at ``path``."""
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.7)
    if close:
        return f"did you mean {join(path, close[0])}?"
    elsewhere = [p for p in everywhere if parent(p) != path]
    leaves = [p.rsplit(".", 1)[-1] for p in elsewhere]
    close = difflib.get_close_matches(key, leaves, n=1, cutoff=0.8)
    if close:
        target = elsewhere[leaves.index(close[0])]
        home = parent(target)
        where = f"Put it under {home}:" if home else "Put it at the top level."
        return f"did you mean {target}? {where}"
    return f"known fields of {path}: {', '.join(known)}" if path else f"known fields: {', '.join(known)}"


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


MAX_SAFE_INTEGER = 2**53
"""Numbers a file holds where no range is given are finite and at most this in size (JSON-safe)."""


def _finite_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _unsafe_number(value: Any) -> str | None:
    """Why a number somewhere in ``value`` cannot be kept (infinite, NaN, or past 2**53), or None."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, bool) or item is None or isinstance(item, str):
            continue
        if isinstance(item, float) and not math.isfinite(item):
            return f"expected a finite number, got {item}"
        if isinstance(item, (int, float)) and abs(item) > MAX_SAFE_INTEGER:
            return f"expected a number of at most {MAX_SAFE_INTEGER:,} in size, got {show(item)}"
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return None


def _upper_bound(metadata: list[Any], annotation: Any) -> float | None:
    annotation, _ = _unwrap_optional(annotation)
    if typing.get_origin(annotation) is typing.Annotated:
        metadata = [*metadata, *typing.get_args(annotation)[1:]]
    items = [x for m in metadata for x in (m.metadata if isinstance(m, FieldInfo) else [m])]
    return next((float(m.le) for m in items if isinstance(m, annotated_types.Le)), None)  # type: ignore[arg-type]


def _out_of_range(seconds: float, markers: list[DurationText]) -> str | None:
    """'expected a duration of at most 1d' when ``seconds`` is outside a marker's range, or None."""
    for marker in markers:
        if marker.above is not None and not seconds > marker.above:
            return f"expected a duration of more than {format_duration(marker.above)}"
        if marker.at_most is not None and seconds > marker.at_most:
            return f"expected a duration of at most {format_duration(marker.at_most)}"
    return None


def describe(annotation: Any, metadata: list[Any]) -> str:
    """How the expected value of a field reads: 'a positive integer', 'one of feed, http, socket'."""
    for item in metadata:
        if isinstance(item, Expect):
            return item.text
        if isinstance(item, DurationText):
            return DURATION_EXPECTED
    metadata = [x for m in metadata for x in (m.metadata if isinstance(m, FieldInfo) else [m])]
    annotation, _ = _unwrap_optional(annotation)
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        base, *extra = typing.get_args(annotation)
        return describe(base, [*extra, *metadata])
    if origin is Literal:
        return "one of " + ", ".join(str(a) for a in typing.get_args(annotation))
    if origin in (Union, types.UnionType):
        return " or ".join(describe(a, []) for a in typing.get_args(annotation))
    low = next((m.gt if isinstance(m, annotated_types.Gt) else m.ge for m in metadata
                if isinstance(m, (annotated_types.Gt, annotated_types.Ge))), None)
    high = next((m.le for m in metadata if isinstance(m, annotated_types.Le)), None)
    gt_zero = any(isinstance(m, annotated_types.Gt) and m.gt == 0 for m in metadata)
    if annotation is bool:
        return "true or false"
    if annotation in (int, float):
        noun = "an integer" if annotation is int else "a number"
        if gt_zero and annotation is float and high is not None:
            return f"a number above 0 and at most {_number(high)}"  # type: ignore[arg-type]
        if gt_zero:  # past an upper bound reads "expected at most N" (see Walker.scalar)
            return "a positive integer" if annotation is int else "a positive number"
        if low is not None and high is not None:
            return f"{noun} from {_number(low)} to {_number(high)}"  # type: ignore[arg-type]
        return noun
    if annotation is str:
        return "a string"
    if origin is list:
        (item,) = typing.get_args(annotation) or (Any,)
        return "a list" if item is Any else f"a list of {describe(item, []).removeprefix('a ')}s"
    if origin is dict:
        return "a mapping"
    return "a valid value"


def _adapter(annotation: Any, metadata: tuple[Any, ...]) -> TypeAdapter[Any]:
    try:
        return _cached_adapter(annotation, metadata)
    except TypeError:  # unhashable metadata
        return _build_adapter(annotation, metadata)


def _build_adapter(annotation: Any, metadata: tuple[Any, ...]) -> TypeAdapter[Any]:
    if metadata:
        annotation = typing.Annotated[(annotation, *metadata)]
    return TypeAdapter(annotation)


_cached_adapter = cache(_build_adapter)


class Walker:
    """Walks one YAML tree against a root model; ``problems`` and ``lines`` fill in as it goes."""

    def __init__(self, root: type[BaseModel], file: str | None = None) -> None:
        self.file = file
        self.problems: list[Problem] = []
        self.lines: dict[str, int] = {}
        self.everywhere = section_paths(root)

    def problem(self, path: str, message: str, hint: str | None = None, line: int | None = None) -> None:
        self.problems.append(Problem(path, message, hint, line, self.file))

    def section(self, node: Any, model: type[BaseModel], path: str = "", line: int | None = None) -> Any:
        """The valid fields of ``node`` as a dict keyed by attribute name, or INVALID."""
        if path or line is not None:
            self.lines.setdefault(path, line or 0)
        if not isinstance(node, dict):
            self.problem(path, f"expected a mapping, got {show(node)}", None, line)
            return INVALID
        fields = file_fields(model)
        unsupported: dict[str, str] = getattr(model, "unsupported_fields", {})
        refuses = any(isinstance(k, str) and k in unsupported for k in node)
        clean: dict[str, Any] = {}
        for key, value in node.items():
            sub = join(path, str(key))
            at = key_line(node, key) or line
            self.lines.setdefault(sub, at or 0)
            if isinstance(key, str) and key in unsupported:
                self.problem(sub, "not supported yet", unsupported[key], at)
            elif not isinstance(key, str) or key not in fields:
                if not refuses:
                    self.problem(sub, "unknown field", suggest(str(key), path, list(fields), self.everywhere), at)
            else:
                name, info = fields[key]
                result = self.value(value, model, name, info, sub, at)
                if result is not INVALID:
                    clean[name] = result
        for key, (_, info) in fields.items():
            if info.is_required() and key not in node and not refuses:
                self.problem(join(path, key), "missing required field", None, line)
        return clean

    def value(self, value: Any, model: type[BaseModel], name: str, info: FieldInfo, path: str,
              line: int | None) -> Any:
        self.lines[path] = line or 0
        inner, optional = _unwrap_optional(info.annotation)
        if value is None and optional:
            return None
        nested = _model_of(inner)
        if nested is not None:
            return self.section(value, nested, path, line)
        return self.typed(value, info.annotation, list(info.metadata), path, line)

    def typed(self, value: Any, annotation: Any, metadata: list[Any], path: str, line: int | None) -> Any:
        """``value`` checked against ``annotation``; lists and mappings item by item, so each bad
        item is reported at its own path and does not hide the others."""
        inner, optional = _unwrap_optional(annotation)
        if value is None and optional:
            return None
        origin = typing.get_origin(inner)
        if origin is not list and origin is not dict:
            return self.scalar(value, annotation, metadata, path, line)
        if not isinstance(value, list if origin is list else dict):
            self.problem(path, f"expected {describe(annotation, metadata)}, got {show(value)}", None, line)
            return INVALID
        item_type = typing.get_args(inner)[-1] if typing.get_args(inner) else Any
        item_model = _model_of(item_type)
        pairs = list(value.items()) if isinstance(value, dict) else list(enumerate(value))
        items: list[tuple[Any, Any]] = []
        failed = False
        for key, item in pairs:
            sub = join(path, key if origin is list else str(key))
            at = key_line(value, key) or line
            self.lines[sub] = at or 0
            if origin is dict and not isinstance(key, str):
                self.problem(sub, f"expected a name, got {show(key)}", None, at)
                failed = True
                continue
            if item_model is not None:
                result = self.section(item, item_model, sub, at)
                # keep positions (None for an invalid item): later checks name items by index
                items.append((key, None if result is INVALID else result))
                continue
            result = self.typed(item, item_type, [], sub, at)
            failed = failed or result is INVALID
            items.append((key, result))
        if failed:
            return INVALID
        return [v for _, v in items] if origin is list else dict(items)

    def scalar(self, value: Any, annotation: Any, metadata: list[Any], path: str, line: int | None) -> Any:
        self._record_lines(value, path, line)
        expected = describe(annotation, metadata)
        durations = [m for m in metadata if isinstance(m, DurationText)]
        if durations:
            try:
                if not isinstance(value, str):
                    raise ValueError
                seconds = parse_duration(value)
            except DurationTooLong as exc:
                bound = next((m.at_most for m in durations if m.at_most is not None), None)
                message = str(exc) if bound is None else \
                    f"expected a duration of at most {format_duration(bound)}, got {show(value)}"
                self.problem(path, message, None, line)
                return INVALID
            except ValueError:
                self.problem(path, f"expected {expected}, got {show(value)}", None, line)
                return INVALID
            wrong = _out_of_range(seconds, durations)
            if wrong:
                self.problem(path, f"{wrong}, got {show(value)}", None, line)
                return INVALID
            return str(value)
        data = plain(value)
        try:
            _adapter(annotation, tuple(metadata)).validate_python(data, strict=True)
        except ValidationError:
            hint = None
            if expected == "a string" and isinstance(data, (int, float)) and not isinstance(data, bool):
                hint = f'quote it: "{data}"'
            high = _upper_bound(metadata, annotation)
            if high is not None and _finite_number(data) and data > high and _number(high) not in expected:
                self.problem(path, f"expected at most {_number(high)}, got {show(value)}", None, line)
            else:
                self.problem(path, f"expected {expected}, got {show(value)}", hint, line)
            return INVALID
        unsafe = _unsafe_number(data)
        if unsafe:
            self.problem(path, unsafe, "numbers are finite and at most 2**53 in size", line)
            return INVALID
        return data

    def _record_lines(self, node: Any, path: str, line: int | None) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                sub = join(path, str(key))
                at = key_line(node, key) or line
                self.lines[sub] = at or 0
                self._record_lines(value, sub, at)
        elif isinstance(node, list):
            for i, value in enumerate(node):
                sub = join(path, i)
                at = key_line(node, i) or line
                self.lines[sub] = at or 0
                self._record_lines(value, sub, at)

    def line_of(self, path: str) -> int | None:
        """The line recorded for ``path`` or its nearest ancestor."""
        while True:
            if self.lines.get(path):
                return self.lines[path]
            if not path:
                return None
            cut = max(path.rfind("."), path.rfind("["))
            path = path[:cut] if cut > 0 else ""
