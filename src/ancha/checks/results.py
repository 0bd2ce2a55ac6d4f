"""What grading a check produces, and how a trial's results become its verdict."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

CheckStatus = Literal["passed", "failed", "skipped", "error"]
"""``error``: the check could not be graded (a judge model call failed); its trial is invalid."""


@dataclass(slots=True)
class CheckResult:
    """One check's outcome, with fields as in the checks reference (``Results``)."""

    id: str
    required: bool
    passed: bool
    status: CheckStatus
    expected: str
    actual: str
    explanation: str
    evidence: list[int] = field(default_factory=list)
    """Sequence numbers of the trace entries behind the result."""

    @classmethod
    def outcome(cls, id: str, required: bool, passed: bool, expected: str, actual: str,
                explanation: str, evidence: Iterable[int] = ()) -> CheckResult:
        """A graded (passed or failed) result: ``status`` follows from ``passed``."""
        return cls(id=id, required=required, passed=passed, status="passed" if passed else "failed",
                   expected=expected, actual=actual, explanation=explanation,
                   evidence=sorted(set(evidence)))

    @classmethod
    def skipped(cls, id: str, required: bool, expected: str, reason: str) -> CheckResult:
        """A check that was not graded; it never passes."""
        return cls(id=id, required=required, passed=False, status="skipped", expected=expected,
                   actual="not graded", explanation=reason, evidence=[])

    @classmethod
    def errored(cls, id: str, required: bool, expected: str, reason: str) -> CheckResult:
        """A check whose grading failed (a judge model call); it never passes, and its trial
        is invalid rather than failed."""
        return cls(id=id, required=required, passed=False, status="error", expected=expected,
                   actual="not graded: the grading failed", explanation=reason, evidence=[])

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "required": self.required,
            "passed": self.passed,
            "status": self.status,
            "expected": self.expected,
            "actual": self.actual,
            "explanation": self.explanation,
            "evidence": list(self.evidence),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CheckResult:
        raw = data.get("status") or ("passed" if data.get("passed") else "failed")
        statuses: dict[str, CheckStatus] = {"passed": "passed", "failed": "failed", "skipped": "skipped",
                                            "error": "error"}
        if raw not in statuses:
            raise ValueError(f"unknown check status {raw!r}")
        status = statuses[raw]
        return cls(
            id=str(data["id"]),
            required=bool(data.get("required", True)),
            passed=bool(data.get("passed", False)) and status == "passed",
            status=status,
            expected=str(data.get("expected", "")),
            actual=str(data.get("actual", "")),
            explanation=str(data.get("explanation", "")),
            evidence=[int(seq) for seq in data.get("evidence") or []],
        )


def trial_verdict(results: Iterable[CheckResult]) -> Literal["passed", "failed"]:
    """``passed`` when every required check passed; a skipped required check never passes."""
    for result in results:
        if result.required and not (result.passed and result.status == "passed"):
            return "failed"
    return "passed"
