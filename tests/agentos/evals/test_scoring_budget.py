"""Scoring has a total budget per run, and sizes are checked after operations that grow.

One expression is bounded by its own budget; a run's checks together by the run's
scoring budget (four expressions at their limit). Checks past it fail, saying so.
"""

from __future__ import annotations

import re

import pytest

from agentos.evals import ExpressionError, compile_expression, evaluate_checks
from agentos.evals.budget import MAX_COST, MAX_SCORING_COST

TOO_LARGE = re.escape("too large (more than 1,000,000 items or characters)")
# About 80% of one expression's budget: 55,000 comprehension iterations.
NEAR_LIMIT = "sum([1 for x in range(55000)]) == 55000"


@pytest.mark.parametrize(
    "source",
    [
        "('ﬃ' * 10**6).upper()",  # 1 million characters in, 3 million out
        "('ß' * 600000).upper()",  # SS: 1.2 million
        "('ß' * 600000).casefold()",
        "('ŉ' * 600000).upper()",
        "[('ﬃ' * 500000).upper()]",
    ],
)
def test_expression__a_string_method_that_grows_past_the_size_cap_is_refused(source):
    with pytest.raises(ExpressionError, match=TOO_LARGE):
        compile_expression(source).evaluate({})


def test_expression__a_string_method_that_grows_within_the_cap_still_works():
    assert len(compile_expression("('ﬃ' * 300000).upper()").evaluate({})) == 900_000


def test_scoring__checks_past_the_runs_budget_fail_with_a_detail_saying_so():
    checks = [{"name": f"heavy {i}", "type": "expression", "value": NEAR_LIMIT} for i in range(50)]
    checks.append({"name": "cheap", "type": "max_cost_usd", "value": 1})
    evals = evaluate_checks(checks, {"cost_usd": 0.0, "duration_ms": 0})
    results = evals["results"]
    assert evals["total"] == 51 and len(results) == 51
    evaluated = [r for r in results if not r["detail"].startswith("not evaluated")]
    # Each heavy check spends about 0.8 of one expression's budget: the run pays for 5 of them,
    # and the sixth runs out part way.
    assert MAX_SCORING_COST // MAX_COST + 1 <= len(evaluated) <= MAX_SCORING_COST // (MAX_COST // 2) + 1
    assert [r["passed"] for r in evaluated[:-1]] == [True] * (len(evaluated) - 1)
    assert evaluated[-1]["passed"] is False
    assert "the run's scoring budget" in evaluated[-1]["detail"] and "ran out during this check" in evaluated[-1]["detail"]
    skipped = results[len(evaluated):]
    assert skipped and all(r["passed"] is False for r in skipped)
    assert all(r["detail"].startswith("not evaluated: the run's scoring budget") for r in skipped)
    assert skipped[-1]["name"] == "cheap"
    assert evals["passed"] == len(evaluated) - 1


def test_scoring__a_run_with_ordinary_checks_is_untouched_by_the_budget():
    checks = [{"name": f"c{i}", "type": "expression", "value": "len(reply) > 3"} for i in range(50)]
    evals = evaluate_checks(checks, {"reply": "hello there", "cost_usd": 0.0, "duration_ms": 0})
    assert evals["passed"] == 50
