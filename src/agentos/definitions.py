"""Validation of what users write for a workflow: its nodes, its gate and its environments.

Every problem is collected and reported at once (422), in the style of the check
validation: "Invalid workflow: node 'draft': 'model' is required; node 3: unknown node type 'x'".
"""

from __future__ import annotations

import math
import re
from typing import Any

from agentos.errors import Unprocessable
from agentos.evals.expression import ExpressionError, compile_expression

NODE_TYPES = ("llm", "condition", "set", "http")
PROVIDERS = ("openai", "anthropic", "mock")
HTTP_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")


class DefinitionError(Unprocessable):
    def __init__(self, problems: list[str]) -> None:
        super().__init__("Invalid workflow: " + "; ".join(problems))
        self.problems = problems


def validate_nodes(nodes: Any) -> list[dict[str, Any]]:
    """Return the nodes unchanged if they form a valid graph, else raise DefinitionError."""
    if not isinstance(nodes, list):
        raise DefinitionError(["nodes must be a list"])
    problems: list[str] = []
    ids: set[str] = set()
    for position, node in enumerate(nodes, start=1):
        if not isinstance(node, dict):
            problems.append(f"node {position}: must be an object")
            continue
        node_id = node.get("id")
        if not isinstance(node_id, str) or not node_id:
            problems.append(f"node {position}: 'id' is required")
        elif node_id in ids:
            problems.append(f"node {position}: duplicate node id '{node_id}'")
        else:
            ids.add(node_id)
    for position, node in enumerate(nodes, start=1):
        if not isinstance(node, dict):
            continue
        label = f"node '{node['id']}'" if isinstance(node.get("id"), str) and node["id"] else f"node {position}"
        problems.extend(f"{label}: {p}" for p in _node_problems(node, ids))
    if problems:
        raise DefinitionError(problems)
    return nodes


def _node_problems(node: dict[str, Any], ids: set[str]) -> list[str]:
    problems: list[str] = []
    kind = node.get("type")
    if kind is None:
        problems.append("'type' is required")
    elif kind not in NODE_TYPES:
        problems.append(f"unknown node type '{kind}' (expected one of {', '.join(NODE_TYPES)})")
    problems.extend(_jump_problems(node, "next", ids))
    if kind == "llm":
        for field in ("model", "prompt", "output"):
            if not isinstance(node.get(field), str) or not node.get(field):
                problems.append(f"'{field}' is required")
        provider = node.get("provider", "openai")
        if provider not in PROVIDERS:
            problems.append(f"unknown provider '{provider}' (expected one of {', '.join(PROVIDERS)})")
        if "system" in node and node["system"] is not None and not isinstance(node["system"], str):
            problems.append("'system' must be a string")
        temperature = node.get("temperature")
        if temperature is not None and not _is_number(temperature):
            problems.append("'temperature' must be a number")
        max_tokens = node.get("max_tokens")
        if max_tokens is not None and (not isinstance(max_tokens, int) or isinstance(max_tokens, bool)
                                       or max_tokens < 1):
            problems.append("'max_tokens' must be a positive integer")
        if provider == "mock":
            problems.extend(_mock_problems(node.get("responses")))
    elif kind == "condition":
        problems.extend(_expression_problems(node.get("expression"), "'expression'"))
        if "then" not in node:
            problems.append("'then' is required")
        problems.extend(_jump_problems(node, "then", ids))
        problems.extend(_jump_problems(node, "else", ids))
    elif kind == "set":
        values = node.get("values")
        if not isinstance(values, dict) or not values:
            problems.append("'values' is required (an object of variable: expression)")
        else:
            for var, source in values.items():
                problems.extend(_expression_problems(source, f"value '{var}'"))
    elif kind == "http":
        if not isinstance(node.get("url"), str) or not node.get("url"):
            problems.append("'url' is required")
        if not isinstance(node.get("output"), str) or not node.get("output"):
            problems.append("'output' is required")
        method = node.get("method", "GET")
        if not isinstance(method, str) or method.upper() not in HTTP_METHODS:
            problems.append(f"unknown method '{method}' (expected one of {', '.join(HTTP_METHODS)})")
        headers = node.get("headers")
        if headers is not None and not isinstance(headers, dict):
            problems.append("'headers' must be an object")
    return problems


def _jump_problems(node: dict[str, Any], field: str, ids: set[str]) -> list[str]:
    target = node.get(field)
    if target is None:
        return []
    if not isinstance(target, str) or target not in ids:
        return [f"'{field}' points to unknown node '{target}'"]
    return []


def _expression_problems(source: Any, what: str) -> list[str]:
    if not isinstance(source, str) or not source.strip():
        return [f"{what} is required (an expression)"]
    try:
        compile_expression(source)
    except ExpressionError as exc:
        return [f"{what}: invalid expression ({exc})"]
    return []


def _mock_problems(responses: Any) -> list[str]:
    if not isinstance(responses, list) or not responses:
        return ["'responses' is required for the mock provider (a non-empty list)"]
    problems = []
    for i, response in enumerate(responses, start=1):
        if isinstance(response, str):
            continue
        if not isinstance(response, dict) or not (
            isinstance(response.get("text"), str) or isinstance(response.get("error"), str)
        ):
            problems.append(f"response {i}: must be a string or an object with 'text' (or 'error')")
    return problems


