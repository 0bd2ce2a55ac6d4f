"""AgentOS evaluations: the seven workflow check types and the safe expression language.

Pure Python, no server dependencies: the engine builds a context after a successful run
with :func:`build_context` and scores it with :func:`evaluate_checks`; the API validates
what users send with :func:`validate_checks`; condition and set nodes use
:func:`compile_expression`.
"""

from __future__ import annotations

from agentos.evals.checks import (
    CHECK_TYPES,
    MAX_CHECKS,
    CheckValidationError,
    CompiledCheck,
    build_context,
    compile_checks,
    evaluate_check,
    evaluate_checks,
    validate_checks,
)
from agentos.evals.expression import Expression, ExpressionError, compile_expression

__all__ = [
    "CHECK_TYPES",
    "MAX_CHECKS",
    "CheckValidationError",
    "CompiledCheck",
    "Expression",
    "ExpressionError",
    "build_context",
    "compile_checks",
    "compile_expression",
    "evaluate_check",
    "evaluate_checks",
    "validate_checks",
]
