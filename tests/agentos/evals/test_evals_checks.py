"""Scoring checks: every example of the reference's Evaluations page, to the character."""

from __future__ import annotations

from agentos.evals import build_context, evaluate_check, evaluate_checks, validate_checks

REPLY = "We'll process your refund today."


def _result(check: dict, context: dict) -> tuple[bool, str]:
    result = evaluate_check(check, context)
    return result["passed"], result["detail"]


# contains & not_contains ------------------------------------------------------


def test_contains__reference_example() -> None:
    check = {"name": "mentions refund", "type": "contains", "target": "draft_reply", "value": "refund"}
    assert _result(check, {"draft_reply": REPLY}) == (True, "'draft_reply' contains 'refund'")


def test_not_contains__reference_example() -> None:
    check = {"name": "no stack trace", "type": "not_contains", "target": "draft_reply", "value": "Traceback"}
    assert _result(check, {"draft_reply": REPLY}) == (True, "'draft_reply' does not contain 'Traceback'")


def test_not_contains__fails_when_found() -> None:
    check = {"name": "no stack trace", "type": "not_contains", "target": "draft_reply", "value": "Traceback"}
    context = {"draft_reply": "Traceback (most recent call last): ..."}
    assert _result(check, context) == (False, "'draft_reply' contains 'Traceback'")


def test_contains__folds_case_by_default() -> None:
    check = {"name": "n", "type": "contains", "target": "draft_reply", "value": "REFUND"}
    assert _result(check, {"draft_reply": REPLY}) == (True, "'draft_reply' contains 'REFUND'")


def test_contains__folds_case_fully_not_just_lower() -> None:
    check = {"name": "n", "type": "contains", "target": "city", "value": "STRASSE"}
    assert _result(check, {"city": "Hauptstraße 5"})[0] is True


def test_contains__case_sensitive_when_asked() -> None:
    check = {
        "name": "n",
        "type": "contains",
        "target": "draft_reply",
        "value": "REFUND",
        "case_sensitive": True,
    }
    assert _result(check, {"draft_reply": REPLY}) == (False, "'draft_reply' does not contain 'REFUND'")


def test_contains__missing_target_reads_empty_and_says_so() -> None:
    check = {"name": "n", "type": "contains", "target": "draft_reply", "value": "refund"}
    assert _result(check, {"reply": REPLY}) == (
        False,
        "'draft_reply' does not contain 'refund' (no 'draft_reply' in output)",
    )


def test_not_contains__missing_target_passes_but_is_annotated() -> None:
    check = {"name": "n", "type": "not_contains", "target": "draft", "value": "Traceback"}
    assert _result(check, {}) == (True, "'draft' does not contain 'Traceback' (no 'draft' in output)")


def test_contains__objects_read_as_json() -> None:
    check = {"name": "n", "type": "contains", "target": "ticket", "value": '"priority": "high"'}
    assert _result(check, {"ticket": {"priority": "high", "tags": ["café"]}})[0] is True


def test_contains__numbers_read_as_text() -> None:
    check = {"name": "n", "type": "contains", "target": "total", "value": "42"}
    assert _result(check, {"total": 1425})[0] is True


def test_equals__null_state_variable_reads_as_empty_text() -> None:
    check = {"name": "n", "type": "equals", "target": "category", "value": ""}
    assert _result(check, {"category": None}) == (True, "'category' equals ''")


# equals -------------------------------------------------------------------------


def test_equals__folds_case_reference_example() -> None:
    check = {"name": "routed to billing", "type": "equals", "target": "category", "value": "billing"}
    assert _result(check, {"category": "Billing"}) == (True, "'category' equals 'billing'")


def test_equals__case_sensitive_reference_example() -> None:
    check = {
        "name": "routed to billing (strict)",
        "type": "equals",
        "target": "category",
        "value": "billing",
        "case_sensitive": True,
    }
    assert _result(check, {"category": "Billing"}) == (False, "'category' does not equal 'billing'")


def test_equals__is_exact_not_a_substring_match() -> None:
    check = {"name": "n", "type": "equals", "target": "category", "value": "billing"}
    assert _result(check, {"category": "billing "}) == (False, "'category' does not equal 'billing'")


