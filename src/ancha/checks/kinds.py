"""Check kinds: each one ``CheckKind`` object, from its form to its grade.

A check has exactly one kind (``trace``, ``state``, ``judge``, or a process kind). Its
``CheckForm`` (``ancha.scene.check_kinds``) says how it is written, resolved and where it
works; the ``CheckKind`` built from it, in the module that grades it (``trace.py``,
``state.py``, ``judge.py``, ``process.py``), adds how it grades and which bus events can
change it. Scene and task validation, grading and the docs tables all read these objects;
``evaluate.evaluate_checks`` only looks kinds up.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Protocol

from ancha.checks.results import CheckResult
from ancha.scene.check_kinds import CHECK_KEYS, CheckForm

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
"""Grades a check on the world as it is now; ``ValueError`` or ``LookupError`` when it
cannot be graded in this world (the check then fails, saying why)."""


@dataclass(frozen=True)
class AfterTrial:
    """A kind graded after the trial, off the world: the server reports its checks skipped,
    and ``by`` grades them (the runner grades judge checks with the user's own key)."""

    by: str
    reason: str
    """The skipped result's explanation."""
    expected: Callable[[CheckSpec], str]
    """What the check expects, said before it is graded."""


@dataclass(frozen=True)
class CheckKind:
    """One check kind: its form (key, file model, resolution, where it works, docs rows), how
    it grades, and which bus events can change its result."""

    form: CheckForm
    grade: Grade | AfterTrial
    """How the world grades it now, or who grades it after the trial."""
    events: Callable[[CheckSpec], frozenset[str]]
    """The bus event types after which grading a check of this kind again may answer
    differently (``*``: any event); empty when the world never changes it."""

    @property
    def key(self) -> str:
        return self.form.key

    @property
    def after_trial(self) -> AfterTrial | None:
        return self.grade if isinstance(self.grade, AfterTrial) else None

    def result(self, spec: CheckSpec, env: Environment, required: bool) -> CheckResult:
        """``spec`` graded on ``env`` as it is now (skipped when graded after the trial)."""
        if isinstance(self.grade, AfterTrial):
            return CheckResult.skipped(spec.id, required, self.grade.expected(spec), self.grade.reason)
        try:
            outcome = self.grade(spec, env)
        except (ValueError, LookupError) as exc:  # a check the loader let through but cannot be graded: say so
            reason = str(exc.args[0]) if exc.args else str(exc)
            return CheckResult.outcome(spec.id, required, False, f"check {spec.id} to be gradable",
                                       f"it could not be graded: {reason}",
                                       f"Failed: check {spec.id} could not be graded: {reason}.")
        return CheckResult.outcome(spec.id, required, outcome.passed, outcome.expected, outcome.actual,
                                   outcome.explanation, outcome.evidence)


def never_changes(spec: CheckSpec) -> frozenset[str]:
    """The events of a kind the world never changes (graded after the trial)."""
    return frozenset()


@cache
def check_kinds() -> dict[str, CheckKind]:
    """Every check kind of this build, by key, in the order of ``CHECK_FORMS``; a form
    without a kind (or a kind without a form) is a ``TypeError``."""
    from ancha.checks.judge import JUDGE
    from ancha.checks.process import PROCESS_KINDS
    from ancha.checks.state import STATE
    from ancha.checks.trace import TRACE

    kinds = {kind.key: kind for kind in (TRACE, STATE, JUDGE, *PROCESS_KINDS)}
    if sorted(kinds) != sorted(CHECK_KEYS):
        raise TypeError(f"the check kinds {sorted(kinds)} are not the forms {sorted(CHECK_KEYS)}")
    return {key: kinds[key] for key in CHECK_KEYS}


def check_kind(key: str) -> CheckKind:
    """The check kind ``key`` (``ValueError`` when there is none)."""
    found = check_kinds().get(key)
    if found is None:
        raise ValueError(f"no grader for check kind {key}")
    return found
