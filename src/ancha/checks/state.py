"""State checks: conditions on the final world, each kind defined by its tool.

A state body is ``{kind: body}`` (``<tool>.<kind>: {...}``); the tool registry finds the
tool that defines the kind, and that tool grades it on its own state.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ancha.checks.kinds import CheckKind
from ancha.scene.check_kinds import form
from ancha.scene.model import CheckSpec, StateBody
from ancha.world.kernel.tool import StateOutcome
from ancha.world.predicates import replica_for
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
    return kind.evaluate(body, replica_for(env, kind.body.tool), env)


def grade_state(spec: CheckSpec, env: Environment) -> StateOutcome:
    assert spec.state is not None
    return evaluate_state(spec.state, env)


def state_events(state: StateBody) -> frozenset[str]:
    """The bus events that can change a state body: those its tool's kind declares (none for a
    kind this build does not have: it is never graded)."""
    kinds = registry().states
    return frozenset().union(*(kinds[key].events for key in state if key in kinds))


def _events(spec: CheckSpec) -> frozenset[str]:
    assert spec.state is not None
    return state_events(spec.state)


STATE = CheckKind(form("state"), grade_state, _events)
"""``state``: a condition on the final world, graded by the tool that defines its kind."""
