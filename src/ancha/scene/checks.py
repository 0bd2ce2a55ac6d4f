"""checks and pass: one kind per check, trace patterns, slack.message refs, required ids."""

from __future__ import annotations

import re
from typing import Any

from pydantic import ValidationError

from ancha.config.validation import join
from ancha.scene.file_model import CheckFile, StateFile
from ancha.scene.model import CheckSpec, SlackMessageState, StateCheck, TraceCheck
from ancha.scene.refs import RefTable
from ancha.scene.sources import Source

_PATTERN = re.compile(r"^(\*|[A-Za-z*]+ /\S*)$")
_PATTERN_HINT = 'a pattern is "<METHOD> <PATH>" such as "POST /api/chat.postMessage" (METHOD letters or *), or "*"'
_KINDS = ("trace", "state", "judge")
_ALL_KINDS = (*_KINDS, *CheckFile.unsupported_fields)
_STATE_KINDS = ("slack.message", *StateFile.unsupported_fields)


def build_checks(items: list[dict[str, Any] | None], scene: Source, present: set[str],
                 refs: RefTable) -> tuple[list[CheckSpec], list[str]]:
    """Valid checks and every id written; ``present`` holds the paths of keys the file had."""
    checks: list[CheckSpec] = []
    ids: list[str] = []
    for i, data in enumerate(items):
        if data is None:  # invalid: already reported
            continue
        path = f"checks[{i}]"
        check_id = data.get("id")
        if isinstance(check_id, str):
            if check_id in ids:
                scene.add(f"{path}.id", f"duplicate check id {check_id}", "check ids are unique in a scene")
            else:
                ids.append(check_id)
        kinds = [k for k in _ALL_KINDS if join(path, k) in present]
        if not kinds:
            scene.add(path, "a check needs a kind", "kinds: state, trace, judge")
            continue
        if len(kinds) > 1:
            scene.add(path, f"a check has exactly one kind, got {', '.join(kinds)}", "split it into one check per kind")
            continue
        spec = _build(kinds[0], data, path, scene, present, refs)
        if spec is not None and isinstance(check_id, str):
            spec["id"] = check_id
            spec["line"] = scene.line_of(path)
            try:
                checks.append(CheckSpec.model_validate(spec))
            except ValidationError:
                pass
    return checks, ids


def _build(kind: str, data: dict[str, Any], path: str, scene: Source, present: set[str],
           refs: RefTable) -> dict[str, Any] | None:
    if data.get(kind) is None:
        if kind in data:
            scene.add(join(path, kind), "is empty", "write the check's condition here")
        return None  # otherwise refused (not supported yet) or invalid: already reported
    if kind == "judge":
        if not data["judge"].strip():
            scene.add(f"{path}.judge", "needs a rubric", "write what a good result looks like")
            return None
        return {"judge": data["judge"]}
    if kind == "trace":
        trace = _trace(data["trace"], f"{path}.trace", scene)
        return {"trace": trace} if trace is not None else None
    state = _state(data["state"], f"{path}.state", scene, present, refs)
    return {"state": state} if state is not None else None


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
            if not _PATTERN.match(pattern):
                where = join(path, name) if isinstance(value, str) else join(join(path, name), j)
                scene.add(where, f'expected a pattern such as "POST /api/chat.postMessage" or "*", got {pattern!r}',
                          _PATTERN_HINT)
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


def _state(data: dict[str, Any], path: str, scene: Source, present: set[str], refs: RefTable) -> StateCheck | None:
    kinds = [k for k in _STATE_KINDS if join(path, k) in present]
    if not kinds:
        scene.add(path, "needs a state kind", "supported now: slack.message")
        return None
    if len(kinds) > 1:
        scene.add(path, f"a state check has exactly one kind, got {', '.join(kinds)}",
                  "split it into one check per kind")
        return None
    body = data.get("slack_message")
    if body is None:
        return None
    sub = join(path, "slack.message")
    resolved: dict[str, Any] = {"count_gte": body.get("count_gte", 1), "text_contains": body.get("text_contains")}
    ok = True
    for field, kind in (("channel", "channel"), ("from_", "user"), ("in_thread_of", "message")):
        if body.get(field) is None:
            continue
        name = refs.resolve(body[field], kind, scene.reporter(join(sub, field.rstrip("_"))))
        ok = ok and name is not None
        resolved[field] = name
    if not ok or resolved.get("channel") is None:
        return None
    return StateCheck.model_validate({"slack.message": SlackMessageState.model_validate(resolved)})


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