# regex ---------------------------------------------------------------------------


def test_regex__reference_example() -> None:
    check = {
        "name": "well-formed order id",
        "type": "regex",
        "target": "order_id",
        "value": "^[A-Z]{2}[0-9]{6}$",
    }
    assert _result(check, {"order_id": "GB204815"}) == (True, "'order_id' matches /^[A-Z]{2}[0-9]{6}$/")


def test_regex__failure_detail() -> None:
    check = {"name": "n", "type": "regex", "target": "order_id", "value": "^[A-Z]{2}[0-9]{6}$"}
    assert _result(check, {"order_id": "GB2048"}) == (False, "'order_id' does not match /^[A-Z]{2}[0-9]{6}$/")


def test_regex__is_searched_not_anchored() -> None:
    check = {"name": "n", "type": "regex", "target": "draft_reply", "value": r"refund\b"}
    assert _result(check, {"draft_reply": REPLY})[0] is True


def test_regex__runs_as_written_ignoring_case_sensitive_flag() -> None:
    check = {"name": "n", "type": "regex", "target": "order_id", "value": "^[A-Z]{2}[0-9]{6}$"}
    assert _result(check, {"order_id": "gb204815"})[0] is False
    assert _result({**check, "value": "(?i)^[A-Z]{2}[0-9]{6}$"}, {"order_id": "gb204815"})[0] is True


def test_regex__catastrophic_pattern_does_not_hang() -> None:
    check = {"name": "n", "type": "regex", "target": "s", "value": "(a+)+$"}
    assert _result(check, {"s": "a" * 30 + "!"}) == (False, "'s' does not match /(a+)+$/")


def test_regex__missing_target_is_annotated() -> None:
    check = {"name": "n", "type": "regex", "target": "order_id", "value": "^$"}
    assert _result(check, {}) == (True, "'order_id' matches /^$/ (no 'order_id' in output)")


# max_cost_usd & max_duration_ms ---------------------------------------------------


def test_max_cost_usd__reference_example() -> None:
    check = {"name": "under 5 cents", "type": "max_cost_usd", "value": 0.05}
    assert _result(check, build_context({}, {}, 0.0035, 4210)) == (True, "cost_usd 0.0035 <= 0.05")


def test_max_cost_usd__over_budget() -> None:
    check = {"name": "under 5 cents", "type": "max_cost_usd", "value": 0.05}
    assert _result(check, build_context({}, {}, 0.07, 4210)) == (False, "cost_usd 0.07 > 0.05")


def test_max_cost_usd__equal_to_the_limit_passes() -> None:
    check = {"name": "n", "type": "max_cost_usd", "value": 0.05}
    assert _result(check, build_context({}, {}, 0.05, 1)) == (True, "cost_usd 0.05 <= 0.05")


def test_max_cost_usd__hides_float_noise_from_summed_costs() -> None:
    cost = 0.001 + 0.0025  # 0.0035000000000000005
    check = {"name": "n", "type": "max_cost_usd", "value": 0.05}
    assert _result(check, build_context({}, {}, cost, 1)) == (True, "cost_usd 0.0035 <= 0.05")


def test_max_cost_usd__ignores_target() -> None:
    check = {"name": "n", "type": "max_cost_usd", "target": "draft_reply", "value": 0.05}
    assert _result(check, build_context({"draft_reply": REPLY}, {}, 0.0035, 1)) == (
        True,
        "cost_usd 0.0035 <= 0.05",
    )


def test_max_duration_ms__reference_example() -> None:
    check = {"name": "under 8 seconds", "type": "max_duration_ms", "value": 8000}
    assert _result(check, build_context({}, {}, 0.0035, 4210)) == (True, "duration_ms 4210 <= 8000")


def test_max_duration_ms__too_slow() -> None:
    check = {"name": "under 8 seconds", "type": "max_duration_ms", "value": 8000}
    assert _result(check, build_context({}, {}, 0.0035, 9000)) == (False, "duration_ms 9000 > 8000")


def test_max_duration_ms__metric_missing_fails_plainly() -> None:
    check = {"name": "n", "type": "max_duration_ms", "value": 8000}
    assert _result(check, {}) == (False, "duration_ms is not available")


