"""Check kinds, registered by key: each kind's module declares how it grades.

A check has exactly one kind (``trace``, ``state``, ``judge``, or a process kind); the
scene layer resolves its body (``ancha.scene.checks.CHECK_RESOLVERS``) and the module
that registers the kind here grades it. ``evaluate.evaluate_checks`` only looks kinds up.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ancha.scene.model import CheckSpec
    from ancha.world.environment import Environment


class Outcome(Protocol):
    passed: bool
    expected: str
    actual: str
    explanation: str
    evidence: list[int]


Grade = Callable[["CheckSpec", "Environment"], Outcome]
GRADERS: dict[str, Grade] = {}


def check_kind(*keys: str) -> Callable[[Grade], Grade]:
    """Register the decorated function as the grader of the check kinds ``keys``."""

    def register(grade: Grade) -> Grade:
        for key in keys:
            GRADERS[key] = grade
        return grade

    return register


def grader(kind: str) -> Grade:
    """The grader of ``kind`` (every kind module is loaded first)."""
    from ancha.checks import process, state, trace  # noqa: F401  (each registers its kinds)

    found = GRADERS.get(kind)
    if found is None:
        raise ValueError(f"no grader for check kind {kind}")
    return found
