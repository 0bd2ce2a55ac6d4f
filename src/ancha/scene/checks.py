"""checks and pass: one kind per check, trace patterns, state bodies, process checks, required ids.

Each check kind of the reference resolves through one entry of ``CHECK_RESOLVERS``
(its key, and how its body resolves); grading lives in ``ancha.checks``, registered by
the same keys. State bodies are the tools' own (``Catalog.states``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from ancha.config.validation import join
from ancha.scene.model import CHECK_KINDS, CheckSpec, TraceCheck
from ancha.scene.predicates import CALL_PATTERN_HINT as _PATTERN_HINT
from ancha.scene.predicates import PROCESS_RECORDS, Resolver, call_pattern_problem
from ancha.scene.sources import Source


def build_checks(items: list[dict[str, Any] | None], resolver: Resolver) -> tuple[list[CheckSpec], list[str]]:
    """Valid checks and every id written."""
    scene, present = resolver.source, resolver.present
    checks: list[CheckSpec] = []
    ids: list[str] = []
    for i, data in enumerate(items):
        if data is None:  # invalid: already reported
            continue
        path = f"checks[{i}]"
        check_id = data.get("id")
        if isinstance(check_id, str) and not check_id.strip():
            scene.add(f"{path}.id", "a check id cannot be empty", "name the check, such as id: replied-in-thread")
            check_id = None
        elif isinstance(check_id, str):
            if check_id in ids:
                scene.add(f"{path}.id", f"duplicate check id {check_id}", "check ids are unique in a scene")
            else:
                ids.append(check_id)
        kinds = [k for k in CHECK_KINDS if join(path, k) in present]
        if not kinds:
            scene.add(path, "a check needs a kind", f"kinds: {', '.join(CHECK_KINDS)}")
            continue
        if len(kinds) > 1:
            scene.add(path, f"a check has exactly one kind, got {', '.join(kinds)}", "split it into one check per kind")
            continue
        spec = _build(kinds[0], data, path, resolver)
        if spec is not None and isinstance(check_id, str):
            spec["id"] = check_id
            spec["line"] = scene.line_of(path)
            try:
                checks.append(CheckSpec.model_validate(spec))
            except ValidationError:
                pass
    return checks, ids


def _build(kind: str, data: dict[str, Any], path: str, resolver: Resolver) -> dict[str, Any] | None:
    scene = resolver.source
    if data.get(kind) is None:
        if kind in data:
            scene.add(join(path, kind), "is empty", "write the check's condition here")
        return None  # otherwise refused (not supported yet) or invalid: already reported
    value = CHECK_RESOLVERS[kind](data[kind], join(path, kind), resolver)
    return {kind: value} if value is not None else None


def _judge(rubric: str, path: str, resolver: Resolver) -> str | None:
    if not rubric.strip():
        resolver.add(path, "needs a rubric", "write what a good result looks like")
        return None
    return rubric


def _record(kind: str) -> Resolve:
    return lambda value, path, resolver: resolver.record(kind, value, path)


Resolve = Callable[[Any, str, Resolver], Any]

CHECK_RESOLVERS: dict[str, Resolve] = {
    "trace": lambda value, path, resolver: _trace(value, path, resolver.source),
    "state": lambda value, path, resolver: resolver.state(value, path, resolver.catalog.states, "state"),
    "judge": _judge,
    **{kind: _record(kind) for kind in PROCESS_RECORDS},
    "message": lambda value, path, resolver: resolver.selector(value, path, count=True),
    "never": lambda value, path, resolver: resolver.selector(value, path),
    "before": lambda value, path, resolver: resolver.predicates(value, path, 2),
    "within": lambda value, path, resolver: resolver.within(value, path),
}
"""How each check kind's body resolves, by the kind's key (``CHECK_KINDS``)."""


def _trace(data: dict[str, Any], path: str, scene: Source) -> TraceCheck | None:
    ok = True
    lists: dict[str, list[str]] = {}
    for name in ("called", "not_called"):
        value = data.get(name)
        if value is None:
            continue
        patterns = [value] if isinstance(value, str) else list(value)
        if not patterns:
            scene.add(join(path, name), "needs at least one pattern", _PATTERN_HINT)
            ok = False
        for j, pattern in enumerate(patterns):
            problem = call_pattern_problem(pattern)
            if problem is not None:
                scene.add(join(path, name) if isinstance(value, str) else join(join(path, name), j), *problem)
                ok = False
        lists[name] = patterns
    if "called" not in lists and "not_called" not in lists:
        scene.add(path, "needs called or not_called", 'for example called: "POST /api/chat.postMessage"')
        return None
    if data.get("status") is not None and "called" not in lists:
        scene.add(join(path, "status"), "only applies with called", "remove status, or add called")
        ok = False
    if not ok:
        return None
    return TraceCheck(called=lists.get("called", []), not_called=lists.get("not_called", []),
                      status=data.get("status"))


def required_ids(written: list[str] | None, ids: list[str], scene: Source) -> list[str]:
    """``pass`` as written (unknown ids are problems), or every check id when omitted."""
    if written is None:
        return list(ids)
    out: list[str] = []
    for j, check_id in enumerate(written):
        if check_id not in ids:
            hint = f"check ids: {', '.join(ids)}" if ids else "this scene has no checks"
            scene.add(f"pass[{j}]", f"unknown check id {check_id}", hint)
        elif check_id not in out:
            out.append(check_id)
    return out