# expression ---------------------------------------------------------------------


def test_expression__reference_example_held() -> None:
    check = {
        "name": "substantial reply, on budget",
        "type": "expression",
        "value": "len(draft_reply) > 40 and cost_usd <= 0.05",
    }
    reply = "We'll process your refund today; expect it within 5 days."
    assert _result(check, build_context({"draft_reply": reply}, {}, 0.0035, 4210)) == (
        True,
        "expression held",
    )


def test_expression__reference_example_did_not_hold() -> None:
    check = {
        "name": "echoes requested locale",
        "type": "expression",
        "value": "input.get('locale') == 'en-US'",
    }
    context = build_context({}, {"ticket": "double charged"}, 0.0035, 4210)
    assert _result(check, context) == (False, "expression did not hold")


def test_expression__reference_example_raising_check_fails() -> None:
    check = {"name": "typo'd variable", "type": "expression", "value": "reploy != ''"}
    context = build_context({"reply": REPLY}, {}, 0.0035, 4210)
    assert _result(check, context) == (False, "expression error: Unknown variable 'reploy'")


def test_expression__sdk_example() -> None:
    check = {"name": "no error leaked", "type": "expression", "value": "'error' not in draft_reply.lower()"}
    assert _result(check, build_context({"draft_reply": REPLY}, {}, 0, 0)) == (True, "expression held")
    leaked = build_context({"draft_reply": "Internal ERROR: boom"}, {}, 0, 0)
    assert _result(check, leaked) == (False, "expression did not hold")


def test_expression__runtime_error_becomes_failed_result() -> None:
    check = {"name": "n", "type": "expression", "value": "1 / (duration_ms - duration_ms) > 0"}
    assert _result(check, build_context({}, {}, 0, 10)) == (False, "expression error: division by zero")


def test_expression__reads_state_alias_and_input() -> None:
    check = {"name": "n", "type": "expression", "value": "state['category'] == 'refund' and input['n'] == 2"}
    assert _result(check, build_context({"category": "refund"}, {"n": 2}, 0, 0)) == (True, "expression held")


# the evaluation context -------------------------------------------------------------


def test_build_context__state_at_top_level_with_metrics_input_and_alias() -> None:
    state = {"draft_reply": REPLY}
    context = build_context(state, {"ticket": "t"}, 0.0035, 4210)
    assert context == {
        "draft_reply": REPLY,
        "cost_usd": 0.0035,
        "duration_ms": 4210,
        "input": {"ticket": "t"},
        "state": state,
    }


def test_build_context__reserved_names_win_over_state_variables() -> None:
    state = {"cost_usd": "free", "input": "shadow"}
    context = build_context(state, {}, 0.01, 5)
    assert (context["cost_usd"], context["input"], context["state"]["input"]) == (0.01, {}, "shadow")


# results and the evals summary -----------------------------------------------------

REFERENCE_CHECKS = [
    {"id": "chk_a1b2c3d4e5", "name": "Mentions the refund", "type": "contains",
     "target": "draft_reply", "value": "refund"},
    {"id": "chk_11223344ff", "name": "No internal error leaked", "type": "not_contains",
     "target": "draft_reply", "value": "Traceback"},
    {"id": "chk_55667788ee", "name": "Category is known", "type": "regex",
     "target": "category", "value": "^(billing|refund|technical)$"},
    {"id": "chk_f6a7b8c9d0", "name": "Under budget", "type": "max_cost_usd", "value": 0.05},
    {"id": "chk_99aabbccdd", "name": "Under 8 seconds", "type": "max_duration_ms", "value": 8000},
    {"id": "chk_00ffeeddcc", "name": "Reply is substantial", "type": "expression",
     "value": "len(draft_reply) > 40"},
]  # fmt: skip

