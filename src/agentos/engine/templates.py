"""`{{var}}`, `{{input.key}}` and `{{state.var}}` substitution in prompts, URLs and bodies."""

from __future__ import annotations

import json
import re
from typing import Any

_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][\w-]*(?:\.[\w-]+)*)\s*\}\}")


def lookup(path: str, state: dict[str, Any], input: dict[str, Any]) -> Any:
    """The value a dotted path names; a missing one is None."""
    head, *rest = path.split(".")
    if head == "input":
        value: Any = input
    elif head == "state":
        value = state
    else:
        value = state.get(head)
    for part in rest:
        if isinstance(value, dict):
            value = value.get(part)
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return None
    return value


def render(template: str, state: dict[str, Any], input: dict[str, Any]) -> str:
    """Substitute every placeholder; missing values render as empty strings."""

    def replace(match: re.Match[str]) -> str:
        value = lookup(match.group(1), state, input)
        if value is None:
            return ""
        if isinstance(value, dict | list):
            return json.dumps(value)
        return str(value)

    return _PLACEHOLDER.sub(replace, template)


def render_value(value: Any, state: dict[str, Any], input: dict[str, Any]) -> Any:
    """Render every string inside a JSON value (for http bodies)."""
    if isinstance(value, str):
        return render(value, state, input)
    if isinstance(value, dict):
        return {k: render_value(v, state, input) for k, v in value.items()}
    if isinstance(value, list):
        return [render_value(v, state, input) for v in value]
    return value
