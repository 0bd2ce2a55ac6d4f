"""checks and pass: one kind per check, each resolved by its form, and the required ids.

Each check kind of the reference resolves through its ``CheckForm``
(``ancha.scene.check_kinds``); grading lives in the ``CheckKind`` that ``ancha.checks``
builds from the same form. State bodies are the tools' own (``Catalog.states``).
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from ancha.config.validation import join
from ancha.scene.check_kinds import CHECK_FORMS, CHECK_KEYS, CheckForm
from ancha.scene.model import CheckSpec
from ancha.scene.predicates import Resolver
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
        kinds = [form for form in CHECK_FORMS if join(path, form.key) in present]
        if not kinds:
            scene.add(path, "a check needs a kind", f"kinds: {', '.join(CHECK_KEYS)}")
            continue
        if len(kinds) > 1:
            scene.add(path, f"a check has exactly one kind, got {', '.join(k.key for k in kinds)}",
                      "split it into one check per kind")
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


def _build(form: CheckForm, data: dict[str, Any], path: str, resolver: Resolver) -> dict[str, Any] | None:
    key = form.key
    if data.get(key) is None:
        if key in data:
            resolver.add(join(path, key), "is empty", "write the check's condition here")
        return None  # otherwise refused (not supported yet) or invalid: already reported
    value = form.resolve(data[key], join(path, key), resolver)
    return {key: value} if value is not None else None


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
