"""State checks: conditions on the final world, each kind defined by its tool.

A state body is ``{kind: body}`` (``<tool>.<kind>: {...}``); the tool registry finds the
tool that defines the kind, and that tool grades it on its own state.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ancha.checks.kinds import check_kind
from ancha.scene.model import CheckSpec, StateBody
from ancha.world.kernel.tool import StateOutcome
from ancha.world.registry import registry

if TYPE_CHECKING:
    from ancha.world.environment import Environment


def evaluate_state(state: StateBody, env: Environment) -> StateOutcome:
    if len(state) != 1:
        raise ValueError("a state check has exactly one kind")
    ((key, body),) = state.items()
    kinds = registry().states
    kind = kinds.get(key)
    if kind is None:
        raise ValueError(f"this build has no state check {key}; kinds: {', '.join(kinds)}")
    return kind.evaluate(body, env.tools.get(kind.body.tool), env)


@check_kind("state")
def grade_state(spec: CheckSpec, env: Environment) -> StateOutcome:
    assert spec.state is not None
    return evaluate_state(spec.state, env)