REFERENCE_RESULTS = [
    {"id": "chk_a1b2c3d4e5", "name": "Mentions the refund", "type": "contains",
     "passed": True, "detail": "'draft_reply' contains 'refund'"},
    {"id": "chk_11223344ff", "name": "No internal error leaked", "type": "not_contains",
     "passed": True, "detail": "'draft_reply' does not contain 'Traceback'"},
    {"id": "chk_55667788ee", "name": "Category is known", "type": "regex",
     "passed": True, "detail": "'category' matches /^(billing|refund|technical)$/"},
    {"id": "chk_f6a7b8c9d0", "name": "Under budget", "type": "max_cost_usd",
     "passed": True, "detail": "cost_usd 0.0035 <= 0.05"},
    {"id": "chk_99aabbccdd", "name": "Under 8 seconds", "type": "max_duration_ms",
     "passed": True, "detail": "duration_ms 4210 <= 8000"},
    {"id": "chk_00ffeeddcc", "name": "Reply is substantial", "type": "expression",
     "passed": False, "detail": "expression did not hold"},
]  # fmt: skip


def test_evaluate_checks__reproduces_reference_results() -> None:
    checks = validate_checks(REFERENCE_CHECKS)
    context = build_context(
        {"draft_reply": REPLY, "category": "refund"}, {"ticket": "double charged"}, 0.0035, 4210
    )
    evals = evaluate_checks(checks, context)
    assert evals["results"] == REFERENCE_RESULTS
    # The reference's summary says "passed": 4, but its own results list five passes;
    # passed is always the count of passing results.
    assert (evals["passed"], evals["total"]) == (5, 6)


def test_evaluate_checks__summary_shape() -> None:
    evals = evaluate_checks(validate_checks(REFERENCE_CHECKS[:1]), {"draft_reply": "nothing"})
    assert evals == {
        "passed": 0,
        "total": 1,
        "results": [
            {"id": "chk_a1b2c3d4e5", "name": "Mentions the refund", "type": "contains",
             "passed": False, "detail": "'draft_reply' does not contain 'refund'"}
        ],
    }  # fmt: skip


def test_evaluate_checks__no_checks() -> None:
    assert evaluate_checks([], {}) == {"passed": 0, "total": 0, "results": []}


def test_evaluate_checks__repeated_scoring_gives_the_same_results() -> None:
    context = build_context({"draft_reply": REPLY, "category": "refund"}, {}, 0.0035, 4210)
    first = evaluate_checks(REFERENCE_CHECKS, context)
    assert evaluate_checks(REFERENCE_CHECKS, context) == first


def test_evaluate_checks__cache_keeps_equal_hashing_values_apart() -> None:
    # 1, 1.0 and True hash alike; a cached compile of one must not answer for another.
    number = {"name": "n", "type": "max_duration_ms", "value": 1}
    boolean = {"name": "n", "type": "max_duration_ms", "value": True}
    assert evaluate_check(number, {"duration_ms": 0})["detail"] == "duration_ms 0 <= 1"
    assert evaluate_check(boolean, {"duration_ms": 0})["detail"] == (
        "invalid check: 'max_duration_ms' needs a numeric value"
    )


def test_evaluate_check__never_raises_on_a_broken_check() -> None:
    assert evaluate_check("not a check", {}) == {  # type: ignore[arg-type]
        "id": "", "name": "", "type": "", "passed": False, "detail": "invalid check: must be an object",
    }  # fmt: skip


def test_evaluate_check__invalid_stored_check_fails_with_its_reason() -> None:
    check = {"id": "chk_0123456789", "name": "n", "type": "regex", "target": "t", "value": "("}
    assert evaluate_check(check, {"t": "x"}) == {
        "id": "chk_0123456789", "name": "n", "type": "regex", "passed": False,
        "detail": "invalid check: invalid regex (missing ), unterminated subpattern at position 0)",
    }  # fmt: skip


def test_evaluate_check__unhashable_check_values_still_evaluate() -> None:
    check = {"name": "n", "type": "contains", "target": "t", "value": ["not", "a", "string"]}
    assert evaluate_check(check, {"t": "x"})["detail"] == "invalid check: 'contains' needs a string value"


def test_regex__non_ascii_and_unpaired_surrogates_are_searched_safely() -> None:
    check = {"name": "n", "type": "regex", "target": "t", "value": "caf.$"}
    assert _result(check, {"t": "un café"})[0] is True
    assert _result(check, {"t": "\ud800 café"})[0] is True