GATE_SHAPE = ('expected {"min_pass_rate": a number from 0 to 1, "ancha": {"scenes": [scene names],'
              ' "min_pass_rate": a number from 0 to 1}} (each part optional) or null')
GATE_FIELDS = {"min_pass_rate", "ancha", "scorers"}
_SCENE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


def validate_gate(gate: Any) -> dict[str, Any] | None:
    """A gate is null or {"min_pass_rate": fraction 0..1}, and may also require a pass rate of
    Ancha scenes on the release's commit: {"ancha": {"scenes": [...], "min_pass_rate": ...}}
    (the uploaded run of that commit is the evaluation; ``agentos.releases``), and scorers'
    mean scores in the evaluation: {"scorers": {"tone": 0.8}}."""
    if gate is None:
        return None
    if not isinstance(gate, dict) or not set(gate) <= GATE_FIELDS:
        unknown = sorted(set(gate) - GATE_FIELDS) if isinstance(gate, dict) else []
        where = f"unknown field gate.{unknown[0]}: " if unknown else ""
        raise Unprocessable(f"Invalid gate: {where}{GATE_SHAPE}")
    checked: dict[str, Any] = {}
    rate: Any = gate.get("min_pass_rate")
    if rate is not None:
        if not (_is_number(rate) and 0 <= rate <= 1):
            raise Unprocessable(f"Invalid gate: {GATE_SHAPE}")
        checked["min_pass_rate"] = float(rate)
    if gate.get("ancha") is not None:
        checked["ancha"] = _ancha_gate(gate["ancha"])
    if gate.get("scorers") is not None:
        checked["scorers"] = _scorers_gate(gate["scorers"])
    return checked or None


SCORERS_GATE_SHAPE = ('gate.scorers must be an object of scorer name: the lowest mean score allowed (from 0 to'
                      ' 1), such as {"tone": 0.8}')


def _scorers_gate(part: Any) -> dict[str, float]:
    """{scorer name: min mean}: the latest completed evaluation of the released version must
    have scored with each named scorer, and its mean must reach the minimum."""
    if not isinstance(part, dict) or not part:
        raise Unprocessable(f"Invalid gate: {SCORERS_GATE_SHAPE}")
    problems = [f"gate.scorers.{name}: must be a number from 0 to 1" for name, low in part.items()
                if not (_is_number(low) and 0 <= low <= 1)]
    if problems:
        raise Unprocessable("Invalid gate: " + "; ".join(problems) + f" ({SCORERS_GATE_SHAPE})")
    return {name: float(low) for name, low in part.items()}


def _ancha_gate(part: Any) -> dict[str, Any]:
    if not isinstance(part, dict):
        raise Unprocessable(f"Invalid gate: gate.ancha must be an object; {GATE_SHAPE}")
    unknown = sorted(set(part) - {"scenes", "min_pass_rate"})
    if unknown:
        raise Unprocessable(f"Invalid gate: unknown field gate.ancha.{unknown[0]}; {GATE_SHAPE}")
    scenes = part.get("scenes")
    if not isinstance(scenes, list) or not scenes or len(scenes) > 500 or \
            not all(isinstance(n, str) and _SCENE_NAME.match(n) for n in scenes) or len(set(scenes)) != len(scenes):
        raise Unprocessable("Invalid gate: gate.ancha.scenes must list 1 to 500 different scene names"
                            " (as the scene files name them)")
    rate: Any = part.get("min_pass_rate")
    if not (_is_number(rate) and 0 <= rate <= 1):
        raise Unprocessable("Invalid gate: gate.ancha.min_pass_rate must be a number from 0 to 1")
    return {"scenes": list(scenes), "min_pass_rate": float(rate)}


ENVIRONMENT_NAME = re.compile(r"^[A-Za-z0-9_-]{1,100}$")
MAX_ENVIRONMENTS = 20
ENVIRONMENTS_SHAPE = ('expected a list of environment names such as ["staging", "production"] (letters, digits,'
                      f' - and _, at most 100 characters each, at most {MAX_ENVIRONMENTS} names) or null')


def validate_environments(environments: Any) -> list[str] | None:
    """The environments a workflow declares (see ``agentos.deployments``), or None when it
    declares none: null and [] both mean none, the reference's behaviour (runs run the
    current version). Every problem is reported at once, naming the place."""
    if environments is None:
        return None
    if not isinstance(environments, list):
        raise DefinitionError([f"environments: {ENVIRONMENTS_SHAPE}"])
    problems: list[str] = []
    if len(environments) > MAX_ENVIRONMENTS:
        problems.append(f"environments: at most {MAX_ENVIRONMENTS} names, got {len(environments)}")
    seen: set[str] = set()
    for position, name in enumerate(environments, start=1):
        if not isinstance(name, str) or not ENVIRONMENT_NAME.match(name):
            problems.append(f"environment {position}: {name!r} is not an environment name (letters, digits,"
                            " - and _, 1 to 100 characters)")
        elif name in seen:
            problems.append(f"environment {position}: '{name}' is declared twice")
        else:
            seen.add(name)
    if problems:
        raise DefinitionError(problems)
    return list(environments) or None


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
